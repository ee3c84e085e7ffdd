"""Players: `bots` (heuristic bots), `networks` (the policy-value network), `baselines` (the shipped trained
agents, `baseline:NAME`) and `catalog` (the one module that registers the built-in agents).

The names below load on first use (the package imports none of its modules itself).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blokus_agents.players.baselines import baseline_policy, load_baseline
    from blokus_agents.players.bots import BOTS, get_bot
    from blokus_agents.players.networks import PolicyValueNet, make_network

#: Each public name and the module of this package that defines it.
_HOMES: dict[str, str] = {
    "BOTS": "bots",
    "get_bot": "bots",
    "PolicyValueNet": "networks",
    "make_network": "networks",
    "baseline_policy": "baselines",
    "load_baseline": "baselines",
}


def __getattr__(name: str) -> Any:
    """Load a public name of `blokus_agents.players` on its first use.

    Args:
        name: The attribute asked for.

    Returns:
        The object, which is then cached in the package's namespace.

    Raises:
        AttributeError: When the package has no such name.
    """
    if name not in _HOMES:
        raise AttributeError(f"module 'blokus_agents.players' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"blokus_agents.players.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BOTS",
    "PolicyValueNet",
    "baseline_policy",
    "get_bot",
    "load_baseline",
    "make_network",
]
