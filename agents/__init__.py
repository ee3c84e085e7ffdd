"""Agents for blokus-jax: heuristic bots (pure JAX policies), the arena that measures them, and the CLI.

Quick start::

    import blokus_jax
    from agents import get_bot, round_robin
    env = blokus_jax.make("duo")
    report = round_robin(env, {n: get_bot(n, env) for n in ("random", "greedy", "corners")}, games=100)
    print(report.markdown())
"""

from agents.arena import ArenaReport, MatchResult, play_match, round_robin, seat_patterns
from agents.bots import BOTS, Policy, get_bot

__all__ = ["ArenaReport", "BOTS", "MatchResult", "Policy", "get_bot", "play_match", "round_robin", "seat_patterns"]
