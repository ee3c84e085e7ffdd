"""Players: `bots` (heuristic bots), `networks` (the policy-value network), `configs` (the settings of a training
run, which say its network), `checkpoint_index` and `checkpoint_read` (which checkpoints a run holds, and reading
them: what a trained agent plays with), `baselines` (the shipped trained agents, `baseline:NAME`) and `catalog` (the
one module that registers the built-in agents).

The names below load on first use (the package imports none of its modules itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from blokus_jax._lazy import lazy_getattr

if TYPE_CHECKING:
    from blokus_agents.players.baselines import baseline_policy, load_baseline
    from blokus_agents.players.bots import BOTS, get_bot
    from blokus_agents.players.configs import AZConfig, PPOConfig, RunConfig
    from blokus_agents.players.networks import PolicyValueNet, make_network

#: Each public name and the module of this package that defines it.
_HOMES: dict[str, str] = {
    "AZConfig": "configs",
    "PPOConfig": "configs",
    "RunConfig": "configs",
    "BOTS": "bots",
    "get_bot": "bots",
    "PolicyValueNet": "networks",
    "make_network": "networks",
    "baseline_policy": "baselines",
    "load_baseline": "baselines",
}


__getattr__ = lazy_getattr(__name__, _HOMES, globals())


__all__ = [
    "AZConfig",
    "BOTS",
    "PPOConfig",
    "RunConfig",
    "PolicyValueNet",
    "baseline_policy",
    "get_bot",
    "load_baseline",
    "make_network",
]
