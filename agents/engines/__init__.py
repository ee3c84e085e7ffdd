"""Engines that run games between agents: `arena` (batched matches and round robins), `gtp` (the GTP engine),
`gtp_client` (a GTP client of another engine) and `ladder` (matches against Pentobi's levels).

The names below load on first use (the package imports none of its modules itself).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blokus_agents.engines.arena import ArenaReport, MatchResult, play_match, round_robin
    from blokus_agents.engines.gtp import GtpEngine, run_engine
    from blokus_agents.engines.gtp_client import GtpClient

#: Each public name and the module of this package that defines it.
_HOMES: dict[str, str] = {
    "ArenaReport": "arena",
    "MatchResult": "arena",
    "play_match": "arena",
    "round_robin": "arena",
    "GtpEngine": "gtp",
    "run_engine": "gtp",
    "GtpClient": "gtp_client",
}


def __getattr__(name: str) -> Any:
    """Load a public name of `blokus_agents.engines` on its first use.

    Args:
        name: The attribute asked for.

    Returns:
        The object, which is then cached in the package's namespace.

    Raises:
        AttributeError: When the package has no such name.
    """
    if name not in _HOMES:
        raise AttributeError(f"module 'blokus_agents.engines' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"blokus_agents.engines.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "ArenaReport",
    "GtpClient",
    "GtpEngine",
    "MatchResult",
    "play_match",
    "round_robin",
    "run_engine",
]
