"""Pure rule functions over JAX arrays: bitboards, the legal-placement mask, placing a piece, scoring.

Bitboards: a board row is one `uint32` word whose bit `c` is column `c`. The legal placements of one colour
are kept packed as `uint32[O, H]`: bit `c` of word `[o, r]` says that orientation `o` anchored at `(r, c)`
is legal. For a placement to be legal every cell must avoid the colour's *forbidden* cells (occupied by anyone,
edge-adjacent to the colour itself, or off the board) and at least one cell must hit a *corner* cell (diagonal to
the colour and not forbidden; on the first move, a start cell). Both tests shift whole rows at once, so a mask costs
about `O * H * K` word operations instead of one gather per placement.

Everything here is shape-static and works under `jax.jit` and `jax.vmap`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax.tables import Tables, join_action

ALL_ONES = np.uint32(0xFFFFFFFF)


def pack_rows(cells: jax.Array) -> jax.Array:
    """Pack boolean rows into bitboard words (boards up to 32 columns).

    Args:
        cells: `bool[..., H, W]`.

    Returns:
        `uint32[..., H]` with bit `c` of row `r` set where `cells[r, c]`.
    """
    width = cells.shape[-1]
    weights = jnp.left_shift(jnp.uint32(1), jnp.arange(width, dtype=jnp.uint32))
    return jnp.sum(jnp.where(cells, weights, jnp.uint32(0)), axis=-1, dtype=jnp.uint32)


def unpack_rows(words: jax.Array, width: int) -> jax.Array:
    """Unpack bitboard words into boolean rows: the inverse of `pack_rows`.

    Args:
        words: `uint32[...]`.
        width: Columns to unpack.

    Returns:
        `bool[..., width]`.
    """
    shifts = jnp.arange(width, dtype=jnp.uint32)
    return (jnp.right_shift(words[..., None], shifts) & jnp.uint32(1)).astype(bool)


def _shift_rows(rows: jax.Array, delta: int, fill) -> jax.Array:
    """Row `r` of the result is `rows[r - delta]` (`fill` where that is off the board)."""
    pad = jnp.full((abs(delta),), fill, rows.dtype)
    if delta > 0:
        return jnp.concatenate([pad, rows[:-delta]])
    return jnp.concatenate([rows[-delta:], pad])


def forbidden_and_corners(
    tables: Tables, own: jax.Array, occupied: jax.Array, first_move: jax.Array, color: jax.Array
) -> tuple[jax.Array, jax.Array]:
    """Row masks of the cells a colour may not cover and of the cells that give it corner contact.

    Bits at columns >= W are set in `forbidden` so pieces cannot hang off the right edge.

    Args:
        tables: The variant's tables.
        own: `uint32[H]` bitboard of the colour's squares.
        occupied: `uint32[H]` bitboard of all occupied squares.
        first_move: Whether the colour has placed nothing yet (its corner cells are then its start cells).
        color: The colour (an `int32` scalar).

    Returns:
        `(forbidden, corners)`, two `uint32[H]` bitboards.
    """
    width = tables.variant.board_shape[1]
    outside = jnp.uint32(ALL_ONES ^ np.uint32((1 << width) - 1))
    up, down = _shift_rows(own, 1, 0), _shift_rows(own, -1, 0)
    forbidden = occupied | own | (own << 1) | (own >> 1) | up | down | outside
    diagonal = (up << 1) | (up >> 1) | (down << 1) | (down >> 1)
    start = jnp.asarray(tables.start_bits)[color]
    corners = jnp.where(first_move, start, diagonal) & ~forbidden
    return forbidden, corners


def legal_bits(tables: Tables, forbidden: jax.Array, corners: jax.Array, piece_available: jax.Array) -> jax.Array:
    """Packed legal placements `uint32[O, H]` from the forbidden/corner row masks and `bool[P]` availability.

    Word `[o, r]` is the set of anchor columns where orientation `o` fits in rows `r..` without touching a
    forbidden cell and with at least one cell on a corner cell (both tests by `covering_bits`).

    Args:
        tables: The variant's tables.
        forbidden: `uint32[H]`, from `forbidden_and_corners`.
        corners: `uint32[H]`, from `forbidden_and_corners`.
        piece_available: `bool[P]`, which pieces the colour still has.

    Returns:
        Packed `uint32[O, H]` legal placements.
    """
    blocked = covering_bits(tables, forbidden)
    touches = covering_bits(tables, corners)
    legal = jnp.asarray(tables.anchor_bits) & ~blocked & touches
    available = piece_available[jnp.asarray(tables.orientation_piece)][:, None]
    return jnp.where(available, legal, jnp.uint32(0))


def covering_bits(tables: Tables, cells: jax.Array) -> jax.Array:
    """Packed `uint32[O, H]`: the anchors where orientation `o` would cover at least one set cell of the row
    bitboard `cells` (`uint32[H]`), whether or not the placement is legal.

    For each cell slot `k` (a static loop over the at most 5 cells of a piece) the board row under that cell is
    gathered for every `(o, r)` at once and shifted right by the cell's column offset; OR-ing the slots gives the
    anchors that hit. Slots of smaller pieces repeat their first cell, which is harmless for an OR.

    Args:
        tables: The variant's tables.
        cells: `uint32[H]` row bitboard.

    Returns:
        Packed `uint32[O, H]` anchors.
    """
    rows = tables.variant.board_shape[0]
    offsets = tables.cell_offsets  # [O, K, 2], static
    pad = int(offsets[..., 0].max())
    # Padding rows below the board: anchor_bits excludes the anchors that would hang off the bottom.
    padded = jnp.concatenate([cells, jnp.zeros((pad,), jnp.uint32)])
    window = jnp.stack([padded[d : d + rows] for d in range(pad + 1)])  # window[d, r] = cells[r + d]
    hits = jnp.zeros((tables.num_orientations, rows), jnp.uint32)
    for k in range(offsets.shape[1]):
        dr = offsets[:, k, 0]
        dc = jnp.asarray(offsets[:, k, 1].astype(np.uint32))[:, None]
        hits = hits | (window[dr] >> dc)
    return hits


def has_placement(bits: jax.Array) -> jax.Array:
    """Whether packed legal bits contain at least one placement.

    A max-reduction over words: on XLA:CPU it is ~20x faster than `jnp.any` over a boolean array.

    Args:
        bits: Packed `uint32[..., O, H]` legal bits.

    Returns:
        `bool[...]`.
    """
    return jnp.max(bits, axis=(-2, -1)) != 0


def legal_mask(bits: jax.Array, width: int, done: jax.Array | bool = False) -> jax.Array:
    """The legal-action mask of packed legal bits: placements in action-id order and the pass last (legal exactly
    when no placement is).

    Args:
        bits: Packed `uint32[..., O, H]` legal bits.
        width: Board columns.
        done: Where true (`bool[...]`), nothing is legal.

    Returns:
        `bool[..., O * H * width + 1]`.
    """
    placements = unpack_rows(bits, width)
    flat = placements.reshape(*placements.shape[:-3], -1)
    can_pass = ~has_placement(bits)
    done = jnp.asarray(done)
    return jnp.concatenate([flat & ~done[..., None], (can_pass & ~done)[..., None]], axis=-1)


def popcount(words: jax.Array) -> jax.Array:
    """The set bits of each word.

    Args:
        words: `uint32[...]`.

    Returns:
        `int32[...]` counts.
    """
    return jax.lax.population_count(words).astype(jnp.int32)


def _prefix_sum(counts: jax.Array) -> jax.Array:
    """Inclusive prefix sum of a short int vector (`_cumulative`), exact for totals below 2**24 (a Blokus mask
    has fewer than 40,000 legal placements)."""
    return _cumulative(counts.astype(jnp.float32)).astype(jnp.int32)


def _cumulative(values: jax.Array) -> jax.Array:
    """Inclusive prefix sum of a short float32 vector, as a matmul with a triangular matrix.

    XLA:CPU lowers `cumsum` to a quadratic reduce-window loop; the matmul vectorises. `Precision.HIGHEST` keeps
    it exact on GPUs and TPUs, whose default float32 matmuls round inputs to fewer mantissa bits (TF32 / bfloat16).
    """
    n = values.shape[-1]
    upper = jnp.asarray(np.triu(np.ones((n, n), np.float32)))
    return jnp.matmul(values, upper, precision=jax.lax.Precision.HIGHEST)


def _select_by_rank(counts: jax.Array, rank: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Index `i` with `sum(counts[:i]) <= rank < sum(counts[:i+1])` and the rank left within entry `i`."""
    cumulative = _prefix_sum(counts)
    index = jnp.minimum(jnp.sum(cumulative <= rank), counts.shape[0] - 1)
    return index, rank - (cumulative[index] - counts[index])


def _nth_set_bit(word: jax.Array, rank: jax.Array) -> jax.Array:
    """Position of the `rank`-th (0-based) set bit of a `uint32` word, by a branch-free binary search."""
    position = jnp.uint32(0)
    rank = rank.astype(jnp.int32)
    for width in (16, 8, 4, 2, 1):
        low = (word >> position) & jnp.uint32((1 << width) - 1)
        count = popcount(low)
        skip = rank >= count
        rank = jnp.where(skip, rank - count, rank)
        position = jnp.where(skip, position + width, position)
    return position.astype(jnp.int32)


def sample_from_bits(key: jax.Array, bits: jax.Array, width: int, pass_action: int) -> jax.Array:
    """A uniformly random set bit of packed `uint32[O, H]` bits as an action index (`pass_action` if none).

    Three-level selection from popcounts: an orientation, then a row, then the bit within the row word; no
    cumulative sum over all `O * H` words and no unpacking.

    Args:
        key: A JAX PRNG key.
        bits: Packed `uint32[O, H]` legal bits.
        width: Board columns.
        pass_action: The pass's index, returned when no bit is set.

    Returns:
        An `int32` action index.
    """
    num_rows = bits.shape[-1]
    counts = popcount(bits)  # [O, H]
    per_orientation = jnp.sum(counts, axis=-1)
    total = jnp.sum(per_orientation)
    k = jax.random.randint(key, (), 0, jnp.maximum(total, 1))
    o, k = _select_by_rank(per_orientation, k)
    r, k = _select_by_rank(counts[o], k)
    col = _nth_set_bit(bits[o, r], k)
    action = join_action(o, r, col, (num_rows, width))
    return jnp.where(total > 0, action, pass_action).astype(jnp.int32)


def placement_plane(tables: Tables, action: jax.Array) -> jax.Array:
    """The cells a placement covers, as a plane.

    Args:
        tables: The variant's tables.
        action: A placement index or the pass (an `int32` scalar).

    Returns:
        `bool[H, W]`, all False for the pass.
    """
    rows, cols = tables.variant.board_shape
    o, r, c = tables.split_action(action)
    o = jnp.clip(o, 0, tables.num_orientations - 1)
    offsets = jnp.asarray(tables.cell_offsets)[o]  # [K, 2]
    rr = offsets[:, 0] + r
    cc = offsets[:, 1] + c
    is_pass = action == tables.pass_action
    rr = jnp.where(is_pass, rows, rr)  # out of bounds -> dropped
    plane = jnp.zeros((rows, cols), bool)
    return plane.at[rr, cc].set(True, mode="drop")


def is_first_move(pieces_placed: jax.Array, color=None) -> jax.Array:
    """Whether a colour's next placement is its first (it must cover a start cell).

    Args:
        pieces_placed: `int32[..., C]`, the state's field (JAX or NumPy).
        color: The colour; `None` for every colour.

    Returns:
        `bool[...]` for one colour, `bool[..., C]` for every colour.
    """
    placed = pieces_placed if color is None else pieces_placed[..., color]
    return placed == 0


def player_scores(tables: Tables, scores: jax.Array) -> jax.Array:
    """Player scores from colour scores: the sum over each player's colours (a shared colour counts for nobody).

    Args:
        tables: The variant's tables.
        scores: `int32[..., C]` colour scores (`State.scores`).

    Returns:
        `int32[..., num_players]`.
    """
    return scores @ jnp.asarray(tables.player_color_matrix.T)


def win_shares(player_scores: jax.Array) -> jax.Array:
    """Each player's share of the win: `1/k` for each of the `k` players with the best score, 0 for the others.
    The one definition of winners and ties.

    Args:
        player_scores: `[..., N]` scores, batched over leading axes.

    Returns:
        `float32[..., N]`.
    """
    scores = jnp.asarray(player_scores)
    winners = scores == scores.max(axis=-1, keepdims=True)
    return winners.astype(jnp.float32) / jnp.sum(winners, axis=-1, keepdims=True)


def color_scores(tables: Tables, remaining: jax.Array, last_was_monomino: jax.Array) -> jax.Array:
    """The standard scores: minus unplaced squares, +15 for placing everything, +5 more if the last piece placed
    was the monomino (bonuses only if the variant has them).

    Args:
        tables: The variant's tables.
        remaining: `int8[C, P]` copies left (`State.remaining`).
        last_was_monomino: `bool[C]`, whether each colour's last placement was the monomino.

    Returns:
        `int32[C]`.
    """
    unplaced = jnp.sum(remaining.astype(jnp.int32) * jnp.asarray(tables.piece_sizes), axis=-1)
    score = -unplaced
    if tables.variant.bonus:
        done = unplaced == 0
        score = score + jnp.where(done, 15 + 5 * last_was_monomino.astype(jnp.int32), 0)
    return score


# ------------------------------------------------------------------------------------------ why a move is illegal
#: The reasons `illegal_reason` gives, in the order they are tested.
ILLEGAL_REASONS = (
    "game_over",
    "out_of_range",
    "cannot_pass",
    "off_board",
    "no_piece",
    "occupied",
    "edge",
    "start",
    "corner",
)


def illegal_reason(tables, state, action: int) -> tuple[str, np.ndarray] | None:
    """Why `action` is not legal for the colour to move in `state` (one unbatched state), or `None` if it is.

    Host-side diagnosis for error messages, derived from the same bitboards as `legal_bits`: the placement's
    rows are tested against the availability of its piece, the occupied squares, and the colour's
    `forbidden_and_corners` masks (edge contact with itself; a corner cell, which on the first move is a
    start cell).

    Args:
        tables: A `Tables`, or anything with a `.tables` (an `Env`).
        state: One unbatched position.
        action: The action index.

    Returns:
        `None` when the action is legal, else `(reason, cells)`: a code from `ILLEGAL_REASONS` and `int32[k, 2]`
        cells it concerns (the occupied or edge-touching squares, else the placement's cells; empty for the pass
        and out-of-range actions).
    """
    tables = getattr(tables, "tables", tables)
    action = int(action)
    cols = tables.variant.board_shape[1]
    none = np.zeros((0, 2), np.int32)
    if bool(state.terminated) or bool(state.truncated):
        return "game_over", none
    if not 0 <= action < tables.num_actions:
        return "out_of_range", none
    if action == tables.pass_action:
        return ("cannot_pass", none) if bool(has_placement(jnp.asarray(state.legal_bits))) else None
    o, r, c = tables.split_action(action)
    cells = tables.orientation_cells[o] + np.asarray([r, c], np.int32)
    if not (int(tables.anchor_bits[o, r]) >> c) & 1:
        return "off_board", cells
    color = int(state.current_color)
    if int(np.asarray(state.remaining)[color, tables.orientation_piece[o]]) == 0:
        return "no_piece", cells
    board = jnp.asarray(state.board)
    own = pack_rows(board == color + 1)
    occupied = pack_rows(board != 0)
    first = is_first_move(jnp.asarray(state.pieces_placed), color)
    forbidden, corners = forbidden_and_corners(tables, own, occupied, first, jnp.int32(color))
    piece = pack_rows(placement_plane(tables, jnp.int32(action)))

    def hits(mask: jax.Array) -> np.ndarray:
        return np.argwhere(np.asarray(unpack_rows(piece & mask, cols))).astype(np.int32)

    for reason, mask in (("occupied", occupied), ("edge", forbidden)):
        found = hits(mask)
        if len(found):
            return reason, found
    if not len(hits(corners)):
        return ("start" if bool(first) else "corner"), cells
    return None


def explain_illegal(tables, state, action: int, color_names=None, cell_name=None) -> str:
    """One sentence saying why `action` is not legal in `state` (see `illegal_reason`), e.g. "Blue's piece 'L5'
    at a1,a2,a3,a4,b1 covers occupied squares a1". The legality decision itself is always the state's mask;
    this only explains it.

    Args:
        tables: A `Tables`, or anything with a `.tables` (an `Env`).
        state: One unbatched position.
        action: The action index.
        color_names: One name per colour; default `colour 0`, `colour 1`, ...
            (`blokus_jax.io.records.explain_illegal` passes the Pentobi names).
        cell_name: `cell_name(row, col) -> str`, how squares are written; default `(row, col)`.

    Returns:
        The sentence; `"action N is legal here"` when the action is legal.
    """
    tables = getattr(tables, "tables", tables)
    variant = tables.variant
    names = color_names or tuple(f"colour {k}" for k in range(variant.num_colors))
    name = cell_name or (lambda r, c: f"({r}, {c})")

    def where(cells) -> str:
        ordered = sorted(((int(r), int(c)) for r, c in cells), key=lambda rc: (-rc[0], rc[1]))
        return ",".join(name(r, c) for r, c in ordered)

    action = int(action)
    found = illegal_reason(tables, state, action)
    if found is None:
        return f"action {action} is legal here"
    reason, cells = found
    who = names[int(state.current_color)]
    if reason == "game_over":
        return "the game was already over"
    if reason == "out_of_range":
        return f"action {action} is out of range [0, {tables.num_actions})"
    if reason == "cannot_pass":
        count = int(np.asarray(popcount(jnp.asarray(state.legal_bits))).sum())
        return f"{who} is to move and still has {count} legal placements, so it cannot pass"
    piece = variant.pieces[tables.decode(action)[0]]
    if reason == "off_board":
        return f"action {action} puts piece {piece.name!r} partly off the board at cells {cells.tolist()}"
    if reason == "no_piece":
        return f"{who} has no piece {piece.name!r} left (cells {where(cells)})"
    placed = where(tables.action_cells(action))
    if reason == "occupied":
        return f"{who}'s piece {piece.name!r} at {placed} covers occupied squares {where(cells)}"
    if reason == "edge":
        return f"{who}'s piece {piece.name!r} at {placed} shares an edge with another {who} piece"
    if reason == "start":
        starts = where(variant.start_cells[int(state.current_color)])
        return f"{who}'s first piece {piece.name!r} at {placed} does not cover its start square {starts}"
    return f"{who}'s piece {piece.name!r} at {placed} does not touch another {who} piece corner to corner"
