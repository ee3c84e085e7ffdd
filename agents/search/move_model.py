"""Knowledge for the search's prior: move features for every placement at once and a fitted log-linear move model.

A *move feature* of a placement is a sum, over the cells the placement covers (or over its edge neighbours, or its
corner neighbours), of a per-cell indicator plane of the position seen from the colour to move: the opponent's
attach points, the mover's own attach points, occupied cells, the cells next to the opponent's newest piece, and so
on (`PLANES`). One gather table per variant (`FeatureTables`) turns every plane into that sum for the whole action
space at once, so `move_features` is a handful of gathers, jittable and vmappable on CPU and GPU alike. Piece
identity (one-hot) and, optionally, a network's logit complete the features.

The *move model* scores a placement by a weighted sum of its features, with one weight vector per phase of the game
(the mover's pieces already placed); its softmax over the legal placements is a move distribution. `fit` finds the
weights by softmax regression (maximum likelihood of the moves a strong player chose, with optax); `MoveModel`
reads and writes them as a small JSON file with its provenance; the shipped Duo model is `move_model_duo.json`
beside this module. `move_prior` gives, for an agent spec, the scores by which that agent's search ranks and picks
its candidates.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax.env import Env, State
from blokus_jax.errors import BlokusError, ConfigError
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

#: Format tag and version of a move-model file.
FORMAT = "blokus-jax move model"
VERSION = 1
#: Largest move-model file read (bytes); the shipped ones are a few kB.
MAX_FILE_BYTES = 1 << 20


class MoveModelError(BlokusError, ValueError):
    """A move-model file or weight table that cannot be used: unreadable, malformed, for another variant, or with
    features that this version of the code does not compute."""


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


@dataclass(frozen=True)
class MoveModel:
    """A fitted log-linear move model: score(placement) = `weights[phase] . features(placement)`.

    Attributes:
        variant: name of the variant it was fitted on.
        features: the feature names, in the order of `feature_names` for that variant.
        phases: the phase boundaries (pieces placed by the mover), ascending, the first 0.
        weights: `[len(phases)][len(features)]` weights.
        network: the agent spec whose network's logit is the feature `network` (`"baseline:duo"`), or `""`.
        provenance: how it was fitted (command, data, date, held-out recall), for people.
        inputs: what its planes are computed from, one of `INPUTS`: "observation" models score what the mover's
            observation shows (no newest-piece planes) and take no network logit, so a policy network can carry
            them.
    """

    variant: str
    features: tuple[str, ...]
    phases: tuple[int, ...]
    weights: tuple[tuple[float, ...], ...]
    network: str = ""
    provenance: dict[str, Any] = field(default_factory=dict)
    inputs: str = "state"

    def __post_init__(self) -> None:
        if self.inputs not in INPUTS:
            raise MoveModelError(f"inputs must be one of {list(INPUTS)}, got {self.inputs!r}")
        if self.inputs == "observation" and self.network:
            raise MoveModelError("a model over observation planes takes no network logit (its network carries it)")
        if not self.phases or self.phases[0] != 0 or list(self.phases) != sorted(set(self.phases)):
            raise MoveModelError(f"phases must be ascending distinct piece counts starting at 0, got {self.phases}")
        if len(self.weights) != len(self.phases) or any(len(w) != len(self.features) for w in self.weights):
            raise MoveModelError(
                f"weights must be {len(self.phases)} rows of {len(self.features)} numbers (one row a phase, one "
                f"number a feature)"
            )
        if not all(math.isfinite(x) for row in self.weights for x in row):
            raise MoveModelError("weights must be finite numbers")

    def check(self, tables: Tables) -> None:
        """Raise `MoveModelError` unless this model fits `tables`' variant and the features this code computes."""
        expected = feature_names(tables, bool(self.network))
        if self.variant != tables.variant.name or tuple(self.features) != expected:
            raise MoveModelError(
                f"the move model is for variant {self.variant!r} with {len(self.features)} features; variant "
                f"{tables.variant.name!r} with this version of blokus-jax computes {len(expected)} "
                f"({'same names' if tuple(self.features) == expected else 'different names'}): refit it with "
                f"benchmarks/fit_move_model.py"
            )

    def scores(self, tables: Tables, state: State, network_logits: jax.Array | None = None) -> jax.Array:
        """`f32[A]`: the model's score of every action in `state`, `-inf` for illegal ones (the pass scores 0
        when it is the only legal action). Pure and jittable; vmap it for a batch.

        Args:
            tables: the variant's tables (checked against the model when it is built, see `check`).
            state: one position.
            network_logits: the network's logits for this position when the model has the `network` feature.

        Returns:
            The scores, higher preferred.
        """
        weights = jnp.asarray(self.weights, jnp.float32)[phase_of(self.phases, state)]
        placement = placement_scores(tables, position_planes(tables, state, self.inputs), weights)
        if self.network:
            if network_logits is None:
                raise MoveModelError(f"this move model needs the logits of {self.network!r}; pass network_logits")
            logits = jnp.asarray(network_logits, jnp.float32)[: tables.num_actions - 1]
            placement = placement + weights[-1] * jnp.clip(jnp.nan_to_num(logits, nan=-1e4), -1e4, 1e4)
        legal = state.legal_action_mask
        scores = jnp.concatenate([placement, jnp.zeros((1,), jnp.float32)])
        return jnp.where(legal, scores, -jnp.inf)

    # --------------------------------------------------------------------------------------------------- files
    def to_json(self) -> str:
        """The model as the text of a move-model file."""
        return json.dumps(
            {
                "format": FORMAT,
                "version": VERSION,
                "variant": self.variant,
                "network": self.network,
                "inputs": self.inputs,
                "phases": list(self.phases),
                "features": list(self.features),
                "weights": [[round(float(x), 6) for x in row] for row in self.weights],
                "provenance": self.provenance,
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str, source: str = "move model") -> MoveModel:
        """Read a move-model file's text, checking every field.

        Args:
            text: the file's text.
            source: what to call it in error messages (its path).

        Returns:
            The model.

        Raises:
            MoveModelError: the text is not a move-model file of this version or a field is malformed.
        """
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise MoveModelError(f"{source}: not JSON ({exc}); write it with MoveModel.to_json") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
            raise MoveModelError(f"{source}: not a {FORMAT!r} file of version {VERSION}")
        expect = {"variant": str, "network": str, "phases": list, "features": list, "weights": list}
        for key, kind in expect.items():
            if not isinstance(data.get(key), kind):
                raise MoveModelError(f"{source}: field {key!r} must be a {kind.__name__}")
        if not all(isinstance(p, int) and not isinstance(p, bool) and 0 <= p < 10_000 for p in data["phases"]):
            raise MoveModelError(f"{source}: 'phases' must be small non-negative integers")
        if not all(isinstance(f, str) and len(f) < 100 for f in data["features"]):
            raise MoveModelError(f"{source}: 'features' must be names")
        rows = data["weights"]
        if not all(
            isinstance(r, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in r)
            for r in rows
        ):
            raise MoveModelError(f"{source}: 'weights' must be lists of numbers")
        provenance = data.get("provenance", {})
        inputs = data.get("inputs", "state")
        if inputs not in INPUTS:
            raise MoveModelError(f"{source}: 'inputs' must be one of {list(INPUTS)}")
        if not isinstance(provenance, dict):
            raise MoveModelError(f"{source}: 'provenance' must be an object")
        try:
            return cls(
                data["variant"],
                tuple(data["features"]),
                tuple(data["phases"]),
                tuple(tuple(float(x) for x in r) for r in rows),
                data["network"],
                provenance,
                inputs,
            )
        except MoveModelError as exc:
            raise MoveModelError(f"{source}: {exc}") from None

    @classmethod
    def load(cls, path: str | os.PathLike) -> MoveModel:
        """Read a move-model file (at most `MAX_FILE_BYTES`); raises `MoveModelError` naming the file."""
        path = Path(path)
        try:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise MoveModelError(f"cannot read move model {path}: {exc.strerror or exc}") from None
        if len(raw) > MAX_FILE_BYTES:
            raise MoveModelError(f"{path}: larger than {MAX_FILE_BYTES} bytes; not a move-model file")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise MoveModelError(f"{path}: not UTF-8 text; not a move-model file") from None
        return cls.from_json(text, str(path))


#: The folder of the shipped move models (`move_model_VARIANT.json`).
SHIPPED = Path(__file__).resolve().parent


def shipped_model(variant: str, inputs: str = "state") -> MoveModel:
    """The move model shipped for `variant` over `inputs` (`move_model_VARIANT.json` for the search's prior,
    `move_model_VARIANT_observation.json` for a policy network's); raises `ConfigError` when there is none."""
    if inputs not in INPUTS:
        raise ConfigError(f"unknown move-model inputs {inputs!r}; use one of {list(INPUTS)}")
    path = SHIPPED / f"move_model_{variant}{'' if inputs == 'state' else '_' + inputs}.json"
    if not path.is_file():
        have = sorted(p.stem.removeprefix("move_model_") for p in SHIPPED.glob("move_model_*.json"))
        raise ConfigError(f"no move model over {inputs} planes is shipped for variant {variant!r}; shipped: {have}")
    model = MoveModel.load(path)
    if model.inputs != inputs:
        raise ConfigError(f"{path.name} is a model over {model.inputs} planes, not {inputs}")
    return model


def model_evaluator(env: Env, evaluator: Callable, model: MoveModel) -> Callable:
    """A search evaluator whose prior logits are `model`'s scores over `evaluator`'s (a network evaluator's
    logits are the model's `network` feature); the leaf value is `evaluator`'s.

    Args:
        env: the environment.
        evaluator: `(params, key, state, root_player) -> (logits f32[A - 1], value)`.
        model: a move model of `env`'s variant (checked here).

    Returns:
        An evaluator of the same signature.

    Raises:
        MoveModelError: the model does not fit the variant.
    """
    model.check(env.tables)

    def evaluate(params, key: jax.Array, state: State, root_player: jax.Array):
        logits, value = evaluator(params, key, state, root_player)
        scores = model.scores(env.tables, state, logits)[: env.pass_action]
        # illegal placements: a finite floor, as the search's candidate ranking expects finite logits
        return jnp.where(jnp.isfinite(scores), scores, -1e4), value

    return evaluate


# ---------------------------------------------------------------------------------------------------- fitting
def softmax_loss(weights: jax.Array, features: jax.Array, legal: jax.Array, chosen: jax.Array, phase: jax.Array):
    """Mean negative log-likelihood of the `chosen` placements under the model's softmax over legal placements.

    Args:
        weights: `f32[phases, F]`.
        features: `f32[N, L, F]`: the features of up to `L` candidate placements of `N` positions.
        legal: `bool[N, L]`: which of the `L` slots hold a legal placement.
        chosen: `int32[N]`: the slot of the chosen placement.
        phase: `int32[N]`: each position's phase.

    Returns:
        The scalar loss.
    """
    scores = jnp.einsum("nlf,nf->nl", features, weights[phase])
    scores = jnp.where(legal, scores, -1e30)
    logp = jax.nn.log_softmax(scores, axis=-1)
    return -jnp.take_along_axis(logp, chosen[:, None], axis=-1).mean()


def fit(
    features: np.ndarray,
    legal: np.ndarray,
    chosen: np.ndarray,
    phase: np.ndarray,
    num_phases: int,
    *,
    l2: float = 1e-3,
    steps: int = 400,
    learning_rate: float = 0.05,
    batch: int = 2048,
    seed: int = 0,
    progress: Callable[[int, float], None] | None = None,
) -> np.ndarray:
    """Softmax regression of the chosen placements on their features, with Adam (optax) and an L2 penalty.

    Args:
        features: `f32[N, L, F]` candidate features (see `softmax_loss`).
        legal: `bool[N, L]`.
        chosen: `int32[N]` slot of each chosen placement (must be legal).
        phase: `int32[N]` phase of each position, below `num_phases`.
        num_phases: number of phases (weight rows).
        l2: weight of the L2 penalty on the weights.
        steps: optimiser steps (minibatches of `batch` positions).
        learning_rate: Adam's step size.
        batch: positions per minibatch.
        seed: minibatch order.
        progress: called with `(step, loss)` every 50 steps.

    Returns:
        `f32[num_phases, F]` fitted weights.
    """
    import optax

    n, _, width = features.shape
    if n == 0:
        raise ConfigError("no positions to fit")
    weights = jnp.zeros((num_phases, width), jnp.float32)
    optimiser = optax.adam(learning_rate)
    state = optimiser.init(weights)

    def loss_fn(w, f, m, c, p):
        return softmax_loss(w, f, m, c, p) + l2 * jnp.sum(w**2)

    @jax.jit
    def update(w, opt_state, f, m, c, p):
        loss, grad = jax.value_and_grad(loss_fn)(w, f, m, c, p)
        updates, opt_state = optimiser.update(grad, opt_state, w)
        return optax.apply_updates(w, updates), opt_state, loss

    rng = np.random.default_rng(seed)
    size = min(batch, n)
    for step in range(steps):
        idx = rng.choice(n, size, replace=False)
        batch_features = np.asarray(features[idx], np.float32)
        weights, state, loss = update(weights, state, batch_features, legal[idx], chosen[idx], phase[idx])
        if progress is not None and step % 50 == 0:
            progress(step, float(loss))
    return np.asarray(weights)


def recall_at(scores: np.ndarray, chosen: np.ndarray, ks: Sequence[int]) -> dict[int, float]:
    """Share of positions whose chosen action ranks among the `k` best by `scores` (ties count against it), for
    each `k`.

    Args:
        scores: `f32[N, A]` scores, `-inf` for illegal actions.
        chosen: `int32[N]` the chosen action of each position.
        ks: the cut-offs.

    Returns:
        `{k: recall}`.
    """
    scores = np.asarray(scores, np.float64)
    chosen = np.asarray(chosen)
    mine = scores[np.arange(len(chosen)), chosen]
    rank = (scores >= mine[:, None]).sum(axis=1)  # 1 = best; a tie with another action counts as worse
    return {k: float((rank <= k).mean()) if len(chosen) else float("nan") for k in ks}


__all__ = [
    "DEFAULT_PHASES",
    "INPUTS",
    "LAST_MOVE_PLANES",
    "PLANES",
    "REGIONS",
    "FeatureTables",
    "MoveModel",
    "MoveModelError",
    "cell_planes",
    "feature_names",
    "feature_tables",
    "fit",
    "model_evaluator",
    "move_features",
    "observation_phase",
    "observation_planes",
    "own_color_count",
    "phase_of",
    "placement_scores",
    "position_planes",
    "recall_at",
    "shipped_model",
    "softmax_loss",
]
