"""Property tests: random games on small variants, checked step by step against the plain-Python reference rules.

Each hypothesis example draws a seed, plays a small batch of uniformly random games with one jitted, vmapped
``lax.scan`` per variant, replays each game alone to show that ``vmap`` changes nothing, and then checks every
position on the host: the legal mask equals :func:`reference.legal_placements` exactly, the sampled action is legal,
the board is the union of the placed pieces (no cell claimed twice), each piece obeys the edge and corner rules
against its own colour's earlier pieces, the turn passes to the next colour that has not passed, the game ends exactly
when the last colour passes, and the scores equal minus the unplaced squares plus the bonuses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference
from hypothesis import given, settings
from hypothesis import strategies as st

import blokus_jax as bj
from blokus_jax import Piece, Variant

BATCH = 3


def _custom_variant() -> Variant:
    """A 9x9 game for 3 players plus a shared colour, with a hexomino, duplicated pieces and two start cells."""
    pieces = (
        Piece("1", ((0, 0),)),
        Piece("V3", ((0, 0), (0, 1), (1, 0)), copies=2),
        Piece("S4", ((0, 0), (0, 1), (1, 1), (1, 2))),
        Piece("hex", ((0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (2, 3))),
    )
    starts = (((0, 0), (4, 4)), ((0, 8),), ((8, 8),), ((8, 0),))
    return Variant("custom_props", (9, 9), 4, ((0,), (1,), (2,)), starts, pieces, shared_color=3)


@dataclass(frozen=True)
class Runner:
    """A variant's env with its compiled game players: ``single(key)`` and ``batch(keys)`` return
    ``(trajectory, final_state)`` where the trajectory holds, per step, the state before it, the sampled action,
    whether ``env.is_legal`` accepted it and the legal mask."""

    env: bj.Env
    single: Callable
    batch: Callable


def _runner(env: bj.Env) -> Runner:
    # Every colour places each piece copy at most once and passes once, so this many steps end any game.
    length = env.num_colors * (int(env.tables.piece_copies.sum()) + 1) + 1

    def play(key: jax.Array):
        def body(carry, _):
            state, key = carry
            key, sub = jax.random.split(key)
            action = env.sample_action(sub, state)
            record = (state, action, env.is_legal(state, action), state.legal_action_mask)
            return (env.step(state, action), key), record

        (final, _), trajectory = jax.lax.scan(body, (env.init(), key), None, length)
        return trajectory, final

    return Runner(env, jax.jit(play), jax.jit(jax.vmap(play)))


@pytest.fixture(scope="module")
def runners() -> dict[str, Runner]:
    """One compiled runner per variant under test, built once for the module."""
    return {
        name: _runner(bj.make(variant))
        for name, variant in (("simple", "simple"), ("duo", "duo"), ("custom", _custom_variant()))
    }


def _assert_state_layout(env: bj.Env, state: bj.State, batch: tuple[int, ...]) -> None:
    rows, cols = env.board_shape
    c, p = env.num_colors, env.num_pieces
    chex.assert_shape(state.board, (*batch, rows, cols))
    chex.assert_type(state.board, jnp.int8)
    chex.assert_shape(state.remaining, (*batch, c, p))
    chex.assert_type(state.remaining, jnp.int8)
    chex.assert_shape([state.current_color, state.current_player, state.step_count, state.last_action], batch)
    chex.assert_type([state.current_color, state.current_player, state.step_count, state.last_action], jnp.int32)
    chex.assert_shape(state.rewards, (*batch, env.num_players))
    chex.assert_type(state.rewards, jnp.float32)
    chex.assert_shape([state.terminated, state.truncated], batch)
    chex.assert_type([state.terminated, state.truncated], bool)
    chex.assert_shape(state.scores, (*batch, c))
    chex.assert_type(state.scores, jnp.int32)
    chex.assert_shape(state.legal_action_mask, (*batch, env.num_actions))
    chex.assert_type(state.legal_action_mask, bool)


def _check_game(env: bj.Env, trajectory, final, placements_of) -> int:
    """Check one recorded game on the host against the reference rules; returns the number of placements."""
    variant = env.variant
    shapes = [piece.cells for piece in variant.pieces]
    sizes = [piece.size for piece in variant.pieces]
    copies = np.asarray([piece.copies for piece in variant.pieces])
    states, actions, accepted, masks = jax.device_get(trajectory)
    board = np.zeros(env.board_shape, np.int8)  # rebuilt from the moves alone
    placed = np.zeros((env.num_colors, env.num_pieces), np.int64)
    last_was_monomino = [False] * env.num_colors
    passed: set[int] = set()
    placements = 0
    for t in range(len(actions)):
        state = jax.tree.map(lambda leaf: leaf[t], states)
        if bool(state.terminated):
            break
        at = f"{variant.name} step {t}"
        color, action, mask = int(state.current_color), int(actions[t]), masks[t]
        assert color not in passed, at
        owner = variant.color_owner(color)  # a shared colour's k-th piece is placed by player k mod players
        assert int(state.current_player) == (owner if owner >= 0 else int(placed[color].sum()) % env.num_players), at
        np.testing.assert_array_equal(state.board, board, at)
        remaining = copies - placed[color]
        np.testing.assert_array_equal(state.remaining[color], remaining, at)
        first = not (board == color + 1).any()
        expected = reference.legal_placements(board, color, remaining, first, variant.start_cells[color], shapes)
        assert placements_of(env, mask) == expected, at
        assert bool(mask[env.pass_action]) == (not expected), at
        assert bool(accepted[t]) and bool(mask[action]), at
        if action == env.pass_action:
            passed.add(color)
        else:
            cells = [tuple(cell) for cell in env.action_cells(action).tolist()]
            own = {tuple(cell) for cell in np.argwhere(board == color + 1).tolist()}
            for r, c in cells:
                assert board[r, c] == 0, (at, "cell taken twice", (r, c))
                assert not any((r + dr, c + dc) in own for dr, dc in reference.EDGE_STEPS), (at, "own edge")
            if first:
                assert set(cells) & set(variant.start_cells[color]), (at, "first piece misses its start cell")
            else:
                assert any((r + dr, c + dc) in own for r, c in cells for dr, dc in reference.DIAGONAL_STEPS), (
                    at,
                    "no corner contact",
                )
            for r, c in cells:
                board[r, c] = color + 1
            piece = env.decode_action(action)[0]
            placed[color, piece] += 1
            last_was_monomino[color] = sizes[piece] == 1
            placements += 1
        after = jax.tree.map(lambda leaf: leaf[t + 1], states) if t + 1 < len(actions) else final
        expected_scores = [
            reference.standard_score(copies - placed[c], sizes, last_was_monomino[c], variant.bonus)
            for c in range(env.num_colors)
        ]
        np.testing.assert_array_equal(after.scores, expected_scores, at)
        np.testing.assert_array_equal(after.board, board, at)
        assert int(after.step_count) == t + 1 and int(after.last_action) == action, at
        # Turn order (blokus_jax.env docstring): the next colour in cyclic order that has not passed; the game ends
        # on the step in which the last colour passes, so every colour passes exactly once.
        candidates = [(color + k) % env.num_colors for k in range(1, env.num_colors + 1)]
        movers = [c for c in candidates if c not in passed]
        assert bool(after.terminated) == (not movers), at
        if movers:
            assert int(after.current_color) == movers[0], at
    else:
        raise AssertionError(f"{variant.name}: game did not terminate within {len(actions)} steps")
    assert bool(final.terminated) and not bool(final.truncated)
    np.testing.assert_array_equal(final.board, board)
    np.testing.assert_array_equal(
        env.player_scores(final), [sum(final.scores[c] for c in colors) for colors in variant.players_to_colors]
    )
    return placements


@pytest.mark.slow
@pytest.mark.parametrize("name", ["simple", "duo", "custom"])
@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_random_games_follow_the_reference_rules(runners, placements_of, name, seed):
    runner = runners[name]
    keys = jax.random.split(jax.random.key(seed), BATCH)
    trajectory, final = runner.batch(keys)
    _assert_state_layout(runner.env, final, (BATCH,))
    for i in range(BATCH):
        alone = runner.single(keys[i])
        chex.assert_trees_all_equal(alone, jax.tree.map(lambda leaf: leaf[i], (trajectory, final)))
        game = jax.tree.map(lambda leaf: leaf[i], (trajectory, final))
        _assert_state_layout(runner.env, game[1], ())
        assert _check_game(runner.env, *game, placements_of) > 0
