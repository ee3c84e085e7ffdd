"""A single-file HTML game viewer.

The viewer is one self-contained HTML page (vanilla JavaScript and SVG, no network): it shows the board with
coordinates, steps forward and back, autoplays, has keyboard shortcuts (left/right, PageUp/PageDown, Home/End,
Space), a score timeline and a clickable move list, and can open any `.blksgf` or JSON record by file picker or
drag and drop. `viewer_html` embeds one record; the URL fragment `#step=K` opens it at position `K`.

Data from a record is never markup: the page shows every string with `textContent`, the embedded record is a
`<script type="application/json">` block in which `<`, `>`, `&` and the JavaScript line separators are
escaped (so no content can end or comment out a script), and a Content-Security-Policy allows only the page's own
script (by its hash) and no network loads.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
from importlib import resources
from pathlib import Path

from blokus_jax.errors import BlokusError
from blokus_jax.io import fileio, records
from blokus_jax.io.records import GameRecord
from blokus_jax.io.render import DEFAULT_NAMES, PALETTE, color_names
from blokus_jax.variants import GAMES, VARIANTS, get_variant

_DATA = "/*__BLOKUS_DATA__*/null"
_CSP = "/*__BLOKUS_CSP__*/"
_SOURCE = "/*__BLOKUS_SOURCE__*/"
_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)
_SOURCE_META = re.compile(r'<meta name="blokus-jax-source" content="([^"]*)">')
#: Marker in the `<head>` of every page `viewer_html` writes.
GENERATOR = '<meta name="generator" content="blokus-jax viewer">'


def _variant_table() -> dict[str, dict]:
    table = {}
    for name in VARIANTS:
        variant = get_variant(name)
        data = records.variant_to_dict(variant)
        data["color_names"] = list(color_names(variant))
        table[name] = data
    return table


def embed_json(data) -> str:
    """`data` as JSON text that is inert inside any HTML element: `<`, `>`, `&` and U+2028/U+2029 are
    written as `\\u` escapes, so no string in it can close the element, open a comment or break a script.

    Args:
        data: JSON-ready data.

    Returns:
        Compact JSON text.
    """
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    for ch in "<>&\u2028\u2029":
        text = text.replace(ch, f"\\u{ord(ch):04x}")
    return text


def _content_security_policy(template: str) -> str:
    """The page's CSP: nothing by default, the page's one inline script by its sha256, inline styles, data: images."""
    scripts = _SCRIPT.findall(template)
    if len(scripts) != 1:
        raise RuntimeError("viewer_template.html must have exactly one inline <script>; reinstall blokus-jax")
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:; "
        f"base-uri 'none'; form-action 'none'"
    )


def source_name(source: str | os.PathLike | None) -> str:
    """The file name of a record path (`/home/me/games/g.json` -> `g.json`), all a page keeps of it: a page
    shared with others must not show the folders of the machine it was made on.

    Args:
        source: The path, or `None`.

    Returns:
        The last part of the path (`""` for `None`).
    """
    if source is None:
        return ""
    return re.split(r"[\\/]", os.fspath(source))[-1]


def viewer_html(record: GameRecord | None = None, title: str | None = None, source: str | None = None) -> str:
    """The viewer page as one HTML string, showing `record` (at its final position) if given, else empty and
    ready to open a file.

    Args:
        record: The game to show, or `None` for an empty page.
        title: The page's title; default the variant's name.
        source: The record's path; only its file name, never its folders (see `source_name`), is noted in the
            page's head so that `page_source` can tell which record a page shows.

    Returns:
        The page.

    Raises:
        RuntimeError: The installed `viewer_template.html` lost a placeholder.
    """
    template = resources.files("blokus_jax.io").joinpath("viewer_template.html").read_text(encoding="utf-8")
    if any(mark not in template for mark in (_DATA, _CSP, _SOURCE)):
        raise RuntimeError("viewer_template.html lost a placeholder; reinstall blokus-jax")
    data = {
        "variants": _variant_table(),
        "games": {gm: name for name, gm in GAMES.items()},
        "palette": PALETTE,
        "default_names": list(DEFAULT_NAMES),
        "max_file_bytes": records.MAX_RECORD_BYTES,
        "record": None if record is None else record.to_dict(),
        "title": title,
    }
    page = template.replace(_CSP, _content_security_policy(template))
    page = page.replace(_SOURCE, html.escape(source_name(source), quote=True).replace("*", "&#42;"))
    return page.replace(_DATA, embed_json(data))


def page_source(path: str | Path) -> str | None:
    """For an existing file written by `viewer_html`: the record it shows, as the absolute path of the file of
    the noted name beside the page or, failing that, in the current folder, when such a file exists, else the bare
    noted name (`""` if none was given). `None` when the file is not a viewer page (or cannot be read). The page
    keeps only the record's file name, so two records of one name in different folders are told apart only by
    where they lie.

    Args:
        path: The page.

    Returns:
        The record's path or noted name, or `None` when `path` is not a readable viewer page.
    """
    try:
        with fileio.open_regular(path, what="viewer page", error=OSError) as f:
            head = f.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return None  # missing, unreadable, or not a regular file (a FIFO is never waited on)
    if GENERATOR not in head:
        return None
    match = _SOURCE_META.search(head)
    name = source_name(html.unescape(match.group(1))) if match else ""
    if not name or name in (".", ".."):
        return name
    for folder in (Path(path).absolute().parent, Path.cwd()):
        candidate = folder / name
        if candidate.is_file():
            return str(candidate.resolve())
    return name


def write_viewer(
    record: GameRecord | None, path: str | Path, title: str | None = None, source: str | None = None
) -> Path:
    """Write `viewer_html` for `record` to `path` (parent folders are created). The write is atomic
    (`blokus_jax.io.fileio.write_atomic`): a failure half-way (a full disk) leaves the previous page intact.

    Args:
        record: The game to show, or `None` for an empty page.
        path: The HTML file to write.
        title: The page's title; default the variant's name.
        source: The record's path, whose file name the page notes (see `viewer_html`).

    Returns:
        `path`, as a `Path`.

    Raises:
        BlokusError: The parent folder cannot be created, `path` is a symbolic link or not a regular file,
            or the write fails.
        RuntimeError: As `viewer_html`.
    """
    path = Path(path)
    page = viewer_html(record, title, source)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BlokusError(f"cannot write the viewer page {str(path)!r}: {exc.strerror or exc}") from exc
    return fileio.write_atomic(path, page, what="the viewer page", error=BlokusError)
