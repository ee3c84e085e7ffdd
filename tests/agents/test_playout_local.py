"""The ``local`` playout policy (Pentobi-style: answer the opponent's last piece nearby, pieces drawn in proportion to
``3 ** size``) and the weighted sampling under it (:func:`blokus_agents.search.playouts.sample_weighted`): the draws
follow the weights, the preference for local placements holds, and whole playouts end with consistent scores."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import blokus_jax
from blokus_agents.search import playouts
from blokus_agents.search.gumbel import ATTACH_BASE, LOCAL_SIZE_BASE, playout_value
from blokus_jax import rules


@pytest.fixture(scope="module")
def duo():
    return blokus_jax.make("duo")


@pytest.fixture(scope="module")
def opening(duo):
    """A Duo position after four random moves (both colours have pieces on the board)."""
    state = duo.init(jax.random.key(0))
    step, sample = jax.jit(duo.step), jax.jit(duo.sample_action)
    for t in range(4):
        state = step(state, sample(jax.random.key(10 + t), state))
    return state


def test_weighted_draws_follow_the_weights(duo, opening):
    """Each orientation is drawn in proportion to (its legal placements) x (its weight), and every draw is legal."""
    bits = opening.legal_bits
    counts = np.asarray(rules.popcount(bits).sum(-1))
    weights = np.ones(duo.tables.num_orientations, np.float32)
    heavy = np.flatnonzero(counts)[:2]
    weights[heavy] = [50.0, 200.0]
    draw = jax.jit(jax.vmap(lambda k: playouts.sample_weighted(k, bits, jnp.asarray(weights), 14, duo.pass_action)))
    actions = np.asarray(draw(jax.random.split(jax.random.key(1), 20_000)))
    mask = np.asarray(opening.legal_action_mask)
    assert mask[actions].all()
    orientation = duo.tables.split_action(actions)[0]
    expected = counts * weights / (counts * weights).sum()
    seen = np.bincount(orientation, minlength=len(counts)) / len(actions)
    for o in heavy:
        assert abs(seen[o] - expected[o]) < 4 * np.sqrt(expected[o] * (1 - expected[o]) / len(actions)) + 1e-3
    assert seen[counts == 0].sum() == 0


def test_weighted_draw_of_nothing_is_the_pass(duo):
    empty = jnp.zeros((duo.tables.num_orientations, 14), jnp.uint32)
    weights = jnp.ones((duo.tables.num_orientations,), jnp.float32)
    assert int(playouts.sample_weighted(jax.random.key(0), empty, weights, 14, duo.pass_action)) == duo.pass_action


def test_size_weights_prefer_large_pieces_without_excluding_small_ones(duo, opening):
    """``size_base=3``: a 5-square placement is 3x as likely as a 4-square one placement for placement; the greedy
    rule would never play the 4-square pieces at all."""
    bits = opening.legal_bits
    move = jax.jit(jax.vmap(lambda k: playouts.playout_move(duo.tables, k, bits, True, None, LOCAL_SIZE_BASE)))
    actions = np.asarray(move(jax.random.split(jax.random.key(2), 20_000)))
    sizes = duo.tables.orientation_size[duo.tables.split_action(actions)[0]]
    per_size = np.asarray(rules.popcount(bits).sum(-1))
    legal_by_size = {s: per_size[duo.tables.orientation_size == s].sum() for s in (4, 5)}
    ratio = (sizes == 5).sum() / legal_by_size[5] / ((sizes == 4).sum() / legal_by_size[4])
    assert 2.5 < ratio < 3.6, ratio


def test_local_preference_plays_a_covering_placement_when_there_is_one(duo, opening):
    """With ``covering`` given, the weighted draw keeps to the covering placements while there are any."""
    cells = jnp.zeros((14,), jnp.uint32).at[6].set(jnp.uint32(0b111111 << 4))  # a strip mid-board
    covering = opening.legal_bits & rules.covering_bits(duo.tables, cells)
    assert rules.has_placement(covering)
    move = jax.jit(jax.vmap(lambda k: playouts.playout_move(duo.tables, k, opening.legal_bits, True, covering, 3.0)))
    for action in np.asarray(move(jax.random.split(jax.random.key(3), 200))):
        placed = duo.action_cells(int(action))
        assert any(r == 6 and 4 <= c < 10 for r, c in placed), placed


def test_local_playouts_end_the_game_with_consistent_scores(duo, opening):
    def one(key):
        policy = playouts.PlayoutPolicy(greedy=True, local=True, size_base=LOCAL_SIZE_BASE)
        return playouts.playout(duo.tables, key, opening, policy)[0]

    remaining = np.asarray(jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(4), 32)))
    before = np.asarray(opening.remaining)
    assert (remaining >= 0).all() and (remaining <= before).all()
    assert (remaining.sum((1, 2)) < before.sum() - 10).all()  # every playout went on placing pieces
    assert len({r.tobytes() for r in remaining}) > 1  # and they differ


def test_block_and_local_are_exclusive():
    with pytest.raises(ValueError, match="exclusive"):
        playouts.PlayoutPolicy(block=True, local=True)


def test_local_playout_values_are_results(duo, opening):
    value = jax.jit(playout_value(duo, 4, "local", 0.5))(jax.random.key(5), opening, jnp.int32(0))
    assert -1.0 <= float(value) <= 1.0


def test_orientation_corners_count_the_shapes_diagonal_only_neighbours(duo):
    """The monomino and the straight pieces have 4 corner cells, the X pentomino 8, the V pentomino 5; every
    orientation of a piece has the same count."""
    tables = duo.tables
    by_cells = {
        frozenset(map(tuple, c.tolist())): n for c, n in zip(tables.orientation_cells, tables.orientation_corners)
    }
    assert by_cells[frozenset({(0, 0)})] == 4
    assert by_cells[frozenset({(0, i) for i in range(5)})] == 4
    assert by_cells[frozenset({(0, 1), (1, 0), (1, 1), (1, 2), (2, 1)})] == 8
    assert by_cells[frozenset({(0, 0), (1, 0), (2, 0), (2, 1), (2, 2)})] == 5
    for piece in range(duo.variant.num_pieces):
        assert len(set(tables.orientation_corners[tables.orientation_piece == piece])) == 1


def test_attach_weights_favour_shapes_with_more_corners(duo):
    """``attach_base=1.8`` on top of ``size_base=3``: on the empty board, the X pentomino (8 corners) is drawn
    ``1.8 ** 4`` times as often per placement as the straight one (4 corners); without it, as often."""
    start = duo.init(jax.random.key(0))
    bits, tables = start.legal_bits, duo.tables
    per_orientation = np.asarray(rules.popcount(bits).sum(-1))
    shapes = {n: np.flatnonzero((tables.orientation_size == 5) & (tables.orientation_corners == n)) for n in (4, 8)}

    def rate(attach_base: float) -> float:
        move = jax.jit(
            jax.vmap(lambda k: playouts.playout_move(tables, k, bits, True, None, LOCAL_SIZE_BASE, attach_base))
        )
        drawn = tables.split_action(np.asarray(move(jax.random.split(jax.random.key(6), 40_000))))[0]
        per = {n: np.isin(drawn, o).sum() / per_orientation[o].sum() for n, o in shapes.items()}
        return per[8] / per[4]

    assert 0.7 < rate(0.0) < 1.4
    assert 1.8**4 * 0.75 < rate(ATTACH_BASE) < 1.8**4 * 1.3


def test_attach_playout_values_are_results(duo, opening):
    values = jax.jit(jax.vmap(lambda k: playout_value(duo, 2, "attach", 0.5)(k, opening, jnp.int32(0))))
    out = np.asarray(values(jax.random.split(jax.random.key(7), 8)))
    assert ((-1.0 <= out) & (out <= 1.0)).all() and len(set(out.tolist())) > 1
