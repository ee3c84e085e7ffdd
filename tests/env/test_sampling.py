"""The popcount sampler: every legal action reachable, frequencies uniform, bit selection exact."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import blokus_jax
from blokus_jax import rules


@pytest.fixture(scope="module")
def env():
    return blokus_jax.make("simple")


@pytest.fixture(scope="module")
def sample_many(env):
    return jax.jit(jax.vmap(env.sample_action, in_axes=(0, None)))


def _position_after(env, moves: int):
    state = env.init()
    key = jax.random.key(123)
    for _ in range(moves):
        key, sub = jax.random.split(key)
        state = env.step(state, env.sample_action(sub, state))
    return state


@pytest.mark.parametrize("moves", [0, 4])
def test_sampler_is_uniform_over_legal_actions(env, sample_many, moves):
    state = _position_after(env, moves)
    legal = np.flatnonzero(np.asarray(state.legal_action_mask))
    assert len(legal) > 3
    n = 400 * len(legal)
    actions = np.asarray(sample_many(jax.random.split(jax.random.key(moves), n), state))
    assert np.isin(actions, legal).all()
    counts = np.bincount(np.searchsorted(legal, actions), minlength=len(legal))
    assert (counts > 0).all()
    expected = n / len(legal)
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    dof = len(legal) - 1
    assert chi2 < dof + 6 * np.sqrt(2 * dof), (chi2, dof)  # ~6 sigma: fails only for a biased sampler


def test_sampler_passes_only_when_nothing_is_legal(env):
    bits = jnp.zeros((env.num_orientations, env.board_shape[0]), jnp.uint32)
    assert int(rules.sample_from_bits(jax.random.key(0), bits, env.board_shape[1], env.pass_action)) == env.pass_action


def test_nth_set_bit_matches_numpy():
    rng = np.random.default_rng(0)
    words = rng.integers(1, 2**32, size=300, dtype=np.uint64).astype(np.uint32)
    ranks = np.array([rng.integers(0, bin(int(w)).count("1")) for w in words])
    got = np.asarray(jax.jit(jax.vmap(rules._nth_set_bit))(jnp.asarray(words), jnp.asarray(ranks)))
    want = [np.flatnonzero([(int(w) >> b) & 1 for b in range(32)])[k] for w, k in zip(words, ranks)]
    np.testing.assert_array_equal(got, want)
