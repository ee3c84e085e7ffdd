"""Pictures: text boards use Pentobi coordinates, SVG/PNG show the right squares, markers and pieces, and the
palette stays distinct under simulated colour blindness."""

from __future__ import annotations

import io
import itertools
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

import blokus_jax
from blokus_jax.errors import VariantError
from blokus_jax.io import records, render

DUO_GAME = Path(__file__).parents[1] / "data" / "sgf" / "duo" / "duo_dev_00_seed20243000.blksgf"
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def duo():
    record = records.from_blksgf(DUO_GAME.read_text())
    return record, record.state_at(10), record.replay()


def test_text_board_uses_pentobi_coordinates(duo):
    record, _, final = duo
    lines = render.to_text(final, "duo").splitlines()
    assert lines[0].split() == list("abcdefghijklmn")
    assert [line.split()[0] for line in lines[1:15]] == [str(n) for n in range(14, 0, -1)]
    # the first move B[d10,e10,d11,e11,d12] is Purple's ("P") at rows 10-12, columns d-e
    row10 = lines[1 + 14 - 10].split()[1:]
    assert row10[3].upper() == "P" and row10[4].upper() == "P"
    board = np.asarray(final.board)
    for r in range(14):
        cells = lines[1 + r].split()[1:]
        assert [".PO".index(ch.upper()) for ch in cells] == list(board[r])
    assert "Purple (P) -29:" in render.to_text(final, "duo") and "game over" in lines[-1]
    assert render.to_text(final) == render.to_text(final, record.variant)  # variant guessed from the shape


def test_text_marks_last_move_and_ansi(duo):
    _, state, _ = duo
    plain = render.to_text(state, "duo")
    assert sum(ch.islower() for line in plain.splitlines()[1:15] for ch in line.split(" ", 1)[1]) == len(
        blokus_jax.make("duo").action_cells(int(state.last_action))
    )
    coloured = render.to_text(state, "duo", ansi=True)
    assert "\x1b[35m" in coloured and "\x1b[" not in plain


def _svg(state, **kwargs):
    return ET.fromstring(render.to_svg(state, "duo", **kwargs))


def test_svg_squares_markers_and_pieces(duo):
    record, state, _ = duo
    root = _svg(state, legal_corners=True)
    fills = render.color_hex(record.variant)
    board = np.asarray(state.board)
    rects = [r for r in root.findall(f"{SVG}rect") if r.get("width") != "100%"]
    for color, fill in enumerate(fills):
        squares = [r for r in rects if r.get("fill") == fill and float(r.get("width")) == 24]
        assert len(squares) == int((board == color + 1).sum())
    last = [c for c in root.findall(f"{SVG}circle") if c.get("fill") == "#FFFFFF"]
    assert len(last) == len(blokus_jax.make("duo").action_cells(int(state.last_action)))
    corners = [r for r in rects if r.get("fill") == "none"]
    assert corners, "the colour to move has legal placements, so some corner markers must be drawn"
    texts = [t.text for t in root.findall(f"{SVG}text")]
    assert {"a", "n", "1", "14"} <= set(texts) and any(t.startswith("Purple") for t in texts)
    # remaining pieces beside the board: small squares, one per cell of each remaining piece
    mini = [r for r in rects if float(r.get("width")) == 6]
    remaining = np.asarray(state.remaining)
    assert len(mini) == sum(
        p.size * int(remaining[c, i] > 0) for c in range(2) for i, p in enumerate(record.variant.pieces)
    )


def test_svg_start_marker_and_single_live_corner_at_start():
    env = blokus_jax.make("duo")
    root = _svg(env.init(), legal_corners=True, pieces=False, coords=False)
    corners = [r for r in root.findall(f"{SVG}rect") if r.get("fill") == "none"]
    assert len(corners) == 1  # only the start square e10 = (4, 4)
    x, y = float(corners[0].get("x")), float(corners[0].get("y"))
    margin = 24 * 0.4
    assert (int((y - margin) // 24), int((x - margin) // 24)) == (4, 4)
    assert len(root.findall(f"{SVG}circle")) == 1  # ring on the start square


def _simulate(rgb, kind):
    # Machado et al. (2009) full-severity matrices on linear RGB
    matrices = {
        "protan": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
        "deutan": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
        "tritan": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
    }
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    return np.clip(lin @ np.asarray(matrices[kind]).T, 0, 1)


@pytest.mark.parametrize("name", ["classic", "duo", "junior"])
def test_palette_stays_distinct_for_colour_blind_viewers(name):
    variant = blokus_jax.get_variant(name)
    rgb = np.asarray([[int(h[i : i + 2], 16) / 255 for i in (1, 3, 5)] for h in render.color_hex(variant)])
    assert len(set(render.color_hex(variant))) == variant.num_colors
    for kind in ("protan", "deutan", "tritan"):
        sim = _simulate(rgb, kind)
        for a, b in itertools.combinations(range(len(sim)), 2):
            assert np.linalg.norm(sim[a] - sim[b]) > 0.1, (name, kind, a, b)


def test_png_and_rgb(duo):
    Image = pytest.importorskip("PIL.Image", reason="PNG pictures need the optional pillow dependency")
    record, state, _ = duo
    data = render.to_png(state, "duo")
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    image = Image.open(io.BytesIO(data)).convert("RGB")
    width, height = (float(v) for v in _svg(state).get("viewBox").split()[2:])
    assert image.size == (int(np.ceil(width)), int(np.ceil(height)))
    board = np.asarray(state.board)
    r, c = map(int, np.argwhere(board == 1)[0])
    margin = 24 * 1.2
    pixel = image.getpixel((int(margin + c * 24 + 4), int(margin + r * 24 + 4)))
    assert "#{:02X}{:02X}{:02X}".format(*pixel) == render.color_hex(record.variant)[0]
    rgb = render.to_rgb(state, "duo", cell=4)
    assert rgb.shape == (56, 56, 3) and rgb.dtype == np.uint8
    assert tuple(rgb[r * 4 + 2, c * 4 + 2]) == pixel


def test_variant_must_be_known():
    env = blokus_jax.make("simple", board_shape=(6, 6), start_cells=(((0, 0),), ((5, 5),)))
    with pytest.raises(VariantError, match="pass env="):
        render.to_text(env.init())
    assert render.to_text(env.init(), env).splitlines()[0].split() == list("abcdef")
    assert render.column_label(0) == "a" and render.column_label(25) == "z" and render.column_label(26) == "aa"
