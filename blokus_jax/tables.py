"""Per-variant precomputed tables and the action codec (NumPy, built once per variant).

Action layout (dense, documented contract):

```text
action = orientation * (H * W) + row * W + col        for a placement
action = num_orientations * H * W                      for the pass (the last index)
```

`orientation` is a global index over every fixed orientation of every piece (pieces in variant order, each
piece's orientations in lexicographic order of their normalised cells) and `(row, col)` is the top-left corner of
the orientation's bounding box. Anchors whose piece would stick out of the board exist in the index space but are
never legal. The layout maps one-to-one onto a `[num_orientations, H, W]` logit tensor, so convolutional policy
heads need no gather.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from blokus_jax.errors import IllegalActionError
from blokus_jax.variants import Variant


def split_action(action, board_shape: tuple[int, int]):
    """`(orientation, row, col)` of placement index `action` on a board of `board_shape`: the one place that
    unpacks the dense action layout.

    Plain integer arithmetic, so it works on Python ints, NumPy arrays and traced JAX arrays alike (elementwise on
    arrays). No range check: the pass gives orientation `num_orientations`; `Tables.decode` is the checked
    host-side version.

    Args:
        action: Placement index (a Python int, a NumPy or a JAX array).
        board_shape: `(rows, cols)` of the board.

    Returns:
        `(orientation, row, col)`, of the same kind as `action`.
    """
    rows, cols = board_shape
    return action // (rows * cols), (action // cols) % rows, action % cols


def join_action(orientation, row, col, board_shape: tuple[int, int]):
    """The placement index of `orientation` anchored at `(row, col)`: the inverse of `split_action` (no range
    check).

    Args:
        orientation: Orientation index (a Python int, a NumPy or a JAX array).
        row: Row of the top-left of the orientation's bounding box.
        col: Column of the same.
        board_shape: `(rows, cols)` of the board.

    Returns:
        The placement index, of the same kind as the arguments.
    """
    rows, cols = board_shape
    return (orientation * rows + row) * cols + col


@dataclass(frozen=True, eq=False)
class Tables:
    """NumPy tables derived from a `Variant`; the rules turn them into device constants at trace time."""

    variant: Variant

    @cached_property
    def orientation_cells(self) -> list[np.ndarray]:
        """Per orientation, its normalised cells as `int32[k, 2]`."""
        return [np.asarray(o, np.int32) for p in self.variant.pieces for o in p.orientations]

    @cached_property
    def orientation_piece(self) -> np.ndarray:
        """`int32[O]`: piece index of each orientation."""
        return np.asarray([i for i, p in enumerate(self.variant.pieces) for _ in p.orientations], np.int32)

    @cached_property
    def orientation_index_in_piece(self) -> np.ndarray:
        """`int32[O]`: index of each orientation within its piece's list."""
        return np.asarray([j for p in self.variant.pieces for j in range(len(p.orientations))], np.int32)

    @cached_property
    def piece_first_orientation(self) -> np.ndarray:
        """`int32[P]`: global index of each piece's first orientation."""
        return np.searchsorted(self.orientation_piece, np.arange(self.variant.num_pieces)).astype(np.int32)

    @property
    def num_orientations(self) -> int:
        return len(self.orientation_cells)

    @property
    def max_cells(self) -> int:
        """Largest piece size (cell slots per orientation)."""
        return max(p.size for p in self.variant.pieces)

    @property
    def num_actions(self) -> int:
        rows, cols = self.variant.board_shape
        return self.num_orientations * rows * cols + 1

    @property
    def pass_action(self) -> int:
        return self.num_actions - 1

    @cached_property
    def cell_offsets(self) -> np.ndarray:
        """`int32[O, K, 2]`: each orientation's cells, padded by repeating the first cell (idempotent for OR)."""
        out = np.zeros((self.num_orientations, self.max_cells, 2), np.int32)
        for o, cells in enumerate(self.orientation_cells):
            out[o, :] = cells[0]
            out[o, : len(cells)] = cells
        return out

    @cached_property
    def orientation_size(self) -> np.ndarray:
        """`int32[O]`: squares of each orientation's piece."""
        return np.asarray([len(c) for c in self.orientation_cells], np.int32)

    @cached_property
    def orientation_corners(self) -> np.ndarray:
        """`int32[O]`: corner cells of each orientation's shape, the cells that touch it diagonally and not by an
        edge: on an open board, the new corners a placement of it gives its colour to build on."""
        counts = []
        for cells in self.orientation_cells:
            shape = set(map(tuple, cells.tolist()))
            edges = {(r + dr, c + dc) for r, c in shape for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))}
            diagonals = {(r + dr, c + dc) for r, c in shape for dr, dc in ((1, 1), (1, -1), (-1, 1), (-1, -1))}
            counts.append(len(diagonals - edges - shape))
        return np.asarray(counts, np.int32)

    @cached_property
    def anchor_bits(self) -> np.ndarray:
        """`uint32[O, H]`: bit `c` of word `[o, r]` is set when orientation `o` anchored at `(r, c)` fits
        on the board. The set bits over the whole table count the placements on an empty board."""
        rows, cols = self.variant.board_shape
        out = np.zeros((self.num_orientations, rows), np.uint32)
        for o, cells in enumerate(self.orientation_cells):
            h, w = cells.max(axis=0) + 1
            if h <= rows and w <= cols:
                out[o, : rows - h + 1] = (1 << (cols - w + 1)) - 1
        return out

    @property
    def num_placements(self) -> int:
        """Distinct placements on an empty board."""
        return int(sum(bin(int(x)).count("1") for x in self.anchor_bits.ravel()))

    @cached_property
    def piece_sizes(self) -> np.ndarray:
        """`int32[P]`: squares per piece."""
        return np.asarray([p.size for p in self.variant.pieces], np.int32)

    @cached_property
    def piece_copies(self) -> np.ndarray:
        """`int32[P]`: copies of each piece per colour."""
        return np.asarray([p.copies for p in self.variant.pieces], np.int32)

    @cached_property
    def start_bits(self) -> np.ndarray:
        """`uint32[C, H]`: each colour's start cells as row bit masks."""
        rows, _ = self.variant.board_shape
        out = np.zeros((self.variant.num_colors, rows), np.uint32)
        for color, cells in enumerate(self.variant.start_cells):
            for r, c in cells:
                out[color, r] |= np.uint32(1 << c)
        return out

    @cached_property
    def color_owner(self) -> np.ndarray:
        """`int32[C]`: owning player of each colour, -1 for a shared colour."""
        return np.asarray([self.variant.color_owner(c) for c in range(self.variant.num_colors)], np.int32)

    @cached_property
    def player_color_matrix(self) -> np.ndarray:
        """`int32[num_players, C]`: 1 where the player scores the colour."""
        v = self.variant
        out = np.zeros((v.num_players, v.num_colors), np.int32)
        for player, colors in enumerate(v.players_to_colors):
            out[player, list(colors)] = 1
        return out

    # ----------------------------------------------------------------------------------------------- action codec
    def split_action(self, action):
        """`(orientation, row, col)` of placement index `action` on this variant's board (see
        `split_action`)."""
        return split_action(action, self.variant.board_shape)

    def join_action(self, orientation, row, col):
        """The placement index of `orientation` anchored at `(row, col)` (see `join_action`), on this variant's board.

        Args:
            orientation: Orientation index (a Python int, a NumPy or a JAX array).
            row: Row of the top-left of the orientation's bounding box.
            col: Column of the same.

        Returns:
            The placement index, of the same kind as the arguments (no range check).
        """
        return join_action(orientation, row, col, self.variant.board_shape)

    def decode(self, action: int) -> tuple[int, int, int, int]:
        """A placement index split into its parts (checked, host-side).

        Args:
            action: A placement index.

        Returns:
            `(piece, orientation_in_piece, row, col)`.

        Raises:
            IllegalActionError: `action` is not one integer in `[0, num_actions)`, or it is the pass.
        """
        action = self._check_index(action)
        if action == self.pass_action:
            raise IllegalActionError(f"action {action} is the pass; it has no piece or cells")
        o, r, c = self.split_action(action)
        return int(self.orientation_piece[o]), int(self.orientation_index_in_piece[o]), r, c

    def encode(self, piece: int, orientation: int, row: int, col: int) -> int:
        """The action index of `piece` in its `orientation`-th orientation with bounding-box corner `(row, col)`.

        Args:
            piece: Index of the piece in the variant's piece list.
            orientation: Index among that piece's distinct orientations.
            row: Row of the bounding box's top-left corner.
            col: Column of the same.

        Returns:
            The action index.

        Raises:
            IllegalActionError: `piece` or `orientation` is out of range, or the anchor is off the board.
        """
        rows, cols = self.variant.board_shape
        num_pieces = self.variant.num_pieces
        if not 0 <= piece < num_pieces:
            raise IllegalActionError(f"piece index {piece} out of range [0, {num_pieces})")
        count = len(self.variant.pieces[piece].orientations)
        if not 0 <= orientation < count:
            raise IllegalActionError(
                f"piece {self.variant.pieces[piece].name!r} has {count} orientations; got orientation {orientation}"
            )
        if not (0 <= row < rows and 0 <= col < cols):
            raise IllegalActionError(f"anchor {(row, col)} is off the {rows}x{cols} board")
        return self.join_action(int(self.piece_first_orientation[piece]) + orientation, row, col)

    def action_cells(self, action: int) -> np.ndarray:
        """The board cells a placement covers.

        Args:
            action: A placement index, or the pass.

        Returns:
            `int32[k, 2]` `(row, col)` cells; shape `[0, 2]` for the pass.

        Raises:
            IllegalActionError: `action` is not one integer in `[0, num_actions)`, or it puts the piece partly off
                the board.
        """
        rows, cols = self.variant.board_shape
        action = self._check_index(action)
        if action == self.pass_action:
            return np.zeros((0, 2), np.int32)
        o, r, c = self.split_action(action)
        cells = self.orientation_cells[o] + np.asarray((r, c), np.int32)
        if cells[:, 0].max() >= rows or cells[:, 1].max() >= cols:
            raise IllegalActionError(
                f"action {action} puts piece {self.variant.pieces[self.orientation_piece[o]].name!r} partly off "
                f"the board at cells {cells.tolist()}"
            )
        return cells

    def action_from_cells(self, cells) -> int:
        """The placement index covering exactly `cells`.

        Args:
            cells: `(row, col)` pairs in any order.

        Returns:
            The placement index.

        Raises:
            IllegalActionError: `cells` are not `(row, col)` pairs, are empty, are off the board, or no piece of the
                variant has that shape.
        """
        try:
            arr = np.asarray(cells, np.int64).reshape(-1, 2)
        except (TypeError, ValueError) as exc:
            raise IllegalActionError(f"cells must be (row, col) pairs, got {cells!r}") from exc
        rows, cols = self.variant.board_shape
        if arr.size == 0:
            raise IllegalActionError("no cells given; use pass_action to pass")
        if (arr < 0).any() or (arr[:, 0] >= rows).any() or (arr[:, 1] >= cols).any():
            raise IllegalActionError(f"cells {arr.tolist()} are not all on the {rows}x{cols} board")
        anchor = arr.min(axis=0)
        shape = tuple(sorted(map(tuple, (arr - anchor).tolist())))
        o = self._orientation_by_shape.get(shape)
        if o is None:
            raise IllegalActionError(
                f"cells {arr.tolist()} do not form a piece of variant {self.variant.name!r} "
                f"(pieces: {[p.name for p in self.variant.pieces]})"
            )
        return self.join_action(o, int(anchor[0]), int(anchor[1]))

    @cached_property
    def _orientation_by_shape(self) -> dict[tuple, int]:
        return {tuple(map(tuple, c.tolist())): o for o, c in enumerate(self.orientation_cells)}

    def _check_index(self, action) -> int:
        """`action` as a Python int after checking it is one integer (not a bool or float) in range."""
        value = np.asarray(action) if hasattr(action, "dtype") else action
        if isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.integer):
            value = int(value)
        if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
            raise IllegalActionError(f"action must be one integer index in [0, {self.num_actions}), got {action!r}")
        action = int(value)
        if not 0 <= action < self.num_actions:
            raise IllegalActionError(f"action {action} out of range [0, {self.num_actions})")
        return action
