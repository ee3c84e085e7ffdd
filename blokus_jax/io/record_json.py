"""The JSON fields of a game record, read with every type and size checked: a variant's definition
(`variant_to_dict` and back, bounded by the `MAX_RECORD_*` limits before any piece or table is built) and the
field checks that `blokus_jax.io.records` uses for the rest of a record, each raising
`RecordError` naming the field."""

from __future__ import annotations

from typing import Any

from blokus_jax.errors import BlokusError, RecordError
from blokus_jax.pieces import Piece
from blokus_jax.variants import MAX_BOARD_WIDTH, Variant, get_variant

#: Limits of a custom variant in a record, checked before anything is built.
MAX_RECORD_COLORS = 8  # the colours pictures can tell apart (render.DEFAULT_NAMES)
MAX_RECORD_PIECES = 64  # distinct pieces per colour
MAX_RECORD_PIECE_CELLS = 12
MAX_RECORD_COPIES = 127  # copies of one piece (int8 counters)
MAX_RECORD_PIECES_PER_COLOR = 256  # all copies of all pieces of one colour
MAX_RECORD_NAME = 200  # characters of a variant or piece name


def variant_to_dict(variant: Variant) -> dict[str, Any]:
    """A variant's full definition as JSON-ready data (the `variant` field of a custom variant's record).
    `variant_from_json` reads it back with every field checked.

    Args:
        variant: Any variant.

    Returns:
        A dict of lists, ints and strings; pieces as `[name, cells, copies]`.
    """
    return {
        "name": variant.name,
        "board_shape": list(variant.board_shape),
        "num_colors": variant.num_colors,
        "players_to_colors": [list(cs) for cs in variant.players_to_colors],
        "start_cells": [[list(rc) for rc in cells] for cells in variant.start_cells],
        "pieces": [[p.name, [list(c) for c in p.cells], p.copies] for p in variant.pieces],
        "bonus": variant.bonus,
        "shared_color": variant.shared_color,
    }


def _kind(value: Any) -> str:
    """`value`'s JSON type with its article, for messages: "a string", "an object", "null"."""
    if value is None:
        return "null"
    kind = {dict: "object", list: "list", str: "string", bool: "boolean", int: "integer", float: "number"}.get(
        type(value), type(value).__name__
    )
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _int(value: Any, where: str, low: int, high: int) -> int:
    """`value` if it is an integer (not a boolean) in `[low, high]`, else `RecordError` naming `where`."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise RecordError(f"record field {where} must be an integer, got {_kind(value)}")
    if not low <= value <= high:
        shown = str(value) if abs(value) < 10**12 else f"a {len(str(abs(value)))}-digit number"
        raise RecordError(f"record field {where} is {shown}; it must be in [{low}, {high}]")
    return value


def _list(value: Any, where: str, low: int, high: int) -> list:
    """`value` if it is a list of `low` to `high` entries, else `RecordError` naming `where`."""
    if not isinstance(value, list):
        raise RecordError(f"record field {where} must be a list, got {_kind(value)}")
    if not low <= len(value) <= high:
        raise RecordError(f"record field {where} has {len(value)} entries; it must have {low} to {high}")
    return value


def _str(value: Any, where: str, high: int = MAX_RECORD_NAME) -> str:
    if not isinstance(value, str):
        raise RecordError(f"record field {where} must be a string, got {_kind(value)}")
    if len(value) > high:
        raise RecordError(f"record field {where} is {len(value)} characters long; at most {high} are allowed")
    return value


def _cell(value: Any, where: str, rows: int, cols: int) -> tuple[int, int]:
    pair = _list(value, where, 2, 2)
    return _int(pair[0], f"{where}[0]", 0, rows - 1), _int(pair[1], f"{where}[1]", 0, cols - 1)


def variant_from_json(value: Any) -> Variant:
    """The variant of a record's `variant` field, every field checked (types and the `MAX_RECORD_*` limits)
    before any piece, table or array is built.

    Args:
        value: A registered variant name, or a custom definition as `variant_to_dict` writes it.

    Returns:
        The variant.

    Raises:
        RecordError: An unknown name, a value of another type, unknown or missing fields, a field of the wrong
            type or over its limit, or a definition the variant rules reject (the message names the field).
    """
    if isinstance(value, str):
        try:
            return get_variant(value)
        except BlokusError as exc:
            raise RecordError(f"bad variant in record: {exc}") from None
    if not isinstance(value, dict):
        raise RecordError(f"record field 'variant' must be a variant name or an object, got {_kind(value)}")
    required = ("name", "board_shape", "num_colors", "players_to_colors", "start_cells", "pieces")
    optional = ("bonus", "shared_color")
    unknown = sorted(str(k)[:40] for k in value if k not in required + optional)
    missing = [k for k in required if k not in value]
    if unknown or missing:
        raise RecordError(
            f"bad variant in record: unknown fields {unknown}, missing fields {missing}; a variant "
            f"has {list(required + optional)}"
        )
    name = _str(value["name"], "variant.name")
    shape = _list(value["board_shape"], "variant.board_shape", 2, 2)
    rows = _int(shape[0], "variant.board_shape[0]", 1, MAX_BOARD_WIDTH)
    cols = _int(shape[1], "variant.board_shape[1]", 1, MAX_BOARD_WIDTH)
    colors = _int(value["num_colors"], "variant.num_colors", 1, MAX_RECORD_COLORS)
    owners = [
        [
            _int(c, f"variant.players_to_colors[{p}][{k}]", 0, colors - 1)
            for k, c in enumerate(_list(cs, f"variant.players_to_colors[{p}]", 1, colors))
        ]
        for p, cs in enumerate(_list(value["players_to_colors"], "variant.players_to_colors", 1, colors))
    ]
    starts = [
        [
            _cell(rc, f"variant.start_cells[{c}][{k}]", rows, cols)
            for k, rc in enumerate(_list(cells, f"variant.start_cells[{c}]", 1, rows * cols))
        ]
        for c, cells in enumerate(_list(value["start_cells"], "variant.start_cells", 1, MAX_RECORD_COLORS))
    ]
    pieces, total = [], 0
    for k, entry in enumerate(_list(value["pieces"], "variant.pieces", 1, MAX_RECORD_PIECES)):
        where = f"variant.pieces[{k}]"
        piece_name, cells, copies = _list(entry, where, 3, 3)
        piece_name = _str(piece_name, f"{where}[0] (name)")
        cells = [
            _cell(rc, f"{where}[1][{i}]", MAX_BOARD_WIDTH, MAX_BOARD_WIDTH)
            for i, rc in enumerate(_list(cells, f"{where}[1] (cells)", 1, MAX_RECORD_PIECE_CELLS))
        ]
        total += _int(copies, f"{where}[2] (copies)", 1, MAX_RECORD_COPIES)
        pieces.append((piece_name, cells, copies))
    if total > MAX_RECORD_PIECES_PER_COLOR:
        raise RecordError(
            f"record field variant.pieces gives each colour {total} pieces; at most "
            f"{MAX_RECORD_PIECES_PER_COLOR} are allowed"
        )
    bonus = value.get("bonus", True)
    if not isinstance(bonus, bool):
        raise RecordError(f"record field variant.bonus must be true or false, got {_kind(bonus)}")
    shared = value.get("shared_color")
    shared = None if shared is None else _int(shared, "variant.shared_color", 0, colors - 1)
    try:
        built = tuple(Piece(n, tuple(map(tuple, cells)), copies) for n, cells, copies in pieces)
        return Variant(
            name,
            (rows, cols),
            colors,
            tuple(map(tuple, owners)),
            tuple(map(tuple, starts)),
            built,
            bonus=bonus,
            shared_color=shared,
        )
    except BlokusError as exc:
        raise RecordError(f"bad variant in record: {exc}") from exc
