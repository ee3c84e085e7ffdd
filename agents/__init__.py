"""Agents for blokus-jax: heuristic bots (pure JAX policies), the agent-spec resolver, the arena that measures them,
batched tree search (`mcts`, `az:`), the shipped baseline agents (`baseline:NAME`), the PPO and AlphaZero
trainers and the CLI.

Quick start:

```python
import blokus_jax
from blokus_agents import resolve_agent, round_robin
env = blokus_jax.make("duo")
report = round_robin(env, {s: resolve_agent(s, env) for s in ("random", "greedy", "minimax:k=4")}, games=100)
print(report.markdown())
```

The package is in folders that are its layers, bottom to top: `core`, `search`, `players`, `engines`, `training`,
`cli` (see docs/architecture.md). The names below load on first use, so that `import blokus_agents` and
`blokus-jax --help` import no JAX; the built-in agents register when the registry is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from blokus_jax._lazy import lazy_getattr

if TYPE_CHECKING:
    from blokus_agents.core.policies import (
        AgentSpecError,
        ParamPolicy,
        Policy,
        one_game,
        register_agent,
        register_prefix,
        resolve_agent,
    )
    from blokus_agents.engines.arena import ArenaReport, MatchResult, play_match, round_robin, seat_patterns
    from blokus_agents.players.baselines import baseline_policy
    from blokus_agents.players.bots import BOTS, get_bot
    from blokus_agents.players.priors import move_prior
    from blokus_agents.search.mcts import mcts_policy

#: Each public name and the module that defines it.
_HOMES: dict[str, str] = {
    **dict.fromkeys(
        ("AgentSpecError", "ParamPolicy", "Policy", "one_game", "register_agent", "register_prefix", "resolve_agent"),
        "core.policies",
    ),
    **dict.fromkeys(("ArenaReport", "MatchResult", "play_match", "round_robin", "seat_patterns"), "engines.arena"),
    "baseline_policy": "players.baselines",
    **dict.fromkeys(("BOTS", "get_bot"), "players.bots"),
    "mcts_policy": "search.mcts",
    "move_prior": "players.priors",
}


__getattr__ = lazy_getattr(__name__, _HOMES, globals())


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


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
    "move_prior",
    "one_game",
    "play_match",
    "register_agent",
    "register_prefix",
    "resolve_agent",
    "round_robin",
    "seat_patterns",
]
