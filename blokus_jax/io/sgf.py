"""Pentobi's `.blksgf` dialect of SGF: read the main line of a game into placements, and write one back.

`GM[Blokus]`, `GM[Blokus Two-Player]`, `GM[Blokus Three-Player]`, `GM[Blokus Duo]` and `GM[Blokus
Junior]`: one node per placement, e.g. `;B[f9,e10,f10,g10,f11]` (colours `B`/`W` with two colours, `1`..
`4` otherwise), column letters from `a`, row numbers from 1 at the bottom. The format has no passes; the game
logic that fills them in (and checks every move) lives in `blokus_jax.io.records`, which builds a
`GameRecord` from the `SgfGame` read here.

The reader is iterative (no recursion, so any nesting depth is fine), linear in the text's length, and raises
`RecordError` naming the line, property or move for anything malformed; it never
builds more moves than a game of the variant can have.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from blokus_jax.errors import BlokusError, IllegalActionError, RecordError
from blokus_jax.io.render import cells_text, parse_cell_name
from blokus_jax.rollout import max_game_length
from blokus_jax.tables import Tables
from blokus_jax.variants import GAMES, Variant, get_variant

#: Friendly metadata keys and the standard SGF root properties they are written as.
METADATA: dict[str, str] = {
    "game_name": "GN",
    "date": "DT",
    "event": "EV",
    "round": "RO",
    "place": "PC",
    "source": "SO",
    "annotator": "AN",
    "user": "US",
    "copyright": "CP",
    "comment": "C",
    "game_comment": "GC",
}
#: Private root property holding metadata without a standard SGF property (a JSON object of strings).
EXTRA = "XBJ"
_SETUP = {"AB", "AW", "AE", "A1", "A2", "A3", "A4", "PL"}
_IDENT = re.compile(r"[A-Z0-9]+")
_SPACE = re.compile(r"\s*")
_MOVE = re.compile(r"[BW0-9]")
#: Most nodes a main line may have (a classic game has 85); more means the file is not a game record.
MAX_NODES = 10_000


@dataclass(frozen=True)
class SgfGame:
    """The main line of a `.blksgf` file: the variant, each placement's colour and env action id (no passes),
    the players' names, the metadata and the root's `RE` result (`None` if absent)."""

    variant: Variant
    colors: tuple[int, ...]
    actions: tuple[int, ...]
    players: tuple[str, ...]
    metadata: dict[str, str] = field(default_factory=dict)
    result: str | None = None


def color_ids(variant: Variant) -> tuple[str, ...]:
    """The move property of each colour in `.blksgf`.

    Args:
        variant: The rules.

    Returns:
        `("B", "W")` with two colours, else `("1", "2", ...)`.
    """
    return ("B", "W") if variant.num_colors == 2 else tuple(str(c + 1) for c in range(variant.num_colors))


def player_props(variant: Variant) -> tuple[str, ...]:
    """The root property naming each player in `.blksgf`.

    Args:
        variant: The rules.

    Returns:
        `("PB", "PW")` with two players, else `("P1", "P2", ...)`.
    """
    return ("PB", "PW") if variant.num_players == 2 else tuple(f"P{p + 1}" for p in range(variant.num_players))


def default_players(variant: Variant) -> tuple[str, ...]:
    """The names used when a record names no players.

    Args:
        variant: The rules.

    Returns:
        `("Player 1", "Player 2", ...)`, one a player.
    """
    return tuple(f"Player {p + 1}" for p in range(variant.num_players))


def result_value(player_scores: Sequence[int]) -> str:
    """The `RE` value of a finished two-player game.

    Args:
        player_scores: The two players' scores.

    Returns:
        `B+n` (the first player won by `n`), `W+n` or `0`.
    """
    diff = int(player_scores[0]) - int(player_scores[1])
    return "0" if diff == 0 else f"B+{diff}" if diff > 0 else f"W+{-diff}"


@functools.lru_cache(maxsize=16)
def _tables(variant: Variant) -> Tables:
    return Tables(variant)


# ------------------------------------------------------------------------------------------------------ syntax
def parse_main_line(text: str) -> list[list[tuple[str, list[str]]]]:
    """The main line of the first game tree in `text`: its nodes, each a list of `(property, values)`.

    The main line is a tree's own nodes followed by the main line of its first subtree; other variations are
    checked for syntax and skipped. Iterative, so deep nesting costs memory proportional to the depth only.
    """
    pos = _SPACE.match(text, 0).end()
    length = len(text)

    def where(at: int) -> str:
        return f"line {text.count(chr(10), 0, at) + 1}"

    if pos >= length or text[pos] != "(":
        raise RecordError("not an SGF file: it must start with '(' (is the file empty or truncated?)")
    nodes: list[list[tuple[str, list[str]]]] = []
    stack = [[True, False]]  # per open tree: [on the main line, a subtree has been seen]
    pos += 1
    while stack:
        pos = _SPACE.match(text, pos).end()
        if pos >= length:
            raise RecordError(f"truncated file: a game tree is not closed with ')' ({where(pos)})")
        ch = text[pos]
        frame = stack[-1]
        if ch == ";" and not frame[1]:
            pos, node = _node(text, pos + 1, where)
            if frame[0]:
                nodes.append(node)
                if len(nodes) > MAX_NODES:
                    raise RecordError(
                        f"the main line has more than {MAX_NODES} nodes ({where(pos)}); a Blokus "
                        f"record has one node per placement"
                    )
        elif ch == "(":
            stack.append([frame[0] and not frame[1], False])
            frame[1] = True
            pos += 1
        elif ch == ")":
            stack.pop()
            pos += 1
        else:
            raise RecordError(f"malformed SGF: unexpected {ch!r} at {where(pos)}")
    return nodes


def _node(text: str, pos: int, where) -> tuple[int, list[tuple[str, list[str]]]]:
    """Parse the properties of one node starting at `pos`; returns the position after it and the properties."""
    props = []
    length = len(text)
    while True:
        pos = _SPACE.match(text, pos).end()
        match = _IDENT.match(text, pos)
        if match is None:
            return pos, props
        ident, start = match.group(), pos
        pos = _SPACE.match(text, match.end()).end()
        values = []
        while pos < length and text[pos] == "[":
            pos, value = _value(text, pos, where)
            values.append(value)
            pos = _SPACE.match(text, pos).end()
        if not values:
            raise RecordError(f"malformed SGF: property {ident} has no value at {where(start)}")
        props.append((ident, values))


def _value(text: str, start: int, where) -> tuple[int, str]:
    """Parse `[...]` at `start` (`\\` escapes the next character); returns the position after it and the
    unescaped value."""
    parts = []
    pos = start + 1
    while True:
        close = text.find("]", pos)
        if close < 0:
            raise RecordError(f"truncated file: a property value opened at {where(start)} is not closed")
        escape = text.find("\\", pos, close)
        if escape < 0:
            parts.append(text[pos:close])
            return close + 1, "".join(parts)
        parts.append(text[pos:escape])
        if escape + 1 < len(text):
            parts.append(text[escape + 1])
        pos = escape + 2


# ------------------------------------------------------------------------------------------------------ reading
def _root_value(root: dict[str, list[str]], ident: str) -> str | None:
    values = root.get(ident)
    if values is None:
        return None
    if len(values) != 1:
        raise RecordError(f"root property {ident} must have exactly one value, got {len(values)}")
    return values[0]


def _extra_metadata(text: str) -> dict[str, str]:
    """The `XBJ` root property: a JSON object whose values are strings (numbers and booleans are converted)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"root property {EXTRA} must hold a JSON object of strings: {exc}") from None
    if not isinstance(data, dict):
        raise RecordError(f"root property {EXTRA} must hold a JSON object of strings, got {text[:40]!r}")
    bad = [k for k, v in data.items() if isinstance(v, (dict, list)) or v is None]
    if bad:
        raise RecordError(f"root property {EXTRA}: metadata values must be strings; {bad[0]!r:.60} is not")
    return {k: str(v) for k, v in data.items()}


def read(text: str) -> SgfGame:
    """Read a Pentobi `.blksgf` text: the variant from `GM`, the players, metadata, `RE` and each placement
    of the main line as an env action id. Checks syntax, the game type, setup properties (not supported),
    colours, coordinates and piece shapes, and that there are no more placements than a game can have; it does
    not check the rules (see `blokus_jax.io.records.from_blksgf`). Raises `RecordError`."""
    nodes = parse_main_line(text)
    if not nodes:
        raise RecordError("the SGF file has no nodes; a record needs at least a root node with GM[...]")
    root: dict[str, list[str]] = {}
    for ident, values in nodes[0]:
        root.setdefault(ident, values)
    game = _root_value(root, "GM")
    by_game = {gm: name for name, gm in GAMES.items()}
    if game not in by_game:
        raise RecordError(
            f"unsupported game GM[{game:.60}]; blokus-jax reads {sorted(by_game)}"
            if game is not None
            else "the root node has no GM[...] game type"
        )
    variant = get_variant(by_game[game])
    ids = {cid: c for c, cid in enumerate(color_ids(variant))}
    moves = []
    for index, props in enumerate(nodes):
        for ident, values in props:
            if ident in _SETUP:
                raise RecordError(
                    f"node {index + 1}: setup property {ident} is not supported; only games played "
                    f"from the empty board can be replayed"
                )
            if _MOVE.fullmatch(ident):
                moves.append((ident, values))
    limit = max_game_length(variant)
    if len(moves) > limit:
        raise RecordError(f"the file has {len(moves)} moves but no game of {variant.name!r} has more than {limit}")
    tables = _tables(variant)
    largest = max(p.size for p in variant.pieces)
    colors, actions = [], []
    for move, (ident, values) in enumerate(moves, start=1):
        if ident not in ids:
            raise RecordError(f"move {move}: {ident}[...] is not a colour of {game} (colours: {list(ids)})")
        if len(values) != 1 or not values[0]:
            raise RecordError(f"move {move}: {ident} needs exactly one non-empty list of points")
        points = values[0].split(",", largest)
        if len(points) > largest:
            raise RecordError(
                f"move {move}: {ident}[{values[0]:.40}...] lists more than {largest} points; no "
                f"piece of {variant.name!r} is that large"
            )
        try:
            cells = [parse_cell_name(variant, p) for p in points]
        except IllegalActionError as exc:
            raise RecordError(f"move {move}: bad coordinate: {exc}") from None
        try:
            actions.append(tables.action_from_cells(cells))
        except BlokusError as exc:
            raise RecordError(f"move {move} ({ident}[{values[0]}]): {exc}") from exc
        colors.append(ids[ident])
    players = tuple(_root_value(root, p) or d for p, d in zip(player_props(variant), default_players(variant)))
    metadata = {k: _root_value(root, p) for k, p in METADATA.items() if p in root}
    if EXTRA in root:
        metadata.update(_extra_metadata(_root_value(root, EXTRA)))
    return SgfGame(variant, tuple(colors), tuple(actions), players, metadata, _root_value(root, "RE"))


# ------------------------------------------------------------------------------------------------------ writing
def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def write(
    variant: Variant,
    players: Sequence[str],
    metadata: dict[str, str],
    moves: Iterable[tuple[int, np.ndarray]],
    result: str | None,
    app: str,
) -> str:
    """Pentobi `.blksgf` text: a root node with `GM`, `FF`, `CA`, `AP` (`app`), the players' names
    that differ from the defaults, `RE` (`result`, if given) and the metadata (standard properties where SGF
    has one, the rest as JSON in `XBJ`), then one node per `(colour, cells)` placement.

    Args:
        variant: One of Pentobi's games with its standard rules (see `GAMES`).
        players: The players' names, one a player.
        metadata: `str -> str` data for the root node.
        moves: `(colour, int32[k, 2] cells)` placements in the order played (no passes).
        result: The `RE` value (`"B+3"`, `"W+1"`, `"0"`), or `None` for none.
        app: The `AP` value, the program that wrote the file.

    Returns:
        The `.blksgf` text.

    Raises:
        RecordError: A variant that Pentobi does not have (or one with changed rules).
    """
    if GAMES.get(variant.name) is None or variant != get_variant(variant.name):
        raise RecordError(
            f"variant {variant.name!r} has no .blksgf game type (Pentobi knows {sorted(GAMES)} "
            f"with their standard rules); save it with to_json() instead"
        )
    root = [("GM", GAMES[variant.name]), ("FF", "4"), ("CA", "UTF-8"), ("AP", app)]
    root += [
        (prop, name) for prop, name, d in zip(player_props(variant), players, default_players(variant)) if name != d
    ]
    if result is not None:
        root.append(("RE", result))
    extra = {k: v for k, v in metadata.items() if k not in METADATA}
    root += [(METADATA[k], v) for k, v in metadata.items() if k in METADATA]
    if extra:
        root.append((EXTRA, json.dumps(extra, sort_keys=True)))
    ids = color_ids(variant)
    lines = ["(", ";" + "".join(f"{p}[{_escape(v)}]" for p, v in root)]
    lines += [f";{ids[c]}[{cells_text(variant, cells)}]" for c, cells in moves]
    return "\n".join(lines + [")"]) + "\n"
