"""Leaf values that mix the network's value head with playouts (``az:RUN,mix=L``): the pure forms at ``mix=0`` (today's
network search, no playouts run) and ``mix=1`` (playout values under the network's prior), the blend in between,
and the agent options."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import blokus_jax
from blokus_agents.players.networks import make_network
from blokus_agents.search import gumbel
from blokus_agents.search.gumbel import make_search, mixed_evaluator, network_evaluator, rollout_evaluator
from blokus_jax.errors import VariantError

#: Small search settings: compile time, not strength, is what matters here.
SEARCH = {"sims": 4, "k": 4, "considered": 4, "gumbel_scale": 1.0}
PLAYOUT = {"playouts": 2, "playout": "greedy", "margin": 0.5}


@pytest.fixture(scope="module")
def tiny():
    """``simple``, an untrained tiny network with its params, and a batch of positions a few random moves apart."""
    env = blokus_jax.make("simple")
    network = make_network(env, channels=4, blocks=0, value_hidden=8)
    params = jax.jit(network.init)(jax.random.key(0), jax.tree.map(lambda x: x[None], env.observe(env.init())))
    step, sample = jax.jit(jax.vmap(env.step)), jax.jit(jax.vmap(env.sample_action))
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(1), 2))
    batches = []
    for t in range(9):
        if t % 4 == 0:
            batches.append(states)
        states = step(states, sample(jax.random.split(jax.random.key(100 + t), 2), states))
    return env, network, params, jax.tree.map(lambda *xs: jnp.concatenate(xs), *batches)


def _run(env, evaluator, params, states, seed=7):
    return jax.device_get(jax.jit(make_search(env, evaluator, **SEARCH))(params, jax.random.key(seed), states))


def _assert_same(a, b):
    for name, x, y in zip(a._fields, a, b):
        np.testing.assert_array_equal(x, y, err_msg=name)


@pytest.mark.slow
def test_mix_0_is_todays_network_search_and_runs_no_playouts(tiny, monkeypatch):
    env, network, params, states = tiny
    today = _run(env, network_evaluator(env, network.apply), params, states)
    mixed = _run(env, mixed_evaluator(env, network.apply, 0.0, **PLAYOUT), params, states)
    _assert_same(today, mixed)  # same actions, values and targets for the same keys

    def no_playouts(*args, **kwargs):
        raise AssertionError("a playout ran")

    monkeypatch.setattr(gumbel, "bitboard_playout", no_playouts)
    search = make_search(env, mixed_evaluator(env, network.apply, 0.0, **PLAYOUT), **SEARCH)
    jax.eval_shape(search, params, jax.random.key(0), states)  # traced without a single playout
    with pytest.raises(AssertionError, match="a playout ran"):  # the patch is seen as soon as the mix is positive
        jax.eval_shape(
            make_search(env, mixed_evaluator(env, network.apply, 0.5), **SEARCH), params, jax.random.key(0), states
        )


@pytest.mark.slow
def test_mix_1_is_the_rollout_value_under_the_network_prior(tiny):
    env, network, params, states = tiny
    net, rollout = network_evaluator(env, network.apply), rollout_evaluator(env, **PLAYOUT)

    def reference(params, key, state, root_player):
        return net(params, key, state, root_player)[0], rollout(params, key, state, root_player)[1]

    expected = _run(env, reference, params, states)
    _assert_same(expected, _run(env, mixed_evaluator(env, network.apply, 1.0, **PLAYOUT), params, states))
    # and it is another search than the network's own (the values come from playouts)
    assert not np.array_equal(expected.value, _run(env, net, params, states).value)


@pytest.mark.slow
def test_a_mix_between_blends_the_value_head_and_the_playout_result(tiny):
    env, network, params, states = tiny
    net, rollout = network_evaluator(env, network.apply), rollout_evaluator(env, **PLAYOUT)
    mixed = mixed_evaluator(env, network.apply, 0.25, **PLAYOUT)
    keys = jax.random.split(jax.random.key(3), states.board.shape[0])
    batch = lambda evaluator: jax.device_get(  # noqa: E731
        jax.jit(jax.vmap(evaluator, in_axes=(None, 0, 0, 0)))(params, keys, states, states.current_player)
    )
    (net_logits, head), (_, playout), (logits, value) = batch(net), batch(rollout), batch(mixed)
    np.testing.assert_array_equal(logits, net_logits)  # the network's prior, not the corners score
    np.testing.assert_allclose(value, 0.75 * head + 0.25 * playout, rtol=1e-6, atol=1e-7)
    assert not np.allclose(head, playout)  # a blend of two different numbers
    with pytest.raises(VariantError, match="mix must be a weight between 0 and 1"):
        mixed_evaluator(env, network.apply, 1.5)
    with pytest.raises(VariantError, match="unknown playout policy"):
        mixed_evaluator(env, network.apply, 0.5, playout="smart")


@pytest.mark.slow
def test_az_agent_takes_mix_and_playout_options(tmp_path, monkeypatch):
    from blokus_agents.core.policies import AgentSpecError, resolve_agent
    from blokus_agents.players.configs import AZConfig
    from blokus_agents.search import mcts as search
    from blokus_agents.training import checkpoint
    from blokus_agents.training.alphazero import make_train

    config = AZConfig(variant="simple", num_envs=2, batch_size=2, channels=4, blocks=0, value_hidden=8)
    checkpoint.save(tmp_path, make_train(config).init(jax.random.PRNGKey(0)), config)
    calls = []
    real = search.network_search_policy
    monkeypatch.setattr(search, "network_search_policy", lambda *a: calls.append(a[3].options()) or real(*a))
    env = blokus_jax.make("simple")
    agent = resolve_agent(f"az:{tmp_path},mix=0.5,playouts=2,playout=random,margin=0,sims=2,k=4", env)
    assert {k: calls[-1][k] for k in ("mix", "playouts", "playout", "margin")} == {
        "mix": 0.5,
        "playouts": 2,
        "playout": "random",
        "margin": 0.0,
    }
    state = env.init()
    assert bool(env.is_legal(state, jax.jit(agent.fn)(agent.params, jax.random.key(0), state)))
    resolve_agent(f"az:{tmp_path}", env)
    assert calls[-1]["mix"] == 0.0  # the default is today's search
    for bad, message in (("mix=1.5", "mix=1.5 must be between 0 and 1"), ("playout=smart", "must be one of")):
        with pytest.raises(AgentSpecError, match=message):
            resolve_agent(f"az:{tmp_path},{bad}", env)
