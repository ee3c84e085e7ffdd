"""Bots: legal moves on random positions of every variant, greedy takes a largest piece, the corner score is exact,
mobility maximises the mobility balance, and batched choices equal unbatched ones."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import FULL_BOARDS, SMALL_BOARD_VARIANTS, make_env

import blokus_jax
from blokus_agents.players.bots import BOTS, get_bot
from blokus_agents.search.playouts import _CornerKernels, centre_move_scores, corner_scores
from blokus_jax.errors import VariantError

BATCH = 4
DEPTHS = (0, 3, 9, 20, 45)


def random_positions(env, seed: int = 0):
    """States after ``DEPTHS`` uniformly random steps of ``BATCH`` games, stacked into one batch."""
    step = jax.jit(jax.vmap(env.step))
    sample = jax.jit(jax.vmap(env.sample_action))
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(seed), BATCH))
    collected = []
    for t in range(max(DEPTHS) + 1):
        if t in DEPTHS:
            collected.append(states)
        states = step(states, sample(jax.random.split(jax.random.key(seed * 1000 + t), BATCH), states))
    return jax.tree.map(lambda *xs: jnp.concatenate(xs), *collected)


_CACHE: dict[str, tuple] = {}


def env_and_positions(name: str):
    """One env and its random positions per variant for the whole module (jit caches live on the env)."""
    if name not in _CACHE:
        env = make_env(name)
        _CACHE[name] = (env, random_positions(env))
    return _CACHE[name]


#: Every colour and player structure: the registered variants but the two- and three-player Classic boards, whose
#: structures are played on 8x8 boards (``classic`` keeps its full board, whose positions the score tests use).
VARIANTS = [n for n in blokus_jax.variant_names() if n == "classic" or n not in FULL_BOARDS]
VARIANTS += SMALL_BOARD_VARIANTS


@pytest.fixture(scope="module", params=VARIANTS)
def env_positions(request):
    return env_and_positions(request.param)


def test_bots_play_only_legal_moves_on_every_variant(env_positions):
    env, states = env_positions
    live = ~np.asarray(states.terminated | states.truncated)
    assert live.sum() >= 2 * BATCH
    # small lookahead settings keep compile time down on full boards; defaults are covered on `simple` below
    options = {"mobility": {"k": 4}, "minimax": {"k": 4, "depth": 1}}
    bots = {n: get_bot(n, env, **options.get(n, {})) for n in BOTS if n != "minimax" or env.num_players == 2}
    choose_all = jax.jit(jax.vmap(lambda key, state: {n: bot(key, state) for n, bot in bots.items()}))
    chosen = choose_all(jax.random.split(jax.random.key(7), live.shape[0]), states)
    legal_mask = np.asarray(states.legal_action_mask)
    for name, actions in chosen.items():
        actions = np.asarray(actions)
        assert actions.dtype == np.int32, name
        ok = legal_mask[np.arange(len(actions)), actions]
        assert ok[live].all(), f"{name} played an illegal move on {env.variant.name}"


def test_greedy_picks_a_largest_piece(env_positions):
    env, states = env_positions
    bot = jax.jit(jax.vmap(get_bot("greedy", env)))
    sizes = env.tables.orientation_size
    cells = env.board_shape[0] * env.board_shape[1]
    mask = np.asarray(states.legal_action_mask)[:, :-1]
    live = ~np.asarray(states.terminated | states.truncated)
    for seed in range(3):
        actions = np.asarray(bot(jax.random.split(jax.random.key(seed), mask.shape[0]), states))
        for i in np.flatnonzero(live):
            if not mask[i].any():
                assert actions[i] == env.pass_action
                continue
            best = sizes[np.flatnonzero(mask[i]) // cells].max()
            assert sizes[actions[i] // cells] == best


def _np_corners(board: np.ndarray, color: int, start_cells) -> np.ndarray:
    """Reference corner cells of ``color``: empty, not edge-adjacent to it, diagonal to it (start cells if none)."""
    own = np.pad(board == color + 1, 1)
    if not own.any():
        out = np.zeros(board.shape, bool)
        for r, c in start_cells:
            out[r, c] = board[r, c] == 0
        return out
    inner = (slice(1, -1), slice(1, -1))
    edge = own[:-2, 1:-1] | own[2:, 1:-1] | own[1:-1, :-2] | own[1:-1, 2:]
    diag = own[:-2, :-2] | own[:-2, 2:] | own[2:, :-2] | own[2:, 2:]
    return diag & ~edge & ~own[inner] & (board == 0)


@pytest.mark.parametrize("variant", ["duo", "classic"])
def test_corner_score_equals_change_in_corner_balance(variant):
    env, states = env_and_positions(variant)
    kernels = _CornerKernels(env)
    scores = np.asarray(jax.jit(jax.vmap(lambda s: corner_scores(env, s, kernels)))(states)).reshape(
        len(states.step_count), -1
    )
    step = jax.jit(env.step)
    rng = np.random.default_rng(0)
    owner = env.tables.color_owner
    checked = 0
    for i in range(len(states.step_count)):
        state = jax.tree.map(lambda x: x[i], states)
        mask = np.asarray(state.legal_action_mask)[:-1]
        if not mask.any() or int(state.pieces_placed[int(state.current_color)]) == 0:
            continue
        me = int(state.current_color)
        for a in rng.choice(np.flatnonzero(mask), size=min(5, int(mask.sum())), replace=False):
            before, after = np.asarray(state.board), np.asarray(step(state, int(a)).board)
            expected = 0
            for c in range(env.num_colors):
                starts = env.variant.start_cells[c]
                delta = _np_corners(after, c, starts).sum() - _np_corners(before, c, starts).sum()
                if c == me:
                    expected += delta
                elif owner[c] >= 0:
                    expected += -delta if owner[c] != int(state.current_player) else delta
            assert scores[i, a] == expected, (variant, i, int(a))
            checked += 1
    assert checked >= 20


def _np_legal_count(env, board: np.ndarray, color: int, remaining: np.ndarray) -> int:
    """Brute-force count of legal placements of ``color`` (independent of the packed-bit rules)."""
    rows, cols = env.board_shape
    corners = _np_corners(board, color, env.variant.start_cells[color])
    own = np.pad(board == color + 1, 1)
    blocked = (board != 0) | own[:-2, 1:-1] | own[2:, 1:-1] | own[1:-1, :-2] | own[1:-1, 2:]
    count = 0
    for o, cells in enumerate(env.tables.orientation_cells):
        if remaining[env.tables.orientation_piece[o]] == 0:
            continue
        h, w = cells.max(axis=0) + 1
        window = lambda plane, r, c: plane[r : r + rows - h + 1, c : c + cols - w + 1]  # noqa: E731
        hits_blocked = np.any([window(blocked, r, c) for r, c in cells], axis=0)
        hits_corner = np.any([window(corners, r, c) for r, c in cells], axis=0)
        count += int((~hits_blocked & hits_corner).sum())
    return count


def test_mobility_with_all_candidates_maximises_mobility_balance():
    env, states = env_and_positions("simple")
    bot = jax.jit(jax.vmap(get_bot("mobility", env, k=env.num_actions - 1)))
    actions = np.asarray(bot(jax.random.split(jax.random.key(0), len(states.step_count)), states))
    step = jax.jit(env.step)
    checked = 0
    for i in range(0, 4 * BATCH, 2):
        state = jax.tree.map(lambda x: x[i], states)
        mask = np.asarray(state.legal_action_mask)[:-1]
        if not mask.any():
            continue
        me = int(state.current_color)

        def balance(a):
            child = step(state, int(a))
            board, remaining = np.asarray(child.board), np.asarray(child.remaining)
            counts = [_np_legal_count(env, board, c, remaining[c]) for c in range(env.num_colors)]
            return counts[me] - sum(counts) + counts[me]

        values = {int(a): balance(a) for a in np.flatnonzero(mask)}
        assert values[int(actions[i])] == max(values.values())
        checked += 1
    assert checked >= 4


@pytest.fixture(scope="module")
def simple_positions():
    return env_and_positions("simple")


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n == "minimax" else n for n in sorted(BOTS)]
)
def test_batched_choice_equals_unbatched(simple_positions, name):
    env, states = simple_positions
    bot = get_bot(name, env)
    keys = jax.random.split(jax.random.key(3), len(states.step_count))
    batched = np.asarray(jax.jit(jax.vmap(bot))(keys, states))
    single = jax.jit(bot)
    for i in range(0, len(batched), 3):
        assert int(single(keys[i], jax.tree.map(lambda x: x[i], states))) == batched[i], (name, i)


def test_bots_break_ties_with_the_key(simple_positions):
    env, states = simple_positions
    start = jax.tree.map(lambda x: x[0], states)
    bot = jax.jit(get_bot("greedy", env))
    choices = {int(bot(jax.random.key(s), start)) for s in range(12)}
    assert len(choices) > 1


def test_minimax_rejects_more_than_two_players_and_bad_depth():
    with pytest.raises(VariantError, match="two-player"):
        get_bot("minimax", blokus_jax.make("classic"))
    with pytest.raises(VariantError, match="depth"):
        get_bot("minimax", blokus_jax.make("simple"), depth=3)


def test_unknown_bot_names_the_valid_ones():
    with pytest.raises(ValueError, match="valid bots are"):
        get_bot("alphazero", blokus_jax.make("simple"))


def _brute_centre_scores(env, state) -> dict[int, float]:
    """The centre-approach score of every legal placement, from the placements' cells one at a time."""
    rows, cols = env.board_shape
    centre = np.array([(rows - 1) / 2, (cols - 1) / 2])
    board = np.asarray(state.board)
    own = np.argwhere(board == int(state.current_color) + 1)
    d_own = np.linalg.norm(own - centre, axis=1).min() if len(own) else np.hypot(rows, cols) / 2
    legal = np.flatnonzero(np.asarray(state.legal_action_mask[: env.pass_action]))
    return {int(a): max(0.0, d_own - np.linalg.norm(env.action_cells(int(a)) - centre, axis=1).min()) for a in legal}


@pytest.mark.parametrize("variant", ["duo", "classic"])
def test_centre_score_is_the_approach_to_the_centre(variant):
    env, states = env_and_positions(variant)
    scores = jax.jit(jax.vmap(centre_move_scores(env)))(states)
    for i in (0, BATCH, 2 * BATCH + 1):  # the start, 3 and 9 random moves in
        state = jax.tree.map(lambda x: x[i], states)
        expected = _brute_centre_scores(env, state)
        got = np.asarray(scores[i])
        np.testing.assert_allclose([got[a] for a in expected], list(expected.values()), atol=1e-5)


def test_centre_score_fades_once_the_centre_is_reached():
    env = blokus_jax.make("duo")
    score = jax.jit(centre_move_scores(env))
    state = env.init()
    first = np.asarray(score(state))
    reach = env.action_from_cells([(4, 4), (4, 5), (4, 6), (5, 6), (6, 6)])  # covers (6, 6), next to the centre
    short = env.action_from_cells([(4, 4)])  # the monomino on the start point
    assert first[reach] > first[short] > 0
    state = env.step(state, reach)
    state = env.step(state, env.sample_action(jax.random.key(0), state))  # the opponent's reply
    assert int(state.current_color) == 0
    after = np.asarray(score(state))
    legal = np.asarray(state.legal_action_mask[: env.pass_action])
    assert legal.any() and np.all(after[legal] == 0.0)  # no move gets closer than (6, 6) already is
