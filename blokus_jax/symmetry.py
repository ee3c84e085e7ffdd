"""The board's diagonal reflection as a symmetry of a variant: where it holds (a square board whose every colour's
start cells reflect onto themselves, e.g. Duo), a position and its reflection are the same game, so a learner may
train on both. `reflected_actions` maps action ids, `reflect_legal_bits` packed legal placements and
`reflect_observation` observations."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax import rules
from blokus_jax.observe import Observation
from blokus_jax.tables import Tables, join_action
from blokus_jax.variants import Variant


def is_reflection_symmetric(variant: Variant) -> bool:
    """Whether reflecting the board in its main diagonal (`(r, c) -> (c, r)`) maps the game onto itself: the board
    is square and each colour's start cells are their own reflection (Duo and Junior, not Classic, whose corners
    swap colours).

    Args:
        variant: The rules.

    Returns:
        Whether the reflection is a symmetry.
    """
    rows, cols = variant.board_shape
    if rows != cols:
        return False
    return all({(c, r) for r, c in cells} == {(r, c) for r, c in cells} for cells in variant.start_cells)


@functools.lru_cache(maxsize=16)
def _reflected_orientations(variant: Variant) -> np.ndarray:
    tables = Tables(variant)
    shapes = {frozenset(map(tuple, cells.tolist())): o for o, cells in enumerate(tables.orientation_cells)}
    mirror = np.asarray([shapes[frozenset((c, r) for r, c in cells.tolist())] for cells in tables.orientation_cells])
    mirror.setflags(write=False)
    return mirror


@functools.lru_cache(maxsize=16)
def _reflected_actions(variant: Variant) -> np.ndarray:
    tables = Tables(variant)
    rows, cols = variant.board_shape
    mirror = _reflected_orientations(variant)
    o, r, c = np.meshgrid(np.arange(tables.num_orientations), np.arange(rows), np.arange(cols), indexing="ij")
    placements = join_action(mirror[o], c, r, (rows, cols)).reshape(-1)
    table = np.append(placements, tables.pass_action).astype(np.int32)
    table.setflags(write=False)
    return table


def _require(variant: Variant) -> None:
    if not is_reflection_symmetric(variant):
        raise ValueError(
            f"variant {variant.name!r}: reflecting its board in the diagonal is not a symmetry of the game (the board "
            f"must be square and every colour's start cells their own reflection)"
        )


def reflected_orientations(variant: Variant) -> np.ndarray:
    """The orientations reflected in the main diagonal: an involution within each piece.

    Args:
        variant: The rules.

    Returns:
        `int32[O]`, entry `o` the orientation whose cells are orientation `o`'s reflected.

    Raises:
        ValueError: The reflection is not a symmetry of the variant (`is_reflection_symmetric`).
    """
    _require(variant)
    return _reflected_orientations(variant)


def reflected_actions(variant: Variant) -> np.ndarray:
    """The actions reflected in the main diagonal (the same piece, reflected, on the reflected cells; the pass
    onto itself). An involution: `table[table] == arange`.

    Args:
        variant: The rules.

    Returns:
        `int32[num_actions]`, entry `a` the action that plays `a`'s reflection.

    Raises:
        ValueError: The reflection is not a symmetry of the variant (`is_reflection_symmetric`).
    """
    _require(variant)
    return _reflected_actions(variant)


def reflect_legal_bits(variant: Variant, bits: jax.Array) -> jax.Array:
    """The packed legal placements of the reflected position: orientation `o` at `(r, c)` becomes its reflected
    orientation at `(c, r)`.

    Args:
        variant: The rules.
        bits: Packed legal placements `uint32[..., O, H]` of a position.

    Returns:
        Those of its reflection, same shape.

    Raises:
        ValueError: The reflection is not a symmetry of the variant (`is_reflection_symmetric`).
    """
    mirror = jnp.asarray(reflected_orientations(variant))
    width = variant.board_shape[1]
    cells = rules.unpack_rows(bits, width)  # [..., O, H, W]
    return rules.pack_rows(jnp.take(cells, mirror, axis=-3).swapaxes(-2, -1))


def reflect_observation(obs: Observation) -> Observation:
    """The observation of the reflected position: the planes' rows and columns swapped; pieces and the colour to
    move are unchanged (the reflection keeps every colour's start cells).

    Args:
        obs: An `Observation`, with any leading batch axes.

    Returns:
        The reflected `Observation`.
    """
    return obs.replace(planes=obs.planes.swapaxes(-3, -2))


__all__ = [
    "is_reflection_symmetric",
    "reflect_legal_bits",
    "reflect_observation",
    "reflected_actions",
    "reflected_orientations",
]
