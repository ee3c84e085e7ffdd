"""The standard polyomino set and orientation generation, checked against Pentobi's piece tables."""

from __future__ import annotations

import pytest
import reference

from blokus_jax import STANDARD_SHAPES, Piece, PieceError, standard_pieces
from blokus_jax.pieces import JUNIOR_NAMES, orientations

EXPECTED_ORIENTATIONS = {
    "1": 1,
    "2": 2,
    "I3": 2,
    "V3": 4,
    "I4": 2,
    "L4": 8,
    "O": 1,
    "T4": 4,
    "Z4": 4,
    "F": 8,
    "I5": 2,
    "L5": 8,
    "N": 8,
    "P": 8,
    "T5": 4,
    "U": 4,
    "V5": 4,
    "W": 4,
    "X": 1,
    "Y": 8,
    "Z5": 4,
}


def _as_cells(rows) -> tuple:
    return tuple(tuple(cell) for cell in rows)


def test_standard_set_sizes():
    pieces = standard_pieces()
    assert len(STANDARD_SHAPES) == 21
    assert [p.name for p in pieces] == list(EXPECTED_ORIENTATIONS)
    assert {p.name: len(p.orientations) for p in pieces} == EXPECTED_ORIENTATIONS
    assert sum(len(p.orientations) for p in pieces) == 91
    assert sum(p.size for p in pieces) == 89
    assert sorted(p.size for p in pieces) == [1, 2, 3, 3] + [4] * 5 + [5] * 12


@pytest.mark.parametrize("file_name", ["classic_dev.json.gz", "junior_dev.json.gz"])
def test_orientations_equal_pentobi(oracle, file_name):
    header = oracle(file_name)["header"]
    ours = {p.name: p for p in standard_pieces()}
    for entry in header["pieces"]:
        piece = ours[entry["name"]]
        assert piece.size == entry["size"]
        assert len(piece.orientations) == entry["num_orientations"]
        assert piece.orientations == [_as_cells(o) for o in entry["orientations"]], entry["name"]
    if file_name.startswith("junior"):
        assert sorted(e["name"] for e in header["pieces"]) == sorted(JUNIOR_NAMES)
        assert {e["instances"] for e in header["pieces"]} == {2}


def test_reference_orientations_agree():
    for name, cells in STANDARD_SHAPES.items():
        assert reference.shape_orientations(cells) == orientations(cells), name


def test_orientations_are_normalised_and_invariant():
    for name, cells in STANDARD_SHAPES.items():
        images = orientations(cells)
        assert len(set(images)) == len(images)
        for image in images:
            assert min(r for r, _ in image) == 0 and min(c for _, c in image) == 0
            assert orientations(image) == images, name


def test_piece_normalises_cells():
    piece = Piece("odd", ((5, 7), (5, 8), (6, 7)))
    assert piece.cells == ((0, 0), (0, 1), (1, 0))
    assert piece.size == 3 and piece.copies == 1


@pytest.mark.parametrize(
    "cells, message",
    [
        ((), "has no cells"),
        (((0, 0), (0, 2)), "not edge-connected"),
        (((0, 0), (1, 1)), "not edge-connected"),
        (((0, 0), (0, 1), (0, 0)), "more than once"),
        (((0, "a"),), "integer pairs"),
    ],
)
def test_malformed_pieces_raise(cells, message):
    with pytest.raises(PieceError, match=message):
        Piece("bad", cells)


def test_piece_error_is_a_value_error_and_names_the_piece():
    with pytest.raises(ValueError, match="'lonely'"):
        Piece("lonely", ())
    with pytest.raises(PieceError, match="copies=0"):
        Piece("1", ((0, 0),), copies=0)
    with pytest.raises(PieceError, match="unknown standard piece names"):
        standard_pieces(["X", "Q7"])
