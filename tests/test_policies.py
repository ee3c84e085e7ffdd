"""The agent-spec resolver: registered names with typed options, run directories, prefixes, clear errors."""

from __future__ import annotations

import jax
import pytest

import blokus_jax
from blokus_agents import policies
from blokus_agents.policies import AgentSpecError, register_agent, register_prefix, resolve_agent
from blokus_jax.errors import BlokusError


@pytest.fixture(scope="module")
def env():
    return blokus_jax.make("simple")


def test_bot_names_and_typed_options_resolve(env):
    for name in ("random", "greedy", "corners", "mobility", "minimax"):
        assert name in policies.agent_names()
        action = resolve_agent(name, env)(jax.random.key(0), env.init())
        assert bool(env.is_legal(env.init(), action))
    assert callable(resolve_agent("minimax:k=3,depth=1", env))
    assert callable(resolve_agent("corners:size_weight=2", env))  # an int text for a float option


@pytest.mark.parametrize(
    "spec, message",
    [
        ("alphazero", "unknown agent 'alphazero'"),
        ("minimax:k", "key=value"),
        ("minimax:k=", "key=value"),
        ("minimax:k=2.5", "option k='2.5' must be an int"),
        ("corners:size_weight=nan", "must be a finite number"),
        ("minimax:k=3,k=4", "given twice"),
        ("greedy:k=3", "bad options for agent 'greedy'.*unknown option 'k'"),
        ("mobility:depth=2", "its options are: k=16, size_weight=1.0"),
        ("baseline:no_such_baseline", "unknown baseline 'no_such_baseline'; the available baselines are"),
        ("./no/such/run", "no such run directory"),
        ("", "empty"),
    ],
)
def test_bad_specs_are_agent_spec_errors(env, spec, message):
    with pytest.raises(AgentSpecError, match=message) as err:
        resolve_agent(spec, env)
    assert isinstance(err.value, BlokusError) and isinstance(err.value, ValueError)


def test_az_prefix_is_registered_by_search_and_names_a_missing_run(env):
    assert "az" in policies._PREFIXES and "mcts" in policies.agent_names()
    with pytest.raises(AgentSpecError, match="agent 'az:runs/x' needs a trained run.*no checkpoint in 'runs/x'"):
        resolve_agent("az:runs/x,sims=8", env)
    with pytest.raises(AgentSpecError, match="no checkpoint in 'runs/x'") as err:  # a target without options
        resolve_agent("az:runs/x", env)
    assert "--resume" not in str(err.value)
    with pytest.raises(AgentSpecError, match="bad option ''"):  # a trailing comma is still malformed
        resolve_agent("az:runs/x,", env)
    with pytest.raises(AgentSpecError, match="unknown option 'depth'"):
        resolve_agent("az:runs/x,depth=3", env)


def test_other_modules_register_agents_and_prefixes_without_editing_the_resolver(env, monkeypatch):
    monkeypatch.setattr(policies, "_AGENTS", dict(policies._AGENTS))
    # blokus_agents.baselines has registered `baseline:`; take it out to register the reserved prefix anew
    monkeypatch.setattr(policies, "_PREFIXES", {k: v for k, v in policies._PREFIXES.items() if k != "baseline"})
    with pytest.raises(AgentSpecError, match="'baseline:' .* is not registered; import blokus_agents"):
        resolve_agent("baseline:duo", env)
    seen = {}

    def first_legal(env, sims: int = 64, greedy: bool = True):
        seen.update(sims=sims, greedy=greedy)
        return env.sample_action

    register_agent("first_legal", first_legal)
    assert resolve_agent("first_legal:sims=128,greedy=false", env) == env.sample_action
    assert seen == {"sims": 128, "greedy": False}
    with pytest.raises(ValueError, match="already registered"):
        register_agent("first_legal", first_legal)

    def baseline(env, target: str, sims: int = 32):
        seen.update(target=target, sims=sims)
        return env.sample_action

    register_prefix("baseline", baseline)  # a reserved prefix may be registered once
    assert resolve_agent("baseline:runs/duo,sims=8", env) == env.sample_action
    assert seen["target"] == "runs/duo" and seen["sims"] == 8
    with pytest.raises(AgentSpecError, match="names no target"):
        resolve_agent("baseline:", env)


def test_adapters_resolve_opponents_with_the_same_resolver(env):
    from blokus_jax.adapters._boundary import resolve_policy

    assert callable(resolve_policy("minimax:k=2,depth=1", env))
    with pytest.raises(AgentSpecError, match="unknown agent"):
        resolve_policy("nobody", env)
