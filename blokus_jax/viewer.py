"""A single-file HTML game viewer and the bodies of the ``blokus-jax view`` and ``blokus-jax replay`` commands.

The viewer is one self-contained HTML page (vanilla JavaScript and SVG, no network): it shows the board with
coordinates, steps forward and back, autoplays, has keyboard shortcuts (left/right, PageUp/PageDown, Home/End,
Space), a score timeline and a clickable move list, and can open any ``.blksgf`` or JSON record by file picker or
drag and drop. :func:`viewer_html` embeds one record; the URL fragment ``#step=K`` opens it at position ``K``.
"""

from __future__ import annotations

import json
import webbrowser
from importlib import resources
from pathlib import Path

from blokus_jax import records, sgf
from blokus_jax.records import GameRecord
from blokus_jax.render import DEFAULT_NAMES, PALETTE, color_names, to_text
from blokus_jax.variants import VARIANTS, get_variant

_PLACEHOLDER = "/*__BLOKUS_DATA__*/null"


def _variant_table() -> dict[str, dict]:
    table = {}
    for name in VARIANTS:
        variant = get_variant(name)
        data = records.variant_to_dict(variant)
        data["color_names"] = list(color_names(variant))
        table[name] = data
    return table


def viewer_html(record: GameRecord | None = None, title: str | None = None) -> str:
    """The viewer page as one HTML string, showing ``record`` (at its final position) if given, else empty and
    ready to open a file. ``title`` defaults to the variant's name."""
    template = resources.files("blokus_jax").joinpath("viewer_template.html").read_text(encoding="utf-8")
    data = {
        "variants": _variant_table(),
        "games": {gm: name for name, gm in sgf.GAMES.items()},
        "palette": PALETTE,
        "default_names": list(DEFAULT_NAMES),
        "record": None if record is None else record.to_dict(),
        "title": title,
    }
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    if _PLACEHOLDER not in template:
        raise RuntimeError("viewer_template.html lost its data placeholder; reinstall blokus-jax")
    return template.replace(_PLACEHOLDER, payload)


def write_viewer(record: GameRecord | None, path: str | Path, title: str | None = None) -> Path:
    """Write :func:`viewer_html` for ``record`` to ``path`` (parent folders are created); returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(viewer_html(record, title), encoding="utf-8")
    return path


def view_command(path: str | Path, out: str | Path | None = None, open_browser: bool = False) -> Path:
    """Body of ``blokus-jax view FILE``: load and check the ``.blksgf``/``.json`` record at ``path``, write the
    viewer page to ``out`` (default: next to the record, with suffix ``.html``), open it in the default browser
    when ``open_browser`` is set, and return the page's path. Raises ``RecordError`` for a bad record."""
    path = Path(path)
    record = records.load(path)
    target = Path(out) if out is not None else path.with_suffix(".html")
    write_viewer(record, target, title=path.name)
    if open_browser:
        webbrowser.open(target.resolve().as_uri())
    return target


def replay_command(path: str | Path, ansi: bool = False, boards: bool = False) -> str:
    """Body of ``blokus-jax replay FILE``: the game as terminal text. One line per action (colour, player, piece
    and Pentobi cells, or the pass), the board after every placement when ``boards`` is set, then the final
    board with remaining pieces and the result; ``ansi`` colours the boards. Returns the text."""
    record = records.load(path)
    variant = record.variant
    names = color_names(variant)
    tables = records._env(variant).tables
    movers = records._trace(variant, [record.actions], None, complete=False)[0].players
    lines = [f"{Path(path).name}: {variant.name}, {' vs '.join(record.players)}, {len(record.moves)} placements"]
    lines += [f"  {k}: {v}" for k, v in record.metadata.items()]
    for k, (action, color, cells) in enumerate(zip(record.actions, record.colors, record.cells), start=1):
        if len(cells) == 0:
            lines.append(f"{k:4d}. {names[color]:<7} pass")
            continue
        piece = variant.pieces[tables.orientation_piece[action // (variant.board_shape[0] * variant.board_shape[1])]]
        lines.append(f"{k:4d}. {names[color]:<7} {piece.name:<3} {records.cells_text(variant, cells)}  "
                     f"({record.players[movers[k - 1]]})")
        if boards:
            lines.append(to_text(record.state_at(k), variant, ansi=ansi, pieces=False))
    lines.append(to_text(record.replay(), variant, ansi=ansi))
    scores = ", ".join(f"{name} {score}" for name, score in zip(record.players, record.player_scores))
    lines.append(f"result: {record.result} ({scores})")
    return "\n".join(lines)

