"""Agents for blokus-jax: heuristic bots (pure JAX policies), the agent-spec resolver, the arena that measures them,
batched tree search (`mcts`, `az:`), the shipped baseline agents (`baseline:NAME`), the PPO trainer and the CLI.

Quick start::

    import blokus_jax
    from blokus_agents import resolve_agent, round_robin
    env = blokus_jax.make("duo")
    report = round_robin(env, {s: resolve_agent(s, env) for s in ("random", "greedy", "minimax:k=4")}, games=100)
    print(report.markdown())
"""

from blokus_agents import catalog  # noqa: F401 (registers every built-in agent)
from blokus_agents.arena import ArenaReport, MatchResult, play_match, round_robin, seat_patterns
from blokus_agents.baselines import baseline_policy
from blokus_agents.bots import BOTS, get_bot
from blokus_agents.policies import AgentSpecError, ParamPolicy, Policy, register_agent, register_prefix, resolve_agent
from blokus_agents.search import mcts_policy

__all__ = [
    "BOTS",
    "AgentSpecError",
    "ArenaReport",
    "MatchResult",
    "ParamPolicy",
    "Policy",
    "baseline_policy",
    "get_bot",
    "mcts_policy",
    "play_match",
    "register_agent",
    "register_prefix",
    "resolve_agent",
    "round_robin",
    "seat_patterns",
]
