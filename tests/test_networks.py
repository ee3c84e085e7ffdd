"""The policy-value network: shapes, the centre-gather policy head, and masked sampling that is never illegal."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import blokus_jax
from agents.networks import (
    MASKED_LOGIT,
    centre_gather_table,
    make_network,
    masked_logits,
    orientation_centres,
    sample_masked,
)
from agents.policies import network_policy


@pytest.fixture(scope="module")
def simple_states():
    """A batch of 64 positions of `simple` reached by random play (a mix of openings, middle games and passes)."""
    env = blokus_jax.make("simple")
    step = jax.jit(jax.vmap(env.step_autoreset))
    sample = jax.jit(jax.vmap(env.sample_action))
    states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), 64))
    key = jax.random.key(1)
    for i in range(int(jax.random.randint(key, (), 5, 9))):
        states, _, _ = step(states, sample(jax.random.split(jax.random.fold_in(key, i), 64), states))
    # desynchronise the games so that the batch holds different phases
    keep = jnp.arange(64) % 3 == 0
    advanced, _, _ = step(states, sample(jax.random.split(jax.random.key(2), 64), states))
    return env, jax.tree.map(lambda a, b: jnp.where(keep.reshape((-1,) + (1,) * (a.ndim - 1)), a, b), states, advanced)


@pytest.mark.parametrize("variant", ["simple", "duo", "classic_2p"])
def test_network_outputs_one_logit_per_action_and_a_value(variant):
    env = blokus_jax.make(variant)
    net = make_network(env, channels=4, blocks=1, value_hidden=8)
    obs = env.observe(env.init())
    params = net.init(jax.random.key(0), obs)
    logits, value = net.apply(params, obs)
    assert logits.shape == (env.num_actions,) and value.shape == ()
    batched = jax.tree.map(lambda x: jnp.stack([x, x, x]), obs)
    logits3, value3 = net.apply(params, batched)
    assert logits3.shape == (3, env.num_actions) and value3.shape == (3,)
    np.testing.assert_allclose(logits3[1], logits, rtol=1e-5, atol=1e-5)
    assert bool(jnp.all(logits[-1] == 0.0))  # the pass never competes with a placement


def test_gather_table_reads_each_placement_at_its_bounding_box_centre():
    env = blokus_jax.make("duo")
    rows, cols = env.board_shape
    centres = orientation_centres(env)
    table, pad = centre_gather_table(centres, rows, cols)
    assert table.shape == (env.num_actions - 1,) and pad == 2  # pentominoes: 5-cell boxes, centre offset 2
    rng = np.random.default_rng(0)
    for action in rng.integers(0, env.num_actions - 1, 200):
        o, rest = divmod(int(action), rows * cols)
        r, c = divmod(rest, cols)
        cell, channel = divmod(int(table[action]), env.num_orientations)
        pr, pc = divmod(cell, cols + pad)
        assert channel == o and (pr, pc) == (r + centres[o][0], c + centres[o][1])
    # a legal placement's centre cell is one of its bounding-box cells, inside the board
    legal = np.flatnonzero(np.asarray(env.init().legal_action_mask)[:-1])
    for action in legal:
        cell = int(table[action]) // env.num_orientations
        assert cell // (cols + pad) < rows and cell % (cols + pad) < cols


def test_masked_sampling_never_picks_an_illegal_action(simple_states):
    env, states = simple_states
    mask = states.legal_action_mask
    assert bool(jnp.all(mask.any(-1)))
    # adversarial logits: illegal actions get the largest raw logits
    logits = jnp.where(mask, -30.0, 30.0) + jax.random.normal(jax.random.key(3), mask.shape)
    keys = jax.random.split(jax.random.key(4), 200)
    actions, log_probs = jax.vmap(lambda k: sample_masked(k, logits, mask))(keys)
    legal = jax.vmap(lambda a: jax.vmap(env.is_legal)(states, a))(actions)
    assert bool(jnp.all(legal))
    assert bool(jnp.all(log_probs <= 0.0)) and bool(jnp.all(jnp.isfinite(log_probs)))
    # states with one legal action (forced passes) sample it with log-probability 0
    forced = mask.sum(-1) == 1
    np.testing.assert_allclose(np.asarray(log_probs)[:, np.asarray(forced)], 0.0, atol=1e-6)


def test_masked_logits_remove_illegal_actions_from_the_distribution(simple_states):
    _, states = simple_states
    mask = states.legal_action_mask
    logits = jax.random.normal(jax.random.key(5), mask.shape) * 10
    log_probs = jax.nn.log_softmax(masked_logits(logits, mask), axis=-1)
    probs = jnp.exp(log_probs)
    assert float(jnp.max(jnp.where(mask, 0.0, probs))) == 0.0
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)
    entropy = -jnp.sum(probs * log_probs, axis=-1)
    assert bool(jnp.all(jnp.isfinite(entropy))) and bool(jnp.all(entropy <= jnp.log(mask.sum(-1)) + 1e-4))
    assert float(masked_logits(logits, mask).min()) == MASKED_LOGIT


@pytest.mark.parametrize("greedy", [True, False])
def test_network_policy_plays_only_legal_moves_through_a_whole_game(greedy):
    env = blokus_jax.make("simple")
    net = make_network(env, channels=4, blocks=1, value_hidden=8)
    params = net.init(jax.random.key(0), env.observe(env.init()))
    policy = network_policy(env, net, params, greedy)

    @jax.jit
    def play(key):
        def body(state, k):
            action = policy(k, state)
            return env.step(state, action), env.is_legal(state, action) | state.terminated

        return jax.lax.scan(body, env.init(), jax.random.split(key, 40))

    final, legal = play(jax.random.key(6))
    assert bool(final.terminated) and bool(jnp.all(legal))
    assert float(final.rewards.sum()) == pytest.approx(0.0, abs=1e-6) or float(final.rewards.max()) == 0.5
