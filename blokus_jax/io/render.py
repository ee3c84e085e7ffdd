"""Pictures of a position: plain or ANSI text, SVG, PNG (via pillow) and raw RGB arrays.

Every picture is drawn from one `State` (unbatched) and the variant it belongs to. Colours
come from the Okabe-Ito palette, chosen to stay distinct for the common forms of colour blindness; the SVG and PNG
pictures also put a different small glyph inside each colour's squares so that they can be told apart in greyscale.
Coordinates follow Pentobi and `.blksgf`: columns are letters from `a` on the left, rows are numbered from 1 at
the bottom, so board row `r` is labelled `H - r`.

The SVG and PNG pictures share one layout (`_layout`, a list of drawing primitives), so they always agree.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from blokus_jax import rules
from blokus_jax.errors import IllegalActionError, VariantError
from blokus_jax.io import fileio
from blokus_jax.tables import Tables
from blokus_jax.variants import VARIANTS, Variant, get_variant

#: Okabe-Ito colours by colour name (hex RGB).
PALETTE: dict[str, str] = {
    "Blue": "#0072B2",
    "Yellow": "#F0E442",
    "Red": "#D55E00",
    "Green": "#009E73",
    "Purple": "#CC79A7",
    "Orange": "#E69F00",
    "Sky": "#56B4E9",
    "Black": "#000000",
}
#: Colour names in order for variants without names of their own (at most this many colours can be drawn).
DEFAULT_NAMES: tuple[str, ...] = ("Blue", "Yellow", "Red", "Green", "Purple", "Orange", "Sky", "Black")
_NAMES_BY_VARIANT = {"duo": ("Purple", "Orange"), "junior": ("Green", "Orange")}
_GLYPHS = ("dot", "ring", "cross", "bar", "diamond", "slash", "square", "plus")
_ANSI = {"Blue": 34, "Yellow": 33, "Red": 31, "Green": 32, "Purple": 35, "Orange": 91, "Sky": 36, "Black": 90}
_EMPTY, _GRID, _INK, _PANEL = "#F4F4F0", "#C8C8C0", "#222222", "#FFFFFF"


def color_names(variant: Variant) -> tuple[str, ...]:
    """Display names of the variant's colours, as Pentobi names them (Blue, Yellow, Red, Green; Purple and Orange
    in Duo; Green and Orange in Junior); other variants use the four-colour names in order.

    Args:
        variant: The rules.

    Returns:
        One name a colour.

    Raises:
        VariantError: The variant has more colours than pictures support.
    """
    names = _NAMES_BY_VARIANT.get(variant.name, DEFAULT_NAMES)
    if variant.num_colors > len(names):
        names = DEFAULT_NAMES
    if variant.num_colors > len(names):
        raise VariantError(
            f"variant {variant.name!r} has {variant.num_colors} colours; pictures support at most {len(DEFAULT_NAMES)}"
        )
    return tuple(names[: variant.num_colors])


def color_hex(variant: Variant) -> tuple[str, ...]:
    """The colour-blind-safe fill of each of the variant's colours (Okabe-Ito palette).

    Args:
        variant: The rules.

    Returns:
        One `#RRGGBB` string a colour.

    Raises:
        VariantError: The variant has more colours than pictures support.
    """
    return tuple(PALETTE[name] for name in color_names(variant))


def column_label(col: int) -> str:
    """Pentobi's letters of a column.

    Args:
        col: The column, 0 on the left.

    Returns:
        `a` ... `z`, then `aa`, `ab`, ... for wider boards.
    """
    return chr(ord("a") + col) if col < 26 else chr(ord("a") + col // 26 - 1) + chr(ord("a") + col % 26)


# Two letters and three digits cover every board up to 30 columns; longer tokens are rejected before int().
_POINT = re.compile(r"([a-z]{1,2})([0-9]{1,3})")


def cell_name(variant: Variant, row: int, col: int) -> str:
    """Pentobi/.blksgf name of cell `(row, col)`: column letters, then the row counted from the bottom (`a1` is
    the bottom-left corner). The same names label `to_text` boards and the `play` command's input.

    Args:
        variant: The rules (for the board's height).
        row: The row, 0 at the top.
        col: The column, 0 on the left.

    Returns:
        The name, e.g. `"e10"`.
    """
    return f"{column_label(int(col))}{variant.board_shape[0] - int(row)}"


def parse_cell_name(variant: Variant, text: str) -> tuple[int, int]:
    """The cell of a Pentobi cell name like `"e10"` (the inverse of `cell_name`).

    Args:
        variant: The rules (for the board's size).
        text: The name; case and surrounding spaces are ignored.

    Returns:
        `(row, col)`.

    Raises:
        IllegalActionError: `text` names no cell of the board (a `ValueError`; the message gives the valid
            range).
    """
    rows, cols = variant.board_shape
    text = str(text)
    # ASCII only: lower() would read a Kelvin sign (U+212A) as the column k
    match = _POINT.fullmatch(text.strip().lower()) if text.isascii() else None
    if match is not None:
        letters, number = match.groups()
        col = 0
        for ch in letters:
            col = col * 26 + ord(ch) - ord("a") + 1
        row, col = rows - int(number), col - 1
        if 0 <= col < cols and 0 <= row < rows:
            return row, col
    shown = repr(text) if len(str(text)) <= 40 else repr(str(text)[:40]) + "..."
    raise IllegalActionError(
        f"{shown} is not a cell of the {rows}x{cols} board; write column letters "
        f"a-{column_label(cols - 1)} then a row number 1-{rows} (1 = bottom row), e.g. "
        f"{cell_name(variant, rows - 1, 0)}"
    )


def cells_text(variant: Variant, cells) -> str:
    """Pentobi point list `a1,b1,...` of `(row, col)` cells in Pentobi's canonical order (bottom row first, then
    columns): the text of a `.blksgf` move and of a record's JSON `moves`.

    Args:
        variant: The rules.
        cells: `(row, col)` pairs.

    Returns:
        The point list, e.g. `"a1,b1,b2"`.
    """
    ordered = sorted(((int(r), int(c)) for r, c in cells), key=lambda rc: (-rc[0], rc[1]))
    return ",".join(cell_name(variant, r, c) for r, c in ordered)


def resolve_variant(state: Any, env: Any = None) -> Variant:
    """The `Variant` a picture of `state` uses: `env`'s when given (an `Env`, a `Variant` or a
    registered name), otherwise the one registered variant whose board and piece count match `state`.

    Args:
        state: One unbatched `State` (or any object with `board` and `remaining` arrays).
        env: The `Env`, `Variant` or variant name; `None` to guess from the state's shape.

    Returns:
        The variant.

    Raises:
        VariantError: `env` is missing and the state is batched or its shape is ambiguous or unknown, or `env`
            is an unknown variant name.
    """
    if env is not None:
        return env if isinstance(env, Variant) else getattr(env, "variant", None) or get_variant(env)
    board = np.asarray(state.board)
    if board.ndim != 2:
        raise VariantError(
            f"pictures need one unbatched state; got a board of shape {board.shape}. "
            f"Index the batch first, e.g. jax.tree.map(lambda x: x[0], state)"
        )
    colors, pieces = np.asarray(state.remaining).shape
    matches = [v() for v in VARIANTS.values()]
    matches = [v for v in matches if v.board_shape == board.shape and v.num_colors == colors and v.num_pieces == pieces]
    # classic, classic_2p and classic_3p differ only in who owns the colours, which pictures do not show
    if matches and all((v.pieces, v.start_cells) == (matches[0].pieces, matches[0].start_cells) for v in matches):
        return matches[0]
    raise VariantError(
        f"cannot tell the variant of a {board.shape[0]}x{board.shape[1]} board with {colors} colours "
        f"and {pieces} pieces; pass env= (the Env, its Variant or its name)"
    )


def _piece_label(piece, remaining: int) -> str:
    # piece names can come from a record file: control characters are escaped so they cannot drive a terminal
    name = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in piece.name)
    return name if remaining <= 1 else f"{name}x{remaining}"


def to_text(state: Any, env: Any = None, ansi: bool = False, pieces: bool = True, starts: bool = False) -> str:
    """The position as text: column letters on top, Pentobi row numbers on the left, one character per square
    (`.` empty, the colour's initial otherwise; with `ansi=True` coloured blocks), the last move in lower case
    (`@` with `ansi`) and explained in a legend line below the board, then one line per colour with its score
    and remaining pieces (`pieces=False` leaves those out). With `starts` the empty start squares of colours
    that have not placed yet are drawn as `*` (with a legend), as `play` shows them.

    Args:
        state: One unbatched `State`.
        env: The `Env`, `Variant` or variant name (guessed from the state's shape when omitted).
        ansi: Coloured blocks with ANSI escapes instead of letters.
        pieces: Add one line per colour with its score and remaining pieces.
        starts: Draw the open start squares as `*`.

    Returns:
        The multi-line string (no trailing newline).

    Raises:
        VariantError: `env` is not given and the state's board is batched or matches no registered variant, or
            the variant has more colours than pictures draw.
    """
    variant = resolve_variant(state, env)
    names = color_names(variant)
    board = np.asarray(state.board)
    rows, cols = board.shape
    last = _last_cells(state, variant)
    marks = [n[0] for n in names]
    if len(set(marks)) < len(marks):
        marks = [str(c + 1) for c in range(len(names))]
    open_starts = _open_starts(state, variant) if starts else {}
    width = len(str(rows))
    header = " " * (width + 1) + " ".join(f"{column_label(c):<1}" for c in range(cols))
    lines = [header]
    for r in range(rows):
        cells = []
        for c in range(cols):
            v = int(board[r, c])
            if v == 0:
                cells.append("*" if (r, c) in open_starts else ".")
                continue
            ch = marks[v - 1].lower() if (r, c) in last else marks[v - 1]
            cells.append(f"\x1b[{_ANSI[names[v - 1]]}m{'#' if (r, c) not in last else '@'}\x1b[0m" if ansi else ch)
        lines.append(f"{rows - r:>{width}} " + " ".join(cells))
    if last:
        mover = int(board[next(iter(last))]) - 1
        mark = "@" if ansi else marks[mover].lower()
        lines.append(f"{mark} = last move ({names[mover]}: {cells_text(variant, sorted(last))})")
    if open_starts:
        squares = ", ".join(
            f"{cell_name(variant, r, c)} ({'/'.join(names[k] for k in ks)})" for (r, c), ks in open_starts.items()
        )
        lines.append(f"* = start square: {squares}")
    if pieces:
        remaining = np.asarray(state.remaining)
        scores = np.asarray(state.scores)
        to_move = int(state.current_color)
        done = bool(state.terminated) or bool(state.truncated)
        for color, name in enumerate(names):
            left = [
                _piece_label(p, int(remaining[color, i]))
                for i, p in enumerate(variant.pieces)
                if remaining[color, i] > 0
            ]
            flag = ">" if color == to_move and not done else " "
            label = f"\x1b[{_ANSI[name]}m{name}\x1b[0m" if ansi else name
            lines.append(f"{flag}{label} ({marks[color]}) {int(scores[color]):+d}: {' '.join(left) or '(none)'}")
        status = (
            "game over"
            if bool(state.terminated)
            else "truncated"
            if bool(state.truncated)
            else f"{names[to_move]} to move"
        )
        lines.append(f"step {int(state.step_count)}, {status}")
    return "\n".join(lines)


def _open_starts(state: Any, variant: Variant) -> dict[tuple[int, int], list[int]]:
    """The empty start squares of the colours that have not placed a piece yet: `{(row, col): [colours]}`."""
    board = np.asarray(state.board)
    placed = np.asarray(state.pieces_placed)
    out: dict[tuple[int, int], list[int]] = {}
    for color, cells in enumerate(variant.start_cells):
        if int(placed[color]) > 0:
            continue
        for r, c in cells:
            if board[r, c] == 0:
                out.setdefault((int(r), int(c)), []).append(color)
    return out


def _last_cells(state: Any, variant: Variant) -> set[tuple[int, int]]:
    tables = Tables(variant)
    last = int(state.last_action)
    if last < 0 or last >= tables.pass_action:
        return set()
    try:
        return {tuple(map(int, rc)) for rc in tables.action_cells(last)}
    except ValueError:  # an illegal off-board action ended the game; nothing was placed
        return set()


def _live_corners(state: Any, variant: Variant) -> np.ndarray:
    """`bool[H, W]` empty squares that some legal placement of the colour to move covers at a corner cell."""
    import jax.numpy as jnp

    tables = Tables(variant)
    rows, cols = variant.board_shape
    board = np.asarray(state.board)
    color = int(state.current_color)
    own = rules.pack_rows(jnp.asarray(board == color + 1))
    occupied = rules.pack_rows(jnp.asarray(board != 0))
    first = bool(rules.is_first_move(np.asarray(state.pieces_placed), color))
    _, corners = rules.forbidden_and_corners(tables, own, occupied, jnp.bool_(first), jnp.int32(color))
    corner_plane = np.asarray(rules.unpack_rows(corners, cols))
    legal = np.asarray(rules.unpack_rows(state.legal_bits, cols))  # [O, H, W]
    covered = np.zeros((rows, cols), bool)
    for o, r, c in zip(*np.nonzero(legal)):
        cells = tables.orientation_cells[o] + (r, c)
        covered[cells[:, 0], cells[:, 1]] = True
    return covered & corner_plane


# ------------------------------------------------------------------------------------------------ shared layout
@dataclass(frozen=True)
class _Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str | None = None
    width: float = 0.0


@dataclass(frozen=True)
class _Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    width: float


@dataclass(frozen=True)
class _Circle:
    cx: float
    cy: float
    r: float
    fill: str | None
    stroke: str | None = None
    width: float = 0.0


@dataclass(frozen=True)
class _Poly:
    points: tuple[tuple[float, float], ...]
    fill: str


@dataclass(frozen=True)
class _Text:
    x: float
    y: float
    text: str
    size: float
    anchor: str = "middle"  # "start" | "middle" | "end"
    fill: str = _INK
    bold: bool = False


def _glyph(kind: str, x: float, y: float, s: float, ink: str) -> list:
    """A small mark centred in the square at `(x, y)` of side `s` (tells colours apart without hue)."""
    cx, cy, q = x + s / 2, y + s / 2, s / 6
    w = max(s / 14, 1.0)
    if kind == "dot":
        return [_Circle(cx, cy, q, ink)]
    if kind == "ring":
        return [_Circle(cx, cy, q * 1.2, None, ink, w)]
    if kind == "cross":
        return [_Line(cx - q, cy - q, cx + q, cy + q, ink, w), _Line(cx - q, cy + q, cx + q, cy - q, ink, w)]
    if kind == "bar":
        return [_Line(cx - q * 1.3, cy, cx + q * 1.3, cy, ink, w)]
    if kind == "diamond":
        return [_Poly(((cx, cy - q * 1.3), (cx + q * 1.3, cy), (cx, cy + q * 1.3), (cx - q * 1.3, cy)), ink)]
    if kind == "slash":
        return [_Line(cx - q, cy + q, cx + q, cy - q, ink, w)]
    if kind == "square":
        return [_Rect(cx - q, cy - q, 2 * q, 2 * q, ink)]
    return [_Line(cx - q, cy, cx + q, cy, ink, w), _Line(cx, cy - q, cx, cy + q, ink, w)]


def _layout(
    state: Any,
    variant: Variant,
    cell: int,
    coords: bool,
    last_move: bool,
    legal_corners: bool,
    pieces: bool,
    glyphs: bool,
    title: str | None,
) -> tuple[float, float, list]:
    """Width, height and the drawing primitives of a picture (shared by SVG and PNG)."""
    board = np.asarray(state.board)
    rows, cols = board.shape
    names, fills = color_names(variant), color_hex(variant)
    margin = cell * 1.2 if coords else cell * 0.4
    top = margin + (cell * 1.1 if title else 0)
    ops: list = []
    if title:
        ops.append(_Text(margin, cell * 0.85, title, cell * 0.6, "start", bold=True))
    ops.append(_Rect(margin, top, cols * cell, rows * cell, _EMPTY, _GRID, 1))
    for r in range(rows):
        for c in range(cols):
            x, y = margin + c * cell, top + r * cell
            v = int(board[r, c])
            if v == 0:
                ops.append(_Rect(x, y, cell, cell, _EMPTY, _GRID, 0.5))
                continue
            ops.append(_Rect(x, y, cell, cell, fills[v - 1]))
            if glyphs:
                ops += _glyph(_GLYPHS[v - 1], x, y, cell, "#00000055")
    # piece outlines: same-colour squares that share an edge always belong to one piece in Blokus
    for r in range(rows):
        for c in range(cols):
            v = int(board[r, c])
            x, y = margin + c * cell, top + r * cell
            if v and (r == 0 or board[r - 1, c] != v):
                ops.append(_Line(x, y, x + cell, y, _INK, 1.5))
            if v and (r == rows - 1 or board[r + 1, c] != v):
                ops.append(_Line(x, y + cell, x + cell, y + cell, _INK, 1.5))
            if v and (c == 0 or board[r, c - 1] != v):
                ops.append(_Line(x, y, x, y + cell, _INK, 1.5))
            if v and (c == cols - 1 or board[r, c + 1] != v):
                ops.append(_Line(x + cell, y, x + cell, y + cell, _INK, 1.5))
    mover = int(state.current_color)
    if not (bool(state.terminated) or bool(state.truncated)) and bool(
        rules.is_first_move(np.asarray(state.pieces_placed), mover)
    ):
        for r, c in variant.start_cells[mover]:
            ops.append(_Circle(margin + (c + 0.5) * cell, top + (r + 0.5) * cell, cell * 0.3, None, fills[mover], 2))
    if last_move:
        for r, c in sorted(_last_cells(state, variant)):
            ops.append(_Circle(margin + (c + 0.5) * cell, top + (r + 0.5) * cell, cell * 0.18, "#FFFFFF", _INK, 1.2))
    if legal_corners and not (bool(state.terminated) or bool(state.truncated)):
        for r, c in zip(*np.nonzero(_live_corners(state, variant))):
            x, y = margin + c * cell, top + r * cell
            ops.append(_Rect(x + cell * 0.3, y + cell * 0.3, cell * 0.4, cell * 0.4, "none", fills[mover], 2))
    if coords:
        for c in range(cols):
            ops.append(_Text(margin + (c + 0.5) * cell, top - cell * 0.3, column_label(c), cell * 0.45))
        for r in range(rows):
            ops.append(_Text(margin - cell * 0.2, top + (r + 0.75) * cell, str(rows - r), cell * 0.45, "end"))
    width, height = margin * 2 + cols * cell, top + rows * cell + margin
    if pieces:
        width, height = _piece_panel(ops, state, variant, names, fills, glyphs, width, top, cell, height)
    return width, height, ops


def _piece_panel(
    ops: list, state: Any, variant: Variant, names, fills, glyphs: bool, x0: float, top: float, cell: int, height: float
) -> tuple[float, float]:
    """Append each colour's remaining pieces (small shapes) to the right of the board; returns the new size."""
    remaining = np.asarray(state.remaining)
    scores = np.asarray(state.scores)
    mini = max(cell // 4, 3)
    slot = mini * 6
    per_row = 7
    y = top
    to_move = int(state.current_color)
    done = bool(state.terminated) or bool(state.truncated)
    for color, name in enumerate(names):
        marker = " (to move)" if color == to_move and not done else ""
        ops.append(_Rect(x0, y + cell * 0.1, cell * 0.55, cell * 0.55, fills[color], _INK, 1))
        ops.append(
            _Text(
                x0 + cell * 0.8,
                y + cell * 0.55,
                f"{name} {int(scores[color]):+d}{marker}",
                cell * 0.5,
                "start",
                bold=bool(marker),
            )
        )
        y += cell * 0.9
        left = [(i, p) for i, p in enumerate(variant.pieces) if remaining[color, i] > 0]
        for k, (i, piece) in enumerate(left):
            sx = x0 + (k % per_row) * slot
            sy = y + (k // per_row) * slot
            for r, c in piece.cells:
                ops.append(_Rect(sx + c * mini, sy + r * mini, mini, mini, fills[color], _INK, 0.6))
            if remaining[color, i] > 1:
                ops.append(
                    _Text(sx + slot - mini, sy + slot - mini * 0.6, f"x{int(remaining[color, i])}", mini * 1.6, "end")
                )
        y += -(-len(left) // per_row) * slot + cell * 0.4
    return x0 + per_row * slot + cell * 0.4, max(height, y + cell * 0.2)


def _paint(attr: str, color: str | None) -> str:
    """SVG paint attributes; `#RRGGBBAA` becomes a colour plus an opacity (older SVG readers lack 8-digit hex)."""
    if color is None:
        return f' {attr}="none"'
    if len(color) == 9:
        return f' {attr}="{color[:7]}" {attr}-opacity="{int(color[7:], 16) / 255:.2f}"'
    return f' {attr}="{color}"'


def _svg_op(op) -> str:
    if isinstance(op, _Rect):
        stroke = _paint("stroke", op.stroke) + f' stroke-width="{op.width:g}"' if op.stroke else ""
        return f'<rect x="{op.x:g}" y="{op.y:g}" width="{op.w:g}" height="{op.h:g}"{_paint("fill", op.fill)}{stroke}/>'
    if isinstance(op, _Line):
        return (
            f'<line x1="{op.x1:g}" y1="{op.y1:g}" x2="{op.x2:g}" y2="{op.y2:g}"{_paint("stroke", op.stroke)} '
            f'stroke-width="{op.width:g}" stroke-linecap="square"/>'
        )
    if isinstance(op, _Circle):
        stroke = _paint("stroke", op.stroke) + f' stroke-width="{op.width:g}"' if op.stroke else ""
        return f'<circle cx="{op.cx:g}" cy="{op.cy:g}" r="{op.r:g}"{_paint("fill", op.fill)}{stroke}/>'
    if isinstance(op, _Poly):
        pts = " ".join(f"{x:g},{y:g}" for x, y in op.points)
        return f'<polygon points="{pts}"{_paint("fill", op.fill)}/>'
    weight = ' font-weight="bold"' if op.bold else ""
    text = op.text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (
        f'<text x="{op.x:g}" y="{op.y:g}" font-size="{op.size:g}" text-anchor="{op.anchor}" '
        f'fill="{op.fill}"{weight}>{text}</text>'
    )


def to_svg(
    state: Any,
    env: Any = None,
    *,
    cell: int = 24,
    coords: bool = True,
    last_move: bool = True,
    legal_corners: bool = False,
    pieces: bool = True,
    glyphs: bool = True,
    title: str | None = None,
) -> str:
    """An SVG picture of the position: the board in colour-blind-safe colours (plus a per-colour glyph), piece
    outlines, optional coordinates, a dot on each square of the last move, an open square on every empty corner
    square where the colour to move has a legal placement (`legal_corners=True`), a ring on the start square
    before a colour's first move, and each colour's score and remaining pieces beside the board.

    Args:
        state: One unbatched `State`.
        env: The `Env`, `Variant` or variant name (guessed from the state's shape when omitted).
        cell: The side of a square in pixels.
        coords: Draw the column letters and row numbers.
        last_move: Mark the squares of the last move.
        legal_corners: Mark the empty corner squares where the colour to move has a legal placement.
        pieces: Draw each colour's score and remaining pieces beside the board.
        glyphs: Draw a per-colour glyph on each occupied square (for readers who do not tell the colours apart).
        title: A title line above the board.

    Returns:
        The SVG document as a string.

    Raises:
        VariantError: `env` is not given and the state's board is batched or matches no registered variant, or
            the variant has more colours than pictures draw.
    """
    variant = resolve_variant(state, env)
    width, height, ops = _layout(state, variant, cell, coords, last_move, legal_corners, pieces, glyphs, title)
    body = "\n".join(_svg_op(op) for op in ops)
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:g}" height="{height:g}" '
        f'viewBox="0 0 {width:g} {height:g}" font-family="DejaVu Sans, Arial, sans-serif">\n'
        f'<rect width="100%" height="100%" fill="{_PANEL}"/>\n{body}\n</svg>\n'
    )


def to_image(state: Any, env: Any = None, **kwargs):
    """The same picture as `to_svg` as a `PIL.Image` in RGB. Needs pillow (`pip install 'blokus-jax[render]'`).

    Args:
        state: One unbatched `State`.
        env: The `Env`, `Variant` or variant name (guessed from the state's shape when omitted).
        **kwargs: The keyword options of `to_svg`.

    Returns:
        The picture.

    Raises:
        ImportError: pillow is not installed (the message says how to install it).
        TypeError: An option that `to_svg` does not take.
        VariantError: As for `to_svg`.
    """
    try:
        from PIL import Image, ImageDraw, ImageFont
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError("PNG pictures need pillow; install it with pip install 'blokus-jax[render]'") from exc
    variant = resolve_variant(state, env)
    options = dict(cell=24, coords=True, last_move=True, legal_corners=False, pieces=True, glyphs=True, title=None)
    unknown = sorted(set(kwargs) - set(options))
    if unknown:
        raise TypeError(f"unknown picture options {unknown}; valid options are {sorted(options)}")
    options.update(kwargs)
    width, height, ops = _layout(state, variant, **options)
    image = Image.new("RGB", (int(np.ceil(width)), int(np.ceil(height))), _PANEL)
    draw = ImageDraw.Draw(image, "RGBA")
    fonts: dict[float, Any] = {}
    for op in ops:
        if isinstance(op, _Rect):
            fill = None if op.fill == "none" else op.fill
            draw.rectangle(
                (op.x, op.y, op.x + op.w, op.y + op.h),
                fill=fill,
                outline=op.stroke,
                width=max(int(round(op.width)), 1) if op.stroke else 0,
            )
        elif isinstance(op, _Line):
            draw.line((op.x1, op.y1, op.x2, op.y2), fill=op.stroke, width=max(int(round(op.width)), 1))
        elif isinstance(op, _Circle):
            draw.ellipse(
                (op.cx - op.r, op.cy - op.r, op.cx + op.r, op.cy + op.r),
                fill=op.fill,
                outline=op.stroke,
                width=max(int(round(op.width)), 1) if op.stroke else 0,
            )
        elif isinstance(op, _Poly):
            draw.polygon(op.points, fill=op.fill)
        else:
            font = fonts.get(op.size)
            if font is None:
                font = fonts[op.size] = ImageFont.load_default(size=op.size)
            anchor = {"start": "ls", "middle": "ms", "end": "rs"}[op.anchor]
            draw.text((op.x, op.y), op.text, fill=op.fill, font=font, anchor=anchor)
    return image


def to_png(state: Any, env: Any = None, path: str | Path | None = None, **kwargs) -> bytes:
    """The `to_svg` picture as PNG bytes (also written to `path` when given, atomically and never through a
    symbolic link: `blokus_jax.io.fileio.write_atomic`); needs pillow.

    Args:
        state: One unbatched `State`.
        env: The `Env`, `Variant` or variant name (guessed from the state's shape when omitted).
        path: A file to write the PNG to as well, or `None`.
        **kwargs: The keyword options of `to_svg`.

    Returns:
        The PNG file's bytes.

    Raises:
        ImportError: pillow is not installed (from `to_image`).
        BlokusError: `path` is a symbolic link or not a regular file, or writing it fails.
    """
    buffer = io.BytesIO()
    to_image(state, env, **kwargs).save(buffer, format="PNG")
    data = buffer.getvalue()
    if path is not None:
        fileio.write_atomic(path, data, what="picture")
    return data


def to_rgb(state: Any, env: Any = None, cell: int = 8) -> np.ndarray:
    """The board alone as an RGB array (empty squares light grey, one-pixel grid lines), for
    `render_mode="rgb_array"` style uses; plain NumPy, no pillow needed.

    Args:
        state: One unbatched `State`.
        env: The `Env`, `Variant` or variant name (guessed from the state's shape when omitted).
        cell: The side of a square in pixels.

    Returns:
        `uint8[H * cell, W * cell, 3]`.

    Raises:
        VariantError: `env` is not given and the state's board is batched or matches no registered variant, or
            the variant has more colours than pictures draw.
    """
    variant = resolve_variant(state, env)
    lut = np.asarray([[int(h[i : i + 2], 16) for i in (1, 3, 5)] for h in (_EMPTY, *color_hex(variant))], np.uint8)
    board = np.asarray(state.board).astype(np.int64)
    image = np.repeat(np.repeat(lut[board], cell, axis=0), cell, axis=1)
    if cell > 2:
        image[::cell, :, :] = 200
        image[:, ::cell, :] = 200
    return image
