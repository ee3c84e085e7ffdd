"""The shipped environment contract (:func:`blokus_jax.testing.check_env`) on every registered variant and on two
custom ones."""

from __future__ import annotations

import pytest

import blokus_jax as bj
from blokus_jax import Piece, Variant
from blokus_jax.testing import check_env

#: A small custom piece set: three colours (one shared, as in classic_3p) on a 6x6 board, with repeated copies.
TROMINOES = Variant(
    "trominoes",
    (6, 6),
    3,
    ((0,), (1,)),
    (((0, 0),), ((5, 5),), ((0, 5),)),
    (
        Piece("1", ((0, 0),), copies=2),
        Piece("I3", ((0, 0), (0, 1), (0, 2))),
        Piece("V3", ((0, 0), (0, 1), (1, 0)), copies=3),
    ),
    shared_color=2,
)

#: A custom board: a 9x11 rectangle with a few standard pieces and two start cells per colour, scored by margin.
RECTANGLE = dict(
    board_shape=(9, 11),
    start_cells=(((0, 0), (8, 10)), ((0, 10), (8, 0))),
    pieces=bj.standard_pieces(["1", "2", "V3", "L4", "T4", "P", "X"]),
)


@pytest.mark.parametrize("name", bj.variant_names())
def test_registered_variants_meet_the_contract(name):
    check_env(bj.make(name), eager_steps=1 if name == "simple" else 0)


@pytest.mark.slow
def test_custom_piece_set_meets_the_contract():
    check_env(bj.make(TROMINOES))


@pytest.mark.slow
def test_custom_board_meets_the_contract():
    check_env(bj.make("duo", reward="score", illegal_action_penalty=-3.0, **RECTANGLE), seed=1)
