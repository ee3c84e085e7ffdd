"""Polyomino shapes and their distinct fixed orientations (plain NumPy, used when a variant is built).

A shape is a set of `(row, col)` cells. Its *fixed orientations* are the distinct images under the 8 rotations and
reflections, each normalised so that its smallest row and smallest column are 0, and listed in lexicographic order of
their sorted cell lists (the order the Pentobi reference vectors use).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from blokus_jax.errors import PieceError

Cells = tuple[tuple[int, int], ...]

#: Most copies of one piece a colour may own: `State.remaining` counts them in an int8.
MAX_COPIES = 127


def is_int(value) -> bool:
    """`value` is an integer (Python or NumPy) and not a bool: the only numbers variant fields accept."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def normalize(cells: Iterable[Sequence[int]]) -> Cells:
    """Translate cells so the minimum row and column are 0 and return them sorted."""
    cells = [(int(r), int(c)) for r, c in cells]
    r0 = min(r for r, _ in cells)
    c0 = min(c for _, c in cells)
    return tuple(sorted((r - r0, c - c0) for r, c in cells))


def orientations(cells: Iterable[Sequence[int]]) -> list[Cells]:
    """All distinct fixed orientations of a shape, normalised and sorted lexicographically."""
    cells = [(int(r), int(c)) for r, c in cells]
    images = set()
    for flip in (False, True):
        pts = [(r, -c) if flip else (r, c) for r, c in cells]
        for _ in range(4):
            pts = [(c, -r) for r, c in pts]
            images.add(normalize(pts))
    return sorted(images)


def validate_cells(name: str, cells: Sequence[Sequence[int]]) -> Cells:
    """Check that `cells` is a non-empty, duplicate-free, edge-connected polyomino and return it normalised.

    Raises `PieceError` naming the piece and the problem otherwise.
    """
    try:
        pts = [(r, c) for r, c in cells]
    except (TypeError, ValueError) as exc:
        raise PieceError(f"piece {name!r}: cells must be a list of (row, col) integer pairs, got {cells!r}") from exc
    if not all(is_int(r) and is_int(c) for r, c in pts):
        raise PieceError(
            f"piece {name!r}: cells must be a list of (row, col) integer pairs (ints, not floats, "
            f"bools or strings), got {cells!r}"
        )
    pts = [(int(r), int(c)) for r, c in pts]
    if not pts:
        raise PieceError(f"piece {name!r} has no cells; give at least one (row, col) pair")
    if len(set(pts)) != len(pts):
        dup = sorted({p for p in pts if pts.count(p) > 1})
        raise PieceError(f"piece {name!r} lists cells {dup} more than once; list each cell once")
    seen = {pts[0]}
    frontier = [pts[0]]
    cellset = set(pts)
    while frontier:
        r, c = frontier.pop()
        for nb in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
            if nb in cellset and nb not in seen:
                seen.add(nb)
                frontier.append(nb)
    if len(seen) != len(pts):
        raise PieceError(
            f"piece {name!r} is not edge-connected: cells {sorted(cellset - seen)} do not share an edge "
            f"with the rest; a Blokus piece must be one polyomino"
        )
    return normalize(pts)


@dataclass(frozen=True)
class Piece:
    """One polyomino type of a variant's piece set: a name, its cells and how many copies each colour owns.

    Attributes:
        name: The piece's name (Pentobi's for the standard set: `"1"`, `"I3"`, `"X"`, ...).
        cells: Its `(row, col)` cells in one orientation: an edge-connected polyomino, stored normalised.
        copies: Copies each colour owns, from 1 to `MAX_COPIES`.

    Raises:
        PieceError: A name that is not a string, cells that are no polyomino, or a bad `copies`.
    """

    name: str
    cells: Cells
    copies: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise PieceError(f"piece name {self.name!r} is a {type(self.name).__name__}; name pieces with strings")
        object.__setattr__(self, "cells", validate_cells(self.name, self.cells))
        if not is_int(self.copies) or not 1 <= self.copies <= MAX_COPIES:
            raise PieceError(
                f"piece {self.name!r} has copies={self.copies!r}; each piece needs an int number of "
                f"copies in [1, {MAX_COPIES}]"
            )
        object.__setattr__(self, "copies", int(self.copies))

    @property
    def size(self) -> int:
        """Number of squares."""
        return len(self.cells)

    @property
    def orientations(self) -> list[Cells]:
        """Distinct fixed orientations, normalised and sorted."""
        return orientations(self.cells)


def _shape(rows: Sequence[str]) -> Cells:
    return tuple((r, c) for r, line in enumerate(rows) for c, ch in enumerate(line) if ch == "#")


#: The 21 standard Blokus polyominoes (sizes 1-5), named as Pentobi names them, smallest first.
STANDARD_SHAPES: dict[str, Cells] = {
    "1": _shape(["#"]),
    "2": _shape(["##"]),
    "I3": _shape(["###"]),
    "V3": _shape(["##", "#."]),
    "I4": _shape(["####"]),
    "L4": _shape(["###", "#.."]),
    "O": _shape(["##", "##"]),
    "T4": _shape(["###", ".#."]),
    "Z4": _shape(["##.", ".##"]),
    "F": _shape([".##", "##.", ".#."]),
    "I5": _shape(["#####"]),
    "L5": _shape(["####", "#..."]),
    "N": _shape(["###.", "..##"]),
    "P": _shape(["##", "##", "#."]),
    "T5": _shape(["###", ".#.", ".#."]),
    "U": _shape(["#.#", "###"]),
    "V5": _shape(["###", "#..", "#.."]),
    "W": _shape(["#..", "##.", ".##"]),
    "X": _shape([".#.", "###", ".#."]),
    "Y": _shape(["####", ".#.."]),
    "Z5": _shape(["##.", ".#.", ".##"]),
}

#: The Junior set: 12 shapes, two copies of each.
JUNIOR_NAMES = ("1", "2", "I3", "V3", "I4", "L4", "O", "T4", "Z4", "I5", "L5", "P")


def standard_pieces(names: Iterable[str] | None = None, copies: int = 1) -> tuple[Piece, ...]:
    """Pieces of the standard Blokus set, for building a custom `Variant`.

    Args:
        names: Names from `STANDARD_SHAPES` (Pentobi's: `"1"`, `"2"`, `"I3"`, ..., `"Z5"`); default all 21.
        copies: Copies of each piece a colour owns, from 1 to `MAX_COPIES`.

    Returns:
        One `Piece` a name, in the order given.

    Raises:
        PieceError: An unknown name, or `copies` not an int in `[1, MAX_COPIES]`.
    """
    names = list(STANDARD_SHAPES) if names is None else list(names)
    unknown = [n for n in names if n not in STANDARD_SHAPES]
    if unknown:
        raise PieceError(f"unknown standard piece names {unknown}; valid names are {list(STANDARD_SHAPES)}")
    return tuple(Piece(n, STANDARD_SHAPES[n], copies) for n in names)


def cells_array(cells: Cells) -> np.ndarray:
    """Cells as an `int32[k, 2]` array."""
    return np.asarray(cells, dtype=np.int32).reshape(-1, 2)
