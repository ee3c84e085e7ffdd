"""Variant definitions: board size, colours, players, start cells, piece set and scoring.

A `Variant` is plain static data (hashable, no arrays). The registered names match the Pentobi reference
engine's variants; `Variant(...)` also builds custom games (any board up to 30 columns, any polyomino set).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from blokus_jax.errors import PieceError, VariantError
from blokus_jax.pieces import JUNIOR_NAMES, Piece, is_int, standard_pieces

#: Widest board the bitboard rules support (one uint32 word per row, with room for an out-of-board guard bit).
MAX_BOARD_WIDTH = 30

#: Most colours: the board stores colour `c` as `c + 1` in an int8.
MAX_COLORS = 127

#: Bound on `num_orientations * rows * cols`: action ids are int32 and the sampler's float32 prefix sums over legal
#: placements are exact below 2**24.
MAX_PLACEMENTS = 2**24

Cell = tuple[int, int]


@dataclass(frozen=True)
class Variant:
    """Static description of one Blokus game.

    Attributes:
        name: identifier shown in records and tables.
        board_shape: `(rows, cols)`.
        num_colors: number of colours; colours move in order `0, 1, ..., num_colors - 1, 0, ...`.
        players_to_colors: for each player, the colours it places and scores (`classic_2p`: `((0, 2), (1, 3))`).
        start_cells: for each colour, the cells one of which its first piece must cover.
        pieces: the piece set each colour owns (with copy counts).
        bonus: `True` for the standard bonus (+15 for placing every piece, +5 more if the last was the monomino).
        shared_color: a colour owned by nobody (`classic_3p`): its k-th piece is placed by player `k mod
            num_players` and it is not scored.
    """

    name: str
    board_shape: tuple[int, int]
    num_colors: int
    players_to_colors: tuple[tuple[int, ...], ...]
    start_cells: tuple[tuple[Cell, ...], ...]
    pieces: tuple[Piece, ...]
    bonus: bool = True
    shared_color: int | None = None

    def __post_init__(self) -> None:
        _set = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731  (normalise user-given sequences)
        if not isinstance(self.name, str):
            raise VariantError(f"variant name {self.name!r} is a {type(self.name).__name__}; give a string")
        _set("board_shape", self._ints("board_shape", self.board_shape, "(rows, cols)", depth=0))
        _set(
            "players_to_colors",
            self._ints("players_to_colors", self.players_to_colors, "a list of colour lists (one per player)", depth=1),
        )
        _set(
            "start_cells",
            self._ints("start_cells", self.start_cells, "a list of (row, col) lists (one per colour)", depth=2),
        )
        for field, value in (("num_colors", self.num_colors), ("shared_color", self.shared_color)):
            if not (is_int(value) or (field == "shared_color" and value is None)):
                raise VariantError(
                    f"variant {self.name!r}: {field} must be an int, got {value!r} ({type(value).__name__})"
                )
        _set("num_colors", int(self.num_colors))
        if self.shared_color is not None:
            _set("shared_color", int(self.shared_color))
        if not isinstance(self.bonus, (bool, np.bool_)):
            raise VariantError(f"variant {self.name!r}: bonus must be True or False, got {self.bonus!r}")
        _set("bonus", bool(self.bonus))
        try:
            _set("pieces", tuple(p if isinstance(p, Piece) else Piece(*p) for p in self.pieces))
        except PieceError:
            raise
        except (TypeError, ValueError) as exc:
            raise VariantError(
                f"variant {self.name!r}: pieces must be a list of Piece(name, cells, copies), got "
                f"{self.pieces!r} ({exc})"
            ) from exc
        self._validate()

    def _ints(self, field: str, value, shape: str, depth: int) -> tuple:
        """`value` as nested tuples of Python ints (`depth` levels of lists around the int pairs/list), raising
        `VariantError` naming `field` for anything else (floats, bools and strings are not converted)."""

        def convert(item, level):
            if level < 0:
                if not is_int(item):
                    raise TypeError(f"{item!r} is a {type(item).__name__}, not an int")
                return int(item)
            if isinstance(item, (str, bytes)) or not hasattr(item, "__iter__"):
                raise TypeError(f"{item!r} is not a list")
            return tuple(convert(x, level - 1) for x in item)

        try:
            out = convert(value, depth)
            if field == "board_shape" or depth == 2:
                pairs = [out] if depth == 0 else [p for group in out for p in group]
                if any(len(p) != 2 for p in pairs):
                    raise TypeError("expected (row, col) pairs")
            return out
        except TypeError as exc:
            raise VariantError(
                f"variant {self.name!r}: {field} must be {shape}, all ints, got {value!r} ({exc})"
            ) from exc

    def _validate(self) -> None:
        rows, cols = self.board_shape
        if len(self.board_shape) != 2 or rows < 1 or cols < 1:
            raise VariantError(f"variant {self.name!r}: board_shape {self.board_shape} must be two positive ints")
        if cols > MAX_BOARD_WIDTH:
            raise VariantError(
                f"variant {self.name!r}: board is {cols} columns wide; at most {MAX_BOARD_WIDTH} are supported "
                f"(each row is one 32-bit word)"
            )
        if not 1 <= self.num_colors <= MAX_COLORS:
            raise VariantError(
                f"variant {self.name!r}: num_colors is {self.num_colors}; it must be in [1, "
                f"{MAX_COLORS}] (the board stores colour c as c + 1 in an int8)"
            )
        if not self.pieces:
            raise VariantError(f"variant {self.name!r} has no pieces; give at least one Piece")
        names = [p.name for p in self.pieces]
        if len(set(names)) != len(names):
            raise VariantError(f"variant {self.name!r}: piece names {names} repeat; use copies= for duplicates")
        for i, p in enumerate(self.pieces):
            for q in self.pieces[:i]:
                if p.cells in q.orientations:
                    raise VariantError(
                        f"variant {self.name!r}: pieces {q.name!r} and {p.name!r} are the same shape; "
                        f"keep one and set copies={q.copies + p.copies}"
                    )
        fits = [
            p.name
            for p in self.pieces
            if not any(max(r for r, _ in o) < rows and max(c for _, c in o) < cols for o in p.orientations)
        ]
        if fits:
            raise VariantError(
                f"variant {self.name!r}: board {rows}x{cols} is too small for pieces {fits}; enlarge the board "
                f"or drop those pieces"
            )
        placements = sum(len(p.orientations) for p in self.pieces) * rows * cols
        if placements >= MAX_PLACEMENTS:
            raise VariantError(
                f"variant {self.name!r}: {placements} placement ids (orientations x rows x cols) for a {rows}x{cols} "
                f"board; at most {MAX_PLACEMENTS - 1} are supported: use a smaller board or fewer pieces"
            )
        if len(self.start_cells) != self.num_colors:
            raise VariantError(
                f"variant {self.name!r}: start_cells has {len(self.start_cells)} entries but there are "
                f"{self.num_colors} colours; give one list of start cells per colour"
            )
        for color, cells in enumerate(self.start_cells):
            if not cells:
                raise VariantError(f"variant {self.name!r}: colour {color} has no start cell; give at least one")
            for r, c in cells:
                if not (0 <= r < rows and 0 <= c < cols):
                    raise VariantError(
                        f"variant {self.name!r}: start cell {(r, c)} of colour {color} is off the {rows}x{cols} "
                        f"board; rows must be in [0, {rows - 1}] and columns in [0, {cols - 1}]"
                    )
        if not self.players_to_colors or any(not cs for cs in self.players_to_colors):
            raise VariantError(f"variant {self.name!r}: every player needs at least one colour")
        owned = [c for cs in self.players_to_colors for c in cs]
        expected = [c for c in range(self.num_colors) if c != self.shared_color]
        if sorted(owned) != expected:
            raise VariantError(
                f"variant {self.name!r}: players_to_colors {self.players_to_colors} must give each colour in "
                f"{expected} to exactly one player"
                + ("" if self.shared_color is None else f" (the shared colour {self.shared_color} to none)")
            )
        if self.shared_color is not None and not 0 <= self.shared_color < self.num_colors:
            raise VariantError(
                f"variant {self.name!r}: shared_color {self.shared_color} is not a colour in [0, {self.num_colors})"
            )

    @property
    def num_players(self) -> int:
        """Number of players (seats)."""
        return len(self.players_to_colors)

    @property
    def num_pieces(self) -> int:
        """Number of distinct piece types."""
        return len(self.pieces)

    @property
    def squares_per_color(self) -> int:
        """Squares in one colour's full piece set."""
        return sum(p.size * p.copies for p in self.pieces)

    def color_owner(self, color: int) -> int:
        """The player who owns a colour.

        Args:
            color: The colour.

        Returns:
            The player's index, or -1 for the shared colour.
        """
        for player, colors in enumerate(self.players_to_colors):
            if color in colors:
                return player
        return -1


_CORNERS_20 = (((0, 0),), ((0, 19),), ((19, 19),), ((19, 0),))
_DUO_STARTS = (((4, 4),), ((9, 9),))


def _classic() -> Variant:
    return Variant("classic", (20, 20), 4, ((0,), (1,), (2,), (3,)), _CORNERS_20, standard_pieces())


def _classic_2p() -> Variant:
    return Variant("classic_2p", (20, 20), 4, ((0, 2), (1, 3)), _CORNERS_20, standard_pieces())


def _classic_3p() -> Variant:
    return Variant("classic_3p", (20, 20), 4, ((0,), (1,), (2,)), _CORNERS_20, standard_pieces(), shared_color=3)


def _duo() -> Variant:
    return Variant("duo", (14, 14), 2, ((0,), (1,)), _DUO_STARTS, standard_pieces())


def _junior() -> Variant:
    return Variant(
        "junior", (14, 14), 2, ((0,), (1,)), _DUO_STARTS, standard_pieces(JUNIOR_NAMES, copies=2), bonus=False
    )


def _simple() -> Variant:
    small = [n for n in ("1", "2", "I3", "V3", "I4", "L4", "O", "T4", "Z4")]
    return Variant("simple", (7, 7), 2, ((0,), (1,)), (((0, 0),), ((6, 6),)), standard_pieces(small))


#: Registered variant names and their constructors.
VARIANTS: dict[str, Callable[[], Variant]] = {
    "classic": _classic,
    "classic_2p": _classic_2p,
    "classic_3p": _classic_3p,
    "duo": _duo,
    "junior": _junior,
    "simple": _simple,
}


#: The SGF game type (`GM`) of each variant that Pentobi knows (its `.blksgf` files and GTP engine).
GAMES: dict[str, str] = {
    "classic": "Blokus",
    "classic_2p": "Blokus Two-Player",
    "classic_3p": "Blokus Three-Player",
    "duo": "Blokus Duo",
    "junior": "Blokus Junior",
}


def get_variant(name: str | Variant, /, **overrides) -> Variant:
    """The registered variant `name` (or a given `Variant`) with fields replaced by `overrides`.

    Args:
        name: A name from `variant_names()` (`"classic"`, `"duo"`, ...) or a `Variant`.
        **overrides: `Variant` fields to replace (e.g. `board_shape`, `start_cells`).

    Returns:
        The `Variant`, checked.

    Raises:
        VariantError: An unknown name or field, or field values that make no valid variant (the message names
            the field).
    """
    if isinstance(name, Variant):
        variant = name
    elif isinstance(name, str) and name in VARIANTS:
        variant = VARIANTS[name]()
    else:
        raise VariantError(f"unknown variant {name!r}; valid names are {sorted(VARIANTS)}, or pass a Variant object")
    fields = {f.name for f in dataclasses.fields(Variant)}
    bad = sorted(set(overrides) - fields)
    if bad:
        raise VariantError(f"unknown variant fields {bad}; valid fields are {sorted(fields)}")
    return dataclasses.replace(variant, **overrides) if overrides else variant


def variant_names() -> Sequence[str]:
    """The registered variant names, in registration order.

    Returns:
        The names `blokus_jax.make` and `get_variant` accept.
    """
    return tuple(VARIANTS)
