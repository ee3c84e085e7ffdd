"""Fast playouts for the search's `rollout` evaluator: a game played to its end with a cheap policy on row
bitboards, and the move scores (corner balance, distance to the centre) that the search's prior and the bots use.

A playout only needs the final scores, so it keeps the position as per-colour row bitboards and skips everything
`Env.step` maintains for players and observers (the int8 board, rewards, turn owner, the legality re-check of the
chosen action). Legal moves still come from `blokus_jax.rules.legal_bits`, so playouts follow the exact rules; a
colour with no placement passes and never moves again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax import rules
from blokus_jax.env import Env, State
from blokus_jax.rules import (
    _cumulative,
    _nth_set_bit,
    _select_by_rank,
    _shift_rows,
    covering_bits,
    forbidden_and_corners,
    has_placement,
    legal_bits,
    pack_rows,
    popcount,
    sample_from_bits,
)
from blokus_jax.tables import Tables, join_action


def orientation_row_masks(tables: Tables) -> np.ndarray:
    """`uint32[O, R]`: row `d` of orientation `o`'s bounding box as a bit mask anchored at column 0 (`R` is
    the tallest bounding box); placing `o` at `(r, c)` ORs `mask[o, d] << c` into row `r + d`."""
    rows = int(max(cells[:, 0].max() for cells in tables.orientation_cells)) + 1
    masks = np.zeros((tables.num_orientations, rows), np.uint32)
    for o, cells in enumerate(tables.orientation_cells):
        for r, c in cells:
            masks[o, r] |= np.uint32(1 << int(c))
    return masks


def playout_move(
    tables: Tables,
    key: jax.Array,
    bits: jax.Array,
    greedy: bool = True,
    covering: jax.Array | None = None,
    size_base: float = 0.0,
    attach_base: float = 0.0,
) -> jax.Array:
    """The move of a playout policy from the packed legal placements `bits` (`uint32[O, H]`): a uniformly random
    placement of the largest placeable piece size (`greedy`) or of any size; with `covering` (the legal anchors
    that cover a cell the policy prefers, a subset of `bits`) the ones among those that also cover, when there
    are any. `size_base > 0` replaces the size rule by weights: each placement is drawn with probability in
    proportion to `size_base ** size` (`greedy` is then ignored), times `attach_base ** (corners - 1)` with
    `attach_base > 0` (`corners`: the shape's corner cells, `Tables.orientation_corners`).

    Args:
        tables: The variant's tables.
        key: The PRNG key of the draw.
        bits: The packed legal placements, `uint32[O, H]`.
        greedy: Draw only among the placements of the largest placeable piece size.
        covering: The legal anchors that cover a preferred cell (packed like `bits`), or `None`.
        size_base: Weigh each placement by `size_base ** size` instead of the size rule (0: off).
        attach_base: Also weigh each placement by `attach_base ** (corners - 1)` (0: off; with `size_base` only).

    Returns:
        The action index, `int32`; the pass when nothing is placeable.
    """
    width = tables.variant.board_shape[1]
    if greedy and not size_base > 0:
        sizes = jnp.asarray(tables.orientation_size)
        placeable = jnp.max(bits, axis=1) != 0
        best = jnp.max(jnp.where(placeable, sizes, 0))
        bits = jnp.where((sizes == best)[:, None], bits, jnp.uint32(0))
    if covering is not None:
        covering = bits & covering
        bits = jnp.where(has_placement(covering), covering, bits)
    if size_base > 0:
        weights = float(size_base) ** tables.orientation_size.astype(np.float64)
        if attach_base > 0:
            weights = weights * float(attach_base) ** (tables.orientation_corners - 1.0)
        weights = jnp.asarray(weights, jnp.float32)
        return sample_weighted(key, bits, weights, width, tables.pass_action)
    return sample_from_bits(key, bits, width, tables.pass_action)


def sample_weighted(key: jax.Array, bits: jax.Array, weights: jax.Array, width: int, pass_action: int) -> jax.Array:
    """A random set bit of packed `uint32[O, H]` bits as an action index, drawn with probability in proportion to
    `weights[o]` (`float32[O]`, positive) of its orientation: an orientation by its placements times its weight,
    then a uniformly random placement of it.

    Args:
        key: The PRNG key of the draw.
        bits: The packed placements, `uint32[O, H]`.
        weights: The weight of each orientation, `float32[O]`, positive.
        width: The board's width in cells.
        pass_action: The pass's action index.

    Returns:
        The action index, `int32`; `pass_action` if no bit is set.
    """
    num_rows = bits.shape[-1]
    counts = popcount(bits)  # [O, H]
    per_orientation = jnp.sum(counts, axis=-1)
    mass = per_orientation.astype(jnp.float32) * weights
    cumulative = _cumulative(mass)
    k_orientation, k_rank = jax.random.split(key)
    u = jax.random.uniform(k_orientation) * cumulative[-1]
    o = jnp.minimum(jnp.sum(cumulative <= u), mass.shape[0] - 1)
    o = jnp.where(per_orientation[o] > 0, o, jnp.argmax(per_orientation))  # float rounding at the top end
    rank = jax.random.randint(k_rank, (), 0, jnp.maximum(per_orientation[o], 1))
    r, rank = _select_by_rank(counts[o], rank)
    col = _nth_set_bit(bits[o, r], rank)
    action = join_action(o, r, col, (num_rows, width))
    return jnp.where(jnp.sum(per_orientation) > 0, action, pass_action).astype(jnp.int32)


def _dilate(rows: jax.Array) -> jax.Array:
    """The cells of row bitboard `rows` (`uint32[H]`) and their 8 neighbours (bits past the board's width may be
    set; callers only test them against placements, which never cover them)."""
    wide = rows | (rows << 1) | (rows >> 1)
    return wide | _shift_rows(wide, 1, 0) | _shift_rows(wide, -1, 0)


def _piece_rows(tables: Tables, masks: jax.Array, action: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The orientation of placement `action` and the row bitboard of its cells (`masks` is
    `orientation_row_masks`; all zero for the pass)."""
    rows, width = tables.variant.board_shape
    depth = masks.shape[1]
    o = jnp.minimum(action // (rows * width), tables.num_orientations - 1)
    r, c = (action // width) % rows, (action % width).astype(jnp.uint32)
    offset = jnp.arange(rows) - r
    inside = (offset >= 0) & (offset < depth) & (action != tables.pass_action)
    return o, jnp.where(inside, masks[o][jnp.clip(offset, 0, depth - 1)] << c, jnp.uint32(0))


def _mover_owner(tables: Tables, color: jax.Array) -> jax.Array:
    """The player owning colour `color` (a select over the colours, no gather)."""
    owner = jnp.asarray(tables.color_owner)
    return jnp.sum(jnp.where(jnp.arange(owner.shape[0]) == color, owner, 0))


def _opponent_corners(tables: Tables, own: jax.Array, occupied: jax.Array, placed: jax.Array, color) -> jax.Array:
    """Corner cells of every colour owned by another player than `color`'s (a shared colour's do not count), as
    a row bitboard; a static loop over the colours with selects (batched gathers are serial loops on CPU)."""
    mover, cells = _mover_owner(tables, color), jnp.zeros_like(occupied)
    for c, owner in enumerate(tables.color_owner):
        if owner < 0:
            continue
        corners = forbidden_and_corners(tables, own[c], occupied, placed[c] == 0, jnp.int32(c))[1]
        cells = cells | jnp.where(mover != owner, corners, jnp.uint32(0))
    return cells


def _near_opponents(tables: Tables, recent: jax.Array, color) -> jax.Array:
    """Cells within two (in any direction) of the last piece (`recent`, `uint32[C, H]`) of every colour owned by
    another player than `color`'s."""
    mover, cells = _mover_owner(tables, color), jnp.zeros(recent.shape[1:], jnp.uint32)
    for c, owner in enumerate(tables.color_owner):
        if owner >= 0:
            cells = cells | jnp.where(mover != owner, recent[c], jnp.uint32(0))
    return _dilate(_dilate(cells))


@dataclass(frozen=True)
class PlayoutPolicy:
    """How a playout chooses its moves (see `playout`): `greedy` draws among the largest placeable pieces,
    `block` prefers placements that cover another player's corner cells, `local` placements near the piece
    another player's colour placed last, and `size_base`/`attach_base` > 0 weigh the draws (`playout_move`).
    The named policies of the `rollout` evaluator (`playout=greedy`, `local`, ...) are built by
    `blokus_agents.search.gumbel.playout_value`.

    Raises:
        ValueError: when both `block` and `local` are set.
    """

    greedy: bool = True
    block: bool = False
    local: bool = False
    size_base: float = 0.0
    attach_base: float = 0.0

    def __post_init__(self):
        if self.block and self.local:
            raise ValueError("playout: block and local are exclusive preferences; choose one")


def playout(
    tables: Tables, key: jax.Array, state: State, policy: PlayoutPolicy = PlayoutPolicy()
) -> tuple[jax.Array, jax.Array]:
    """Play the position `state` to the end by `policy`, its colour to move first. Only the state's board,
    remaining pieces, pieces placed, last monomino flags, passed colours and colour to move are read; the colour to
    move must not have passed unless all have.

    Each turn the colour to move plays, from its exact packed legal placements, a uniformly random placement of its
    largest placeable piece size (`greedy`) or a uniformly random placement; with none it passes for good. Colours
    are not asked again once passed; the loop ends when every colour has passed. Same moves as `Env.step` with
    `greedy_bot` (or `random_bot`) for the same keys, with less work per move.

    `block` (a playout that sees its opponents): among those placements, prefer the ones that cover at least one
    corner cell of another player's colours (a cell from which that colour could start a piece), when there are
    any. A third of the work of a move more than `greedy`.

    `local` (a playout that answers its opponents, as Pentobi's do): prefer the placements that cover a cell
    within two cells (in any direction) of a piece that another player's colour placed last in the playout, when
    there are any. `size_base` and `attach_base` weigh the draws (`playout_move`). `block` and `local` are
    exclusive (`PlayoutPolicy` refuses both).

    Args:
        tables: The variant's tables.
        key: The playout's random key.
        state: The position (unbatched).
        policy: How the playout chooses its moves (default: `greedy`).

    Returns:
        The final `(remaining int8[C, P], last_was_monomino bool[C])`; score them with
        `blokus_jax.rules.color_scores`.
    """
    greedy, block, local = policy.greedy, policy.block, policy.local
    size_base, attach_base = policy.size_base, policy.attach_base
    board, remaining, pieces_placed = state.board, state.remaining, state.pieces_placed
    last_was_monomino, passed, color = state.last_was_monomino, state.passed, state.current_color
    prefers = block or local
    num_colors = remaining.shape[0]
    masks = jnp.asarray(orientation_row_masks(tables))
    sizes = jnp.asarray(tables.orientation_size)
    piece_of = jnp.asarray(tables.orientation_piece)
    own = jax.vmap(lambda c: pack_rows(board == (c + 1).astype(board.dtype)))(jnp.arange(num_colors, dtype=jnp.int32))

    def bits_of(own, remaining, placed, color, recent):
        # One-hot selects instead of gathers at ``color``: batched gathers and scatters are serial loops on CPU.
        is_color = jnp.arange(num_colors) == color
        mine = functools.reduce(jnp.bitwise_or, [jnp.where(is_color[i], own[i], 0) for i in range(num_colors)])
        occupied = functools.reduce(jnp.bitwise_or, [own[i] for i in range(num_colors)])
        first = jnp.sum(jnp.where(is_color, placed, 0)) == 0
        available = jnp.sum(jnp.where(is_color[:, None], remaining, 0), axis=0) > 0
        forbidden, corners = forbidden_and_corners(tables, mine, occupied, first, color)
        bits = legal_bits(tables, forbidden, corners, available)
        if prefers:
            cells = (
                _opponent_corners(tables, own, occupied, placed, color)
                if block
                else _near_opponents(tables, recent, color)
            )
            covering = bits & covering_bits(tables, cells)
            return jax.lax.optimization_barrier((bits, covering))
        return jax.lax.optimization_barrier(bits)

    def turn(carry):
        # The mask is computed at the end of the previous turn and read here from the loop carry: choosing a move
        # from a mask computed in the same iteration made XLA:CPU pick a layout that was ~30x slower.
        own, remaining, placed, last_mono, passed, color, bits, key, recent = carry
        key, sub = jax.random.split(key)
        bits, covering = bits if prefers else (bits, None)
        action = playout_move(tables, sub, bits, greedy, covering, size_base, attach_base)
        moves = action != tables.pass_action
        o, piece_rows = _piece_rows(tables, masks, action)
        hit = (jnp.arange(num_colors) == color) & moves
        own = jnp.where(hit[:, None], own | piece_rows, own)
        recent = jnp.where(hit[:, None], piece_rows, recent)
        is_piece = jnp.arange(remaining.shape[1]) == piece_of[o]
        remaining = remaining - (hit[:, None] & is_piece).astype(remaining.dtype)
        placed = placed + hit.astype(placed.dtype)
        last_mono = jnp.where(hit, sizes[o] == 1, last_mono)
        passed = passed | ((jnp.arange(num_colors) == color) & ~moves)
        order = (color + 1 + jnp.arange(num_colors)) % num_colors
        color = order[jnp.argmax(~passed[order])].astype(jnp.int32)
        bits = bits_of(own, remaining, placed, color, recent)
        return own, remaining, placed, last_mono, passed, color, bits, key, recent

    def live(carry):
        return ~jnp.all(carry[4])

    color = jnp.asarray(color, jnp.int32)
    recent = jnp.zeros_like(own)
    start = (
        own,
        remaining,
        pieces_placed,
        last_was_monomino,
        passed,
        color,
        bits_of(own, remaining, pieces_placed, color, recent),
        key,
        recent,
    )
    final = jax.lax.while_loop(live, turn, start)
    return final[1], final[3]


# ----------------------------------------------------------------------------------------------- move scores
def color_weights(env: Env, state: State) -> jax.Array:
    """`float32[C]`: +1 for colours of the player to move, -1 for other players' colours, 0 for a shared one."""
    owner = jnp.asarray(env.tables.color_owner)
    return jnp.where(owner < 0, 0.0, jnp.where(owner == state.current_player, 1.0, -1.0))


class _CornerKernels:
    """Per-orientation 0/1 templates for the `corners` score, flattened to a matrix `float32[O, 3 * kh * kw]`.

    Template position `(i, j)` is the cell offset `(i - 1, j - 1)` from the orientation's bounding-box corner.
    Block 0 marks the piece's *halo* (cells diagonal to the piece and not edge-adjacent to it), block 1 the piece
    and its edge neighbours, block 2 the piece itself.
    """

    def __init__(self, env: Env):
        cells = env.tables.orientation_cells
        self.height = max(int(c[:, 0].max()) for c in cells) + 3
        self.width = max(int(c[:, 1].max()) for c in cells) + 3
        kernels = np.zeros((len(cells), 3, self.height, self.width), np.float32)
        for o, piece in enumerate(cells):
            body = {(int(r) + 1, int(c) + 1) for r, c in piece}
            edge = {(r + dr, c + dc) for r, c in body for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))} | body
            diag = {(r + dr, c + dc) for r, c in body for dr in (1, -1) for dc in (1, -1)}
            for block, group in enumerate((diag - edge, edge, body)):
                for r, c in group:
                    kernels[o, block, r, c] = 1.0
        self.matrix = kernels.reshape(len(cells), -1)


def corner_scores(env: Env, state: State, kernels: _CornerKernels) -> jax.Array:
    """`float32[O, H, W]` change in corner balance of every placement (legal or not) for the colour to move.

    Equals (own corners created) - (own corners covered or made edge-adjacent) + (opponents' corners covered), where
    a corner is a cell from which a colour may start a new piece (diagonal to it, empty, not edge-adjacent to it;
    its start cells before its first move); partners' corners covered count negatively, a shared colour's not at
    all. Computed as one matrix product of the templates with shifted copies of three board planes.

    Args:
        env: The environment.
        state: One unbatched position.
        kernels: The per-orientation templates of `env`'s pieces (`_CornerKernels`, built once per env).

    Returns:
        The scores, `float32[O, H, W]`, by orientation and the top-left cell of its bounding box (the placement
        index's parts, `blokus_jax.tables.join_action`).
    """
    rows, cols = env.board_shape
    color = state.current_color
    occupied = rules.pack_rows(state.board != 0)

    def masks(c):
        mine = rules.pack_rows(state.board == (c + 1).astype(jnp.int8))
        return rules.forbidden_and_corners(env.tables, mine, occupied, rules.is_first_move(state.pieces_placed, c), c)

    forbidden, corners = jax.vmap(masks)(jnp.arange(env.num_colors, dtype=jnp.int32))
    corner_planes = rules.unpack_rows(corners, cols).astype(jnp.float32)  # [C, H, W]
    own_forbidden = rules.unpack_rows(forbidden[color], cols)
    own_corners = rules.unpack_rows(corners[color], cols)
    free = (~own_forbidden & ~own_corners).astype(jnp.float32)
    weights = color_weights(env, state).at[color].set(0.0)
    others = jnp.tensordot(-weights, corner_planes, axes=1)  # + for opponents
    planes = jnp.stack([free, -own_corners.astype(jnp.float32), others])  # [3, H, W]
    kh, kw = kernels.height, kernels.width
    padded = jnp.pad(planes, ((0, 0), (1, kh - 2), (1, kw - 2)))
    shifted = jnp.stack([padded[:, i : i + rows, j : j + cols] for i in range(kh) for j in range(kw)], axis=1)
    out = jnp.asarray(kernels.matrix) @ shifted.reshape(-1, rows * cols)  # [O, H * W]
    return out.reshape(-1, rows, cols)


def corner_move_scores(env: Env, size_weight: float) -> Callable[[State], jax.Array]:
    """`state -> float32[O * H * W]` integer-valued corner-balance scores plus `size_weight` times piece size."""
    kernels = _CornerKernels(env)
    size_bonus = jnp.asarray(size_weight * env.tables.orientation_size, jnp.float32)[:, None, None]

    def scores(state: State) -> jax.Array:
        return jnp.round(corner_scores(env, state, kernels) + size_bonus).reshape(-1)

    return scores


def _centre_distance(env: Env, points: np.ndarray) -> np.ndarray:
    """Euclidean distance of board points `[..., 2]` (row, column) from the board's centre point."""
    rows, cols = env.board_shape
    return np.linalg.norm(points - np.array([(rows - 1) / 2, (cols - 1) / 2]), axis=-1).astype(np.float32)


def _board_points(env: Env) -> np.ndarray:
    """`int[H, W, 2]`: the (row, column) of every cell."""
    rows, cols = env.board_shape
    return np.stack(np.meshgrid(np.arange(rows), np.arange(cols), indexing="ij"), axis=-1)


def centre_distances(env: Env) -> np.ndarray:
    """`float32[O, H, W]`: for the placement of orientation `o` with its bounding box's corner at `(r, c)`, the
    distance from the board's centre point to the placement's nearest cell (cells off the board count where they
    would lie; such placements are never legal). A static table, built once per variant."""
    anchors = _board_points(env)[:, :, None, :]  # [H, W, 1, 2]
    return np.stack([_centre_distance(env, anchors + cells).min(-1) for cells in env.tables.orientation_cells])


def centre_move_scores(env: Env) -> Callable[[State], jax.Array]:
    """`state -> float32[O * H * W]`: how much closer to the board's centre each placement brings the colour to
    move, `max(0, d_own - d_move)`: `d_move` is the distance from the centre to the placement's nearest cell
    (`centre_distances`), `d_own` that of the colour's nearest cell on the board (the board's half-diagonal
    before its first piece). Positive only for moves that advance towards the centre, so it fades out by itself once
    a colour has reached it: Pentobi's "distance to the centre early on" as a move feature, which breaks the ties of
    the `corners` score in the opening."""
    rows, cols = env.board_shape
    move_distance = jnp.asarray(centre_distances(env))
    cell_distance = jnp.asarray(_centre_distance(env, _board_points(env)))
    far = float(np.hypot(rows, cols) / 2)

    def scores(state: State) -> jax.Array:
        own = state.board == (state.current_color + 1).astype(state.board.dtype)
        d_own = jnp.min(jnp.where(own, cell_distance, far))
        return jnp.maximum(0.0, d_own - move_distance).reshape(-1)

    return scores
