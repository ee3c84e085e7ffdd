"""Move features for every placement at once: the per-cell planes of a position and their sums over each placement.

A *move feature* of a placement is a sum, over the cells the placement covers (or over its edge neighbours, or its
corner neighbours), of a per-cell indicator plane of the position seen from the colour to move: the opponent's
attach points, the mover's own attach points, occupied cells, the cells next to the opponent's newest piece, and so
on (`PLANES`). One gather table per variant (`FeatureTables`) turns every plane into that sum for the whole action
space at once, so `move_features` is a handful of gathers, jittable and vmappable on CPU and GPU alike. Piece
identity (one-hot) and, optionally, a network's logit complete the features. The model that weighs them is
`blokus_agents.search.move_model`; its fit is `blokus_agents.search.move_fit`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax.env import State
from blokus_jax.observe import observe
from blokus_jax.tables import Tables

#: The per-cell indicator planes, seen from the colour to move, in feature order. Each gives three features of a
#: placement: the sum over its cells (`cells:`), over its edge neighbours (`edges:`) and over its corner
#: neighbours (`corners:`).
PLANES: tuple[str, ...] = (
    "occupied",  # any colour's cell
    "own",  # the mover's cells
    "opponent",  # cells of the other players' colours
    "off_board",  # outside the board (only edge and corner neighbours reach it)
    "own_attach",  # the mover's attach points: cells it may place on that touch it at a corner (or its start cells)
    "own_blocked",  # empty cells the mover may not cover (edge-adjacent to its own pieces)
    "opp_attach",  # the opponents' attach points
    "near_opp_attach",  # empty cells edge-adjacent to an opponent attach point (and not one themselves)
    "opp_blocked",  # empty cells the opponents may not cover (edge-adjacent to their pieces)
    "last_attach",  # opponent attach points at a corner of the newest opponent piece
    "near_last",  # empty cells within one step (8 neighbours) of the newest opponent piece
    "open",  # empty cells with at least three empty edge neighbours
    "centre",  # closeness to the board's centre, 1 at the centre falling to 0 at the corners
)

#: The neighbourhoods each plane is summed over, in feature order.
REGIONS: tuple[str, ...] = ("cells", "edges", "corners")

#: Phase boundaries of the shipped models: a phase starts once the mover has placed this many pieces.
DEFAULT_PHASES: tuple[int, ...] = (0, 2, 5, 9)

#: What a model's planes are computed from: the whole position (`cell_planes`, for the search's prior) or what the
#: mover's observation shows (`observation_planes`, for a policy network that carries the model).
INPUTS: tuple[str, ...] = ("state", "observation")


def feature_names(tables: Tables, network: bool) -> tuple[str, ...]:
    """The names of the features `move_features` computes for a variant, in order: `REGION:PLANE` for each region
    and plane, `piece:NAME` for each piece, then `network` when a network's logit is a feature.

    Args:
        tables: the variant's tables.
        network: whether the network's logit is the last feature.

    Returns:
        The feature names, one per column of `move_features`' result.
    """
    names = [f"{region}:{plane}" for region in REGIONS for plane in PLANES]
    names += [f"piece:{piece.name}" for piece in tables.variant.pieces]
    return tuple(names + (["network"] if network else []))


@dataclass(frozen=True, eq=False)
class FeatureTables:
    """Gather tables of one variant: for every placement, the flat indices of its cells, edge neighbours and corner
    neighbours in a padded board (one cell of padding above and left, enough below and right for any anchor), with
    unused slots pointing at one extra zero entry.

    Attributes:
        tables: the variant's tables.
    """

    tables: Tables

    @cached_property
    def padded_shape(self) -> tuple[int, int]:
        """`(rows, cols)` of the padded board: one row/column before the board, enough after it for every anchor."""
        rows, cols = self.tables.variant.board_shape
        extent = int(self.tables.cell_offsets.max()) + 2
        return rows + 1 + extent, cols + 1 + extent

    @cached_property
    def regions(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`int32[A - 1, K]` index tables of the cells, edge neighbours and corner neighbours of every placement
        (`A` the number of actions; the pass has none), into the flattened padded board plus one zero slot."""
        rows, cols = self.tables.variant.board_shape
        prow, pcol = self.padded_shape
        zero = prow * pcol
        shapes = []
        for cells in self.tables.orientation_cells:
            shape = {tuple(c) for c in cells.tolist()}
            edges = {(r + dr, c + dc) for r, c in shape for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))} - shape
            diagonal = {(r + dr, c + dc) for r, c in shape for dr, dc in ((1, 1), (1, -1), (-1, 1), (-1, -1))}
            shapes.append((sorted(shape), sorted(edges), sorted(diagonal - edges - shape)))
        out = []
        for region in range(3):
            width = max(len(s[region]) for s in shapes)
            per_orientation = np.zeros((len(shapes), width, 2), np.int64)
            valid = np.zeros((len(shapes), width), bool)
            for o, s in enumerate(shapes):
                per_orientation[o, : len(s[region])] = s[region]
                valid[o, : len(s[region])] = True
            # anchors (o, r, c) in action order: [O, H, W, K]
            r = np.arange(rows)[None, :, None, None]
            c = np.arange(cols)[None, None, :, None]
            dr = per_orientation[:, None, None, :, 0]
            dc = per_orientation[:, None, None, :, 1]
            flat = (r + 1 + dr) * pcol + (c + 1 + dc)
            used = np.broadcast_to(valid[:, None, None, :], flat.shape)
            index = np.where(used, flat, zero).reshape(-1, width).astype(np.int32)
            out.append(index)
        return tuple(out)

    @cached_property
    def region_kernel(self) -> tuple[np.ndarray, tuple[int, int]]:
        """`(f32[KH * KW * len(REGIONS), O], (KH, KW))`: the 0/1 masks of every orientation's regions over a
        `KH x KW` window of the padded board whose top-left cell is the anchor's padded position; row
        `(i * KW + j) * len(REGIONS) + region` of column `o` is 1 when cell `(i, j)` of the window is in that
        region of orientation `o` (the same cells as `regions`, anchored at `(0, 0)`)."""
        rows, cols = self.tables.variant.board_shape
        _, pcol = self.padded_shape
        zero = self.padded_shape[0] * pcol
        num_orientations = len(self.tables.orientation_cells)
        first = [index.reshape(num_orientations, rows * cols, -1)[:, 0] for index in self.regions]  # anchor (0, 0)
        used = np.concatenate([f[f != zero] for f in first])
        kh, kw = int(used.max() // pcol) + 1, int((used % pcol).max()) + 1
        kernel = np.zeros((kh, kw, len(self.regions), num_orientations), np.float32)
        for region, index in enumerate(first):
            for o in range(num_orientations):
                for flat in index[o][index[o] != zero]:
                    kernel[flat // pcol, flat % pcol, region, o] = 1.0
        return kernel.reshape(-1, num_orientations), (kh, kw)

    @cached_property
    def piece_index(self) -> np.ndarray:
        """`int32[A - 1]`: the piece of every placement."""
        rows, cols = self.tables.variant.board_shape
        return np.repeat(self.tables.orientation_piece, rows * cols).astype(np.int32)


_FEATURE_TABLES: dict[Any, FeatureTables] = {}


def feature_tables(tables: Tables) -> FeatureTables:
    """The (cached) `FeatureTables` of a variant's tables."""
    key = tables.variant
    if key not in _FEATURE_TABLES:
        _FEATURE_TABLES[key] = FeatureTables(tables)
    return _FEATURE_TABLES[key]


def _shift(plane: jax.Array, dr: int, dc: int) -> jax.Array:
    """`out[r, c] = plane[r - dr, c - dc]` (False where that is off the board)."""
    rows, cols = plane.shape
    padded = jnp.pad(plane, ((1, 1), (1, 1)))
    return padded[1 - dr : 1 - dr + rows, 1 - dc : 1 - dc + cols]


def _edge_dilate(plane: jax.Array) -> jax.Array:
    return _shift(plane, 1, 0) | _shift(plane, -1, 0) | _shift(plane, 0, 1) | _shift(plane, 0, -1)


def _corner_dilate(plane: jax.Array) -> jax.Array:
    return _shift(plane, 1, 1) | _shift(plane, 1, -1) | _shift(plane, -1, 1) | _shift(plane, -1, -1)


def _attach(tables: Tables, board: jax.Array, color: jax.Array, first: jax.Array) -> tuple[jax.Array, jax.Array]:
    """`(attach, blocked)` bool planes of `color`: its attach points (empty, not edge-adjacent to its pieces,
    touching one at a corner; its free start cells before its first piece) and the empty cells edge-adjacent to it."""
    rows, cols = tables.variant.board_shape
    mine = board == (color + 1).astype(board.dtype)
    empty = board == 0
    blocked = _edge_dilate(mine) & empty
    starts = np.zeros((tables.variant.num_colors, rows, cols), bool)
    for c, cells in enumerate(tables.variant.start_cells):
        for r, col in cells:
            starts[c, r, col] = True
    start = jnp.asarray(starts)[color]
    attach = jnp.where(first, start, _corner_dilate(mine)) & empty & ~blocked
    return attach, blocked


def cell_planes(tables: Tables, state: State) -> jax.Array:
    """`f32[H, W, len(PLANES)]`: the indicator planes of `PLANES` for the colour to move in `state`.

    Args:
        tables: the variant's tables.
        state: one (unbatched) position.

    Returns:
        The planes stacked on the last axis.
    """
    variant = tables.variant
    rows, cols = variant.board_shape
    board = state.board
    mover = state.current_color
    own = board == (mover + 1).astype(board.dtype)
    owner = jnp.asarray(tables.color_owner)
    player = owner[mover]
    colors = jnp.arange(variant.num_colors)
    # opponents: the colours owned by another player (a shared colour counts as an opponent's)
    is_opponent = (owner != player) | (owner < 0)
    is_opponent = is_opponent & (colors != mover)
    opponent = jnp.any(is_opponent[:, None, None] & (board[None] == (colors + 1)[:, None, None].astype(board.dtype)), 0)
    own_attach, _ = _attach(tables, board, mover, state.pieces_placed[mover] == 0)
    opp_attach = jnp.zeros((rows, cols), bool)
    for c in range(variant.num_colors):
        attach, _ = _attach(tables, board, jnp.int32(c), state.pieces_placed[c] == 0)
        opp_attach |= attach & is_opponent[c] & ~state.passed[c]
    # the newest opponent piece: the cells of the last action when it was an opponent's placement
    last = state.last_action
    num_cells = rows * cols
    placed = (last >= 0) & (last < tables.num_actions - 1)
    orientation = jnp.clip(last // num_cells, 0, tables.num_orientations - 1)
    anchor_r, anchor_c = (last // cols) % rows, last % cols
    offsets = jnp.asarray(tables.cell_offsets)[orientation]  # [K, 2]
    cell_r = jnp.clip(anchor_r + offsets[:, 0], 0, rows - 1)
    cell_c = jnp.clip(anchor_c + offsets[:, 1], 0, cols - 1)
    last_color = board[cell_r[0], cell_c[0]].astype(jnp.int32) - 1
    last_is_opponent = placed & (last_color >= 0) & is_opponent[jnp.clip(last_color, 0, variant.num_colors - 1)]
    last_cells = jnp.zeros((rows, cols), bool).at[cell_r, cell_c].set(True) & last_is_opponent
    return _stack_planes(board != 0, own, opponent, own_attach, opp_attach, last_cells)


#: The planes that a position's observation (`blokus_jax.observe.Observation`) does not show: the newest
#: opponent piece's. `observation_planes` leaves them zero.
LAST_MOVE_PLANES: tuple[str, ...] = ("last_attach", "near_last")


def own_color_count(tables: Tables) -> int:
    """How many colours each player owns (1, or 2 in Classic for two players).

    An observation lists the observer's own colours first, so its colours from this position on are the
    opponents' (a shared colour too).

    Args:
        tables: the variant's tables.

    Returns:
        The count.
    """
    return int(np.sum(np.asarray(tables.color_owner) == 0))


def observation_planes(tables: Tables, obs: Any) -> jax.Array:
    """`f32[H, W, len(PLANES)]`: the planes of `cell_planes` as far as the mover's own observation shows them.

    The planes of `LAST_MOVE_PLANES` are zero (an observation does not say which piece came last), and an
    opponent colour that has passed keeps its attach points. A move model fitted on these planes
    (`MoveModel.inputs == "observation"`) is a function of the observation, so a policy network can carry it
    (`blokus_agents.players.networks.PolicyValueNet`'s `prior`).

    Args:
        tables: the variant's tables.
        obs: one (unbatched) `Observation` of the player to move, as `Env.observe` gives it.

    Returns:
        The planes stacked on the last axis.
    """
    num_colors = tables.variant.num_colors
    occupancy = obs.planes[..., :num_colors] > 0.5  # [H, W, C], the mover's colour first
    corners = obs.planes[..., num_colors:] > 0.5
    k = own_color_count(tables)
    rows, cols = tables.variant.board_shape
    return _stack_planes(
        jnp.any(occupancy, -1),
        occupancy[..., 0],
        jnp.any(occupancy[..., k:], -1),
        corners[..., 0],
        jnp.any(corners[..., k:], -1),
        jnp.zeros((rows, cols), bool),
    )


def observation_phase(tables: Tables, phases: Sequence[int], obs: Any) -> jax.Array:
    """The phase (`phase_of`) of the position an observation of the player to move shows.

    Args:
        tables: the variant's tables.
        phases: the phase boundaries, ascending, the first 0.
        obs: one (unbatched) `Observation` of the player to move.

    Returns:
        `int32`: the phase, from the mover's pieces already placed.
    """
    copies = jnp.asarray(tables.piece_copies, jnp.float32)
    placed = jnp.round(jnp.sum(copies * (1.0 - obs.pieces[0]))).astype(jnp.int32)
    return sum((placed >= start).astype(jnp.int32) for start in phases[1:]) + jnp.int32(0)


def _stack_planes(occupied, own, opponent, own_attach, opp_attach, last_cells) -> jax.Array:
    """The planes of `PLANES`, stacked on the last axis as float32, from the mover's and its opponents' cells and
    attach points and the newest opponent piece's cells (bool `[H, W]` each); the rest follows from these."""
    rows, cols = own.shape
    empty = ~occupied
    own_blocked = _edge_dilate(own) & empty
    opp_blocked = _edge_dilate(opponent) & empty
    near_opp_attach = _edge_dilate(opp_attach) & empty & ~opp_attach
    last_attach = _corner_dilate(last_cells) & opp_attach
    near_last = (_edge_dilate(last_cells) | _corner_dilate(last_cells)) & empty
    free_neighbours = sum(_shift(empty, dr, dc).astype(jnp.int32) for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)))
    open_cells = empty & (free_neighbours >= 3)
    r = (np.arange(rows) - (rows - 1) / 2) / max((rows - 1) / 2, 1)
    c = (np.arange(cols) - (cols - 1) / 2) / max((cols - 1) / 2, 1)
    centre = 1.0 - np.sqrt(r[:, None] ** 2 + c[None, :] ** 2) / math.sqrt(2)
    planes = [
        occupied,
        own,
        opponent,
        jnp.zeros((rows, cols), bool),
        own_attach,
        own_blocked,
        opp_attach,
        near_opp_attach,
        opp_blocked,
        last_attach,
        near_last,
        open_cells,
    ]
    return jnp.stack([p.astype(jnp.float32) for p in planes] + [jnp.asarray(centre, jnp.float32)], -1)


def position_planes(tables: Tables, state: State, inputs: str = "state") -> jax.Array:
    """The planes of one position that a model with these `inputs` scores.

    Args:
        tables: the variant's tables.
        state: one (unbatched) position.
        inputs: one of `INPUTS`.

    Returns:
        `cell_planes`, or `observation_planes` of the mover's observation.
    """
    if inputs == "observation":
        return observation_planes(tables, observe(tables, state, state.current_player))
    return cell_planes(tables, state)


def _padded(ft: FeatureTables, planes: jax.Array) -> jax.Array:
    """`f32[Hp * Wp + 1, F]`: `planes` placed in the padded board (off-board plane set outside), plus a zero row."""
    rows, cols = ft.tables.variant.board_shape
    prow, pcol = ft.padded_shape
    out = jnp.zeros((prow, pcol, planes.shape[-1]), jnp.float32)
    out = out.at[1 : 1 + rows, 1 : 1 + cols].set(planes)
    off = PLANES.index("off_board")
    inside = np.zeros((prow, pcol), np.float32)
    inside[1 : 1 + rows, 1 : 1 + cols] = 1.0
    out = out.at[:, :, off].set(jnp.asarray(1.0 - inside))
    return jnp.concatenate([out.reshape(prow * pcol, -1), jnp.zeros((1, planes.shape[-1]), jnp.float32)])


def move_features(
    tables: Tables, state: State, network_logits: jax.Array | None = None, inputs: str = "state"
) -> jax.Array:
    """`f32[A - 1, F]`: the features of every placement of the colour to move (`A` actions; the pass has none),
    in the order of `feature_names`; illegal placements get features too (mask them with the legal mask).

    Args:
        tables: the variant's tables.
        state: one (unbatched) position; `jax.vmap` it for a batch.
        network_logits: `f32[A]` or `f32[A - 1]` logits of a policy network for this position, added as the
            last feature; `None` for none.
        inputs: what the planes are computed from (`position_planes`).

    Returns:
        The feature matrix.
    """
    ft = feature_tables(tables)
    flat = _padded(ft, position_planes(tables, state, inputs))
    sums = [flat[jnp.asarray(index)].sum(axis=1) for index in ft.regions]  # each [A - 1, len(PLANES)]
    one_hot = jax.nn.one_hot(jnp.asarray(ft.piece_index), tables.variant.num_pieces, dtype=jnp.float32)
    columns = [*sums, one_hot]
    if network_logits is not None:
        logits = jnp.asarray(network_logits, jnp.float32)[: tables.num_actions - 1]
        columns.append(jnp.clip(jnp.nan_to_num(logits, nan=-1e4), -1e4, 1e4)[:, None])
    return jnp.concatenate(columns, axis=-1)


def placement_scores(tables: Tables, planes: jax.Array, weights: jax.Array, conv: str = "native") -> jax.Array:
    """`f32[A - 1]`: every placement's score `weights . features` (without the `network` feature), from the cell
    planes of its position (`cell_planes` or `observation_planes`). Linear in `weights`, so it is differentiable
    in them (a policy network trains them as parameters).

    The weights are folded into one plane a region first (cells, edge neighbours, corner neighbours); a placement's
    score is then the sum of those planes over its region cells, which for all placements at once is a correlation
    of the three planes with every orientation's fixed 0/1 region masks (`region_kernel`): one matmul over the
    board's windows, no gather. Same result as `move_features` times the weights.

    Args:
        tables: the variant's tables.
        planes: `f32[H, W, len(PLANES)]` of one position.
        weights: `f32[F]` (or `F + 1` with the `network` weight last, which is not used here): one phase's row.
        conv: how the correlation is computed: "native" (`lax.conv_general_dilated`, the fast forward pass on
            CPU and GPU) or "im2col" (the windows concatenated and one matmul, whose gradient is the fast one on
            CPU: for weights that are trained).

    Returns:
        The scores of the placements, legal or not.
    """
    num_planes, num_regions = len(PLANES), len(REGIONS)
    plane_weights = weights[: num_planes * num_regions].reshape(num_regions, num_planes)
    ft = feature_tables(tables)
    rows, cols = tables.variant.board_shape
    prow, pcol = ft.padded_shape
    kernel, (kh, kw) = ft.region_kernel
    combined = (_padded(ft, planes)[:-1] @ plane_weights.T).reshape(prow, pcol, num_regions)
    if conv == "native":
        out = jax.lax.conv_general_dilated(
            combined[None, : rows + kh - 1, : cols + kw - 1],
            jnp.asarray(kernel).reshape(kh, kw, num_regions, -1),
            window_strides=(1, 1),
            padding="VALID",
            dimension_numbers=("NHWC", "HWIO", "NHWC"),
        )[0]  # [H, W, O]
        placement = jnp.moveaxis(out, -1, 0).reshape(-1)  # [O * H * W], action order
    else:
        windows = jnp.concatenate([combined[i : i + rows, j : j + cols] for i in range(kh) for j in range(kw)], -1)
        placement = (windows.reshape(rows * cols, -1) @ jnp.asarray(kernel)).T.reshape(-1)
    pieces = weights[num_planes * num_regions : num_planes * num_regions + tables.variant.num_pieces]
    per_orientation = pieces[jnp.asarray(tables.orientation_piece)]
    return placement + jnp.repeat(per_orientation, rows * cols)


def phase_of(phases: Sequence[int], state: State) -> jax.Array:
    """`int32`: the phase of `state`: how many of `phases` (ascending, the first 0) the mover's placed pieces
    have reached, minus one."""
    placed = state.pieces_placed[state.current_color]
    return sum((placed >= start).astype(jnp.int32) for start in phases[1:]) + jnp.int32(0)


__all__ = [
    "DEFAULT_PHASES",
    "INPUTS",
    "LAST_MOVE_PLANES",
    "PLANES",
    "REGIONS",
    "FeatureTables",
    "cell_planes",
    "feature_names",
    "feature_tables",
    "move_features",
    "observation_phase",
    "observation_planes",
    "own_color_count",
    "phase_of",
    "placement_scores",
    "position_planes",
]
