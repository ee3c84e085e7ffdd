"""Egocentric observations for learning agents.

Layout (`OBS_VERSION = 1`), for an observing player `p`:

* Colour order: start from the colour to move if `p` is to move, else from `p`'s first colour; go round in turn
  order; then move `p`'s own colours to the front (stable). Position 0 is therefore "me, to move" on `p`'s turns.
* `planes`: `float32[H, W, 2C]`. Channels `0..C-1`: occupancy of each colour in that order. Channels
  `C..2C-1`: each colour's *corner cells* in that order (empty cells where that colour may start a piece: diagonal
  to it and not edge-adjacent to it, or its start cells before its first move).
* `pieces`: `float32[C, P]` remaining copies of each piece as a fraction of the full set, same colour order.
* `to_move`: `float32[C]` one-hot of the colour to move, same colour order.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from blokus_jax import rules
from blokus_jax.tables import Tables

#: Version of the observation layout; bump it whenever the layout above changes.
OBS_VERSION = 1


@struct.dataclass
class Observation:
    """Egocentric features of one position (see the module docstring for the layout); add leading axes for a batch.

    Attributes:
        planes: `float32[H, W, 2C]`: each colour's occupancy, then each colour's corner cells, in egocentric order.
        pieces: `float32[C, P]`: each colour's remaining copies of each piece, as a fraction of the full set.
        to_move: `float32[C]`: one-hot of the colour to move, in the same order.
    """

    planes: jax.Array
    pieces: jax.Array
    to_move: jax.Array


def color_order(tables: Tables, state, player: jax.Array) -> jax.Array:
    """The colours in egocentric order for a player: its own colours first, then the others, each group in turn
    order starting from the colour to move when the player is to move, else from its first colour.

    Args:
        tables: The variant's tables.
        state: The position.
        player: The player (an `int32` scalar).

    Returns:
        `int32[C]` colour indices.
    """
    num_colors = tables.variant.num_colors
    owners = jnp.asarray(tables.color_owner)
    first_own = jnp.argmax(owners == player)
    reference = jnp.where(state.current_player == player, state.current_color, first_own)
    cyclic = (reference + jnp.arange(num_colors)) % num_colors
    own = owners[cyclic] == player
    return cyclic[jnp.argsort(jnp.where(own, 0, 1) * num_colors + jnp.arange(num_colors))]


def observe(tables: Tables, state, player: jax.Array) -> Observation:
    """Features of a position from one player's point of view (`Env.observe` binds the tables).

    Args:
        tables: The variant's tables.
        state: The position.
        player: Whose view (an `int32` scalar).

    Returns:
        An `Observation` whose colour axes are in `color_order`.
    """
    width = tables.variant.board_shape[1]
    num_colors = tables.variant.num_colors
    order = color_order(tables, state, jnp.asarray(player, jnp.int32))
    colors = jnp.arange(num_colors)
    occupancy = state.board[None, :, :] == (colors + 1)[:, None, None].astype(jnp.int8)  # [C, H, W]
    own_rows = rules.pack_rows(occupancy)
    occupied = rules.pack_rows(state.board != 0)
    first = rules.is_first_move(state.pieces_placed)
    _, corners = jax.vmap(lambda own, f, c: rules.forbidden_and_corners(tables, own, occupied, f, c))(
        own_rows, first, colors
    )
    corner_planes = rules.unpack_rows(corners, width)  # [C, H, W]
    planes = jnp.concatenate([occupancy[order], corner_planes[order]], axis=0)
    copies = jnp.asarray(tables.piece_copies, jnp.float32)
    return Observation(
        planes=jnp.moveaxis(planes, 0, -1).astype(jnp.float32),
        pieces=state.remaining[order].astype(jnp.float32) / copies,
        to_move=(order == state.current_color).astype(jnp.float32),
    )
