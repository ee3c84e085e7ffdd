"""The environment's input and output, apart from the game core: `records` (game records, checked replay),
`record_json` (their JSON), `sgf` (Pentobi's .blksgf), `render` (text, SVG and PNG pictures), `viewer` (the
single-file HTML viewer) and `fileio` (safe file reading and writing).

The names below load on first use (the package imports none of its modules itself).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blokus_jax.io.records import GameRecord, from_blksgf, from_json, from_rollout, load, save_records
    from blokus_jax.io.render import to_png, to_svg, to_text
    from blokus_jax.io.viewer import write_viewer

#: Each public name and the module of this package that defines it.
_HOMES: dict[str, str] = {
    "GameRecord": "records",
    "from_blksgf": "records",
    "from_json": "records",
    "from_rollout": "records",
    "load": "records",
    "save_records": "records",
    "to_png": "render",
    "to_svg": "render",
    "to_text": "render",
    "write_viewer": "viewer",
}


def __getattr__(name: str) -> Any:
    """Load a public name of `blokus_jax.io` on its first use.

    Args:
        name: The attribute asked for.

    Returns:
        The object, which is then cached in the package's namespace.

    Raises:
        AttributeError: When the package has no such name.
    """
    if name not in _HOMES:
        raise AttributeError(f"module 'blokus_jax.io' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"blokus_jax.io.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "GameRecord",
    "from_blksgf",
    "from_json",
    "from_rollout",
    "load",
    "save_records",
    "to_png",
    "to_svg",
    "to_text",
    "write_viewer",
]
