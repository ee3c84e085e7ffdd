"""Pure rule functions over JAX arrays: bitboards, the legal-placement mask, placing a piece, scoring.

Bitboards: a board row is one ``uint32`` word whose bit ``c`` is column ``c``. The legal placements of one colour
are kept packed as ``uint32[O, H]``: bit ``c`` of word ``[o, r]`` says that orientation ``o`` anchored at ``(r, c)``
is legal. For a placement to be legal every cell must avoid the colour's *forbidden* cells (occupied by anyone,
edge-adjacent to the colour itself, or off the board) and at least one cell must hit a *corner* cell (diagonal to
the colour and not forbidden; on the first move, a start cell). Both tests shift whole rows at once, so a mask costs
about ``O * H * K`` word operations instead of one gather per placement.

Everything here is shape-static and works under ``jax.jit`` and ``jax.vmap``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax.tables import Tables

ALL_ONES = np.uint32(0xFFFFFFFF)


def pack_rows(cells: jax.Array) -> jax.Array:
    """``bool[..., H, W]`` -> ``uint32[..., H]`` with bit ``c`` of row ``r`` set where ``cells[r, c]``."""
    width = cells.shape[-1]
    weights = jnp.left_shift(jnp.uint32(1), jnp.arange(width, dtype=jnp.uint32))
    return jnp.sum(jnp.where(cells, weights, jnp.uint32(0)), axis=-1, dtype=jnp.uint32)


def unpack_rows(words: jax.Array, width: int) -> jax.Array:
    """``uint32[...]`` -> ``bool[..., width]``: the inverse of :func:`pack_rows`."""
    shifts = jnp.arange(width, dtype=jnp.uint32)
    return (jnp.right_shift(words[..., None], shifts) & jnp.uint32(1)).astype(bool)


def _shift_rows(rows: jax.Array, delta: int, fill) -> jax.Array:
    """Row ``r`` of the result is ``rows[r - delta]`` (``fill`` where that is off the board)."""
    pad = jnp.full((abs(delta),), fill, rows.dtype)
    if delta > 0:
        return jnp.concatenate([pad, rows[:-delta]])
    return jnp.concatenate([rows[-delta:], pad])


def forbidden_and_corners(tables: Tables, own: jax.Array, occupied: jax.Array, first_move: jax.Array,
                          color: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Row masks of the cells a colour may not cover and of the cells that give it corner contact.

    ``own`` and ``occupied`` are ``uint32[H]`` bitboards. Bits at columns >= W are set in ``forbidden`` so pieces
    cannot hang off the right edge.
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
    """Packed legal placements ``uint32[O, H]`` from the forbidden/corner row masks and ``bool[P]`` availability.

    Word ``[o, r]`` is the set of anchor columns where orientation ``o`` fits in rows ``r..`` without touching a
    forbidden cell and with at least one cell on a corner cell.
    """
    rows = tables.variant.board_shape[0]
    offsets = tables.cell_offsets                      # [O, K, 2], static
    max_dr = int(offsets[..., 0].max())
    pad = max_dr
    f_pad = jnp.concatenate([forbidden, jnp.full((pad,), ALL_ONES, jnp.uint32)])
    c_pad = jnp.concatenate([corners, jnp.zeros((pad,), jnp.uint32)])
    # windows[d] = rows d .. d + H - 1 of the padded boards (static slices)
    f_win = jnp.stack([f_pad[d:d + rows] for d in range(max_dr + 1)])
    c_win = jnp.stack([c_pad[d:d + rows] for d in range(max_dr + 1)])
    dr = jnp.asarray(offsets[..., 0])                   # [O, K]
    dc = jnp.asarray(offsets[..., 1].astype(np.uint32))[..., None]
    blocked = jnp.bitwise_or.reduce(f_win[dr] >> dc, axis=1)  # [O, H]
    touches = jnp.bitwise_or.reduce(c_win[dr] >> dc, axis=1)
    available = piece_available[jnp.asarray(tables.orientation_piece)][:, None]
    return jnp.where(available, jnp.asarray(tables.anchor_bits) & ~blocked & touches, jnp.uint32(0))


def popcount(words: jax.Array) -> jax.Array:
    """Set bits per ``uint32`` word, as int32."""
    return jax.lax.population_count(words).astype(jnp.int32)


def sample_from_bits(key: jax.Array, bits: jax.Array, width: int, pass_action: int) -> jax.Array:
    """A uniformly random set bit of packed ``uint32[O, H]`` bits as an action index (``pass_action`` if none)."""
    counts = popcount(bits).reshape(-1)
    cumulative = jnp.cumsum(counts)
    total = cumulative[-1]
    k = jax.random.randint(key, (), 0, jnp.maximum(total, 1))
    word_index = jnp.searchsorted(cumulative, k, side="right")
    word_index = jnp.minimum(word_index, counts.shape[0] - 1)
    rank = k - (cumulative[word_index] - counts[word_index])
    word = bits.reshape(-1)[word_index]
    set_bits = unpack_rows(word, width)
    col = jnp.argmax(set_bits & (jnp.cumsum(set_bits) == rank + 1))
    action = word_index * width + col
    return jnp.where(total > 0, action, pass_action).astype(jnp.int32)


def placement_plane(tables: Tables, action: jax.Array) -> jax.Array:
    """``bool[H, W]`` cells covered by placement ``action`` (all False for the pass)."""
    rows, cols = tables.variant.board_shape
    o = action // (rows * cols)
    r = (action // cols) % rows
    c = action % cols
    o = jnp.minimum(o, tables.num_orientations - 1)
    offsets = jnp.asarray(tables.cell_offsets)[o]        # [K, 2]
    rr = offsets[:, 0] + r
    cc = offsets[:, 1] + c
    is_pass = action == tables.pass_action
    rr = jnp.where(is_pass, rows, rr)                    # out of bounds -> dropped
    plane = jnp.zeros((rows, cols), bool)
    return plane.at[rr, cc].set(True, mode="drop")


def color_scores(tables: Tables, remaining: jax.Array, last_was_monomino: jax.Array) -> jax.Array:
    """``int32[C]`` standard scores: minus unplaced squares, +15 for placing everything, +5 more if the last piece
    placed was the monomino (bonuses only if the variant has them)."""
    unplaced = jnp.sum(remaining.astype(jnp.int32) * jnp.asarray(tables.piece_sizes), axis=-1)
    score = -unplaced
    if tables.variant.bonus:
        done = unplaced == 0
        score = score + jnp.where(done, 15 + 5 * last_was_monomino.astype(jnp.int32), 0)
    return score
