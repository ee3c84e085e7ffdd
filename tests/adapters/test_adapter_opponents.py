"""Adapter opponents: a callable returning a non-integer is an ActionTypeError; run directories are reloaded when
they gain a checkpoint (the cache is keyed on the checkpoint, not the path)."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

pytest.importorskip("gymnasium")

from blokus_jax.adapters import gymnasium as gym_adapter  # noqa: E402
from blokus_jax.errors import ActionTypeError  # noqa: E402


@pytest.mark.parametrize(
    "policy, returned",
    [
        (lambda key, state: jnp.float32(3.0), "an array of dtype float32"),
        (lambda key, state: 3.0, "float"),
        (lambda key, state: jnp.zeros(2, jnp.int32), r"an array of dtype int32 and shape \(2,\)"),
        (lambda key, state: True, "bool"),
    ],
)
def test_an_opponent_returning_a_non_integer_is_an_action_type_error(policy, returned):
    env = gym_adapter.BlokusGymEnv("simple", opponents=policy)
    with pytest.raises(ActionTypeError, match=f"returned {returned}.*one integer action index"):
        obs, _ = env.reset(seed=0)  # the opponents' moves are traced with the first call
        env.step(int(obs["action_mask"].argmax()))


def test_an_opponent_returning_an_int_still_plays():
    def first_legal(key, state):
        return jnp.argmax(state.legal_action_mask)  # int32 from argmax: fine

    env = gym_adapter.BlokusGymEnv("simple", opponents=first_legal)
    obs, info = env.reset(seed=0)
    action = int(obs["action_mask"].argmax())
    env.step(action)


def test_a_run_directory_opponent_is_reloaded_when_it_gains_a_checkpoint(tmp_path, monkeypatch):
    from blokus_agents.core import policies

    run = tmp_path / "run"
    (run / "checkpoints" / "1").mkdir(parents=True)
    loads = []

    def fake_resolve(spec, env):
        loads.append(spec)
        return env.sample_action

    monkeypatch.setattr(policies, "resolve_agent", fake_resolve)
    config = ("simple", str(run), "winloss", -1.0, None, {})
    first = gym_adapter._game(*config)
    assert gym_adapter._game(*config) is first and loads == [str(run)]  # cached while the run is unchanged
    (run / "checkpoints" / "2").mkdir()  # retrained
    second = gym_adapter._game(*config)
    assert second is not first and loads == [str(run), str(run)]
    assert gym_adapter._game("simple", "greedy", "winloss", -1.0, None, {}) is gym_adapter._game(
        "simple", "greedy", "winloss", -1.0, None, {}
    )
