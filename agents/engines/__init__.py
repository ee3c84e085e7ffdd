"""Engines that run games between agents: `arena` (batched matches and round robins), `gtp` (the GTP engine),
`gtp_client` (a GTP client of another engine) and `ladder` (matches against Pentobi's levels).

The names below load on first use (the package imports none of its modules itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from blokus_jax._lazy import lazy_getattr

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


__getattr__ = lazy_getattr(__name__, _HOMES, globals())


__all__ = [
    "ArenaReport",
    "GtpClient",
    "GtpEngine",
    "MatchResult",
    "play_match",
    "round_robin",
    "run_engine",
]
