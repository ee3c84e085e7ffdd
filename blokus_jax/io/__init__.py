"""The environment's input and output, apart from the game core: `records` (game records, checked replay),
`record_json` (their JSON), `sgf` (Pentobi's .blksgf), `render` (text, SVG and PNG pictures), `viewer` (the
single-file HTML viewer) and `fileio` (safe file reading and writing).

The names below load on first use (the package imports none of its modules itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from blokus_jax._lazy import lazy_getattr

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


__getattr__ = lazy_getattr(__name__, _HOMES, globals())


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
