"""The diagonal reflection (:mod:`blokus_jax.symmetry`): where it is a symmetry, a game replayed with every action
reflected stays legal move for move, its board is the transpose, its legal actions are the reflected ones and its
observations are the reflected observations."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blokus_jax
from blokus_jax.symmetry import is_reflection_symmetric, reflect_legal_bits, reflect_observation, reflected_actions


@pytest.fixture(scope="module")
def duo():
    return blokus_jax.make("duo")


@pytest.fixture(scope="module")
def jitted(duo):
    return jax.jit(duo.step), jax.jit(duo.sample_action), jax.jit(duo.observe)


def test_symmetric_variants():
    assert [n for n in blokus_jax.variant_names() if is_reflection_symmetric(blokus_jax.make(n).variant)] == [
        "duo",
        "junior",
        "simple",
    ]
    with pytest.raises(ValueError, match="not a symmetry"):
        reflected_actions(blokus_jax.make("classic").variant)


def test_the_table_is_an_involution_that_keeps_the_piece(duo):
    table = reflected_actions(duo.variant)
    assert table.shape == (duo.num_actions,)
    assert (table[table] == np.arange(duo.num_actions)).all()
    assert table[duo.pass_action] == duo.pass_action
    placements = np.arange(duo.pass_action)
    orientation = duo.tables.split_action(placements)[0]
    assert (
        duo.tables.orientation_piece[orientation]
        == duo.tables.orientation_piece[duo.tables.split_action(table[:-1])[0]]
    ).all()


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**31 - 1))
def test_a_reflected_game_is_the_same_game(duo, jitted, seed):
    step, sample, observe = jitted
    table = reflected_actions(duo.variant)
    state = duo.init(jax.random.key(seed))
    mirror = duo.init(jax.random.key(seed))
    for t in range(40):
        if bool(state.terminated):
            break
        mask, mirrored_mask = np.asarray(state.legal_action_mask), np.asarray(mirror.legal_action_mask)
        assert (mirrored_mask[table] == mask).all(), t
        assert (np.asarray(reflect_legal_bits(duo.variant, state.legal_bits)) == np.asarray(mirror.legal_bits)).all()
        assert (np.asarray(mirror.board) == np.asarray(state.board).T).all(), t
        obs, mirrored_obs = observe(state), reflect_observation(observe(mirror))
        for a, b in zip(jax.tree.leaves(obs), jax.tree.leaves(mirrored_obs)):
            assert (np.asarray(a) == np.asarray(b)).all(), t
        action = sample(jax.random.key(seed + t), state)
        state, mirror = step(state, action), step(mirror, table[int(action)])
        assert (np.asarray(state.rewards) == np.asarray(mirror.rewards)).all()
    assert (np.asarray(state.scores) == np.asarray(mirror.scores)).all()
