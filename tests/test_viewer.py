"""The HTML viewer in a real headless browser (Debian chromium), and the ``view`` / ``replay`` commands."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from agents import cli
from blokus_jax import records

DATA = Path(__file__).parent / "data" / "sgf"
GAME = DATA / "classic_2" / "classic_2_dev_00_seed20241000.blksgf"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")


def _dom(page: Path, fragment: str) -> str:
    url = f"{page.resolve().as_uri()}#{fragment}"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True).stdout


def _board(dom: str, shape) -> np.ndarray:
    board = np.full(shape, -2)
    for r, c, v in re.findall(r'data-r="(\d+)" data-c="(\d+)" data-color="(-?\d+)"', dom):
        board[int(r), int(c)] = int(v)
    return board


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    out = tmp_path_factory.mktemp("viewer") / "game.html"
    assert cli.main(["view", str(GAME), "--out", str(out)]) == 0
    return out


def test_view_command_writes_a_self_contained_page(page):
    html = page.read_text()
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html and "<script src" not in html
    assert '"format":"blokus-jax/record"' in html


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (apt-get install -y chromium)")
def test_viewer_loads_steps_and_shows_the_right_position(page):
    record = records.load(GAME)
    rows, cols = record.variant.board_shape
    # open at position 20, then press Right three times and Left once through the real key handler
    dom = _dom(page, "step=20&keys=ArrowRight,ArrowRight,ArrowRight,ArrowLeft")
    status = re.search(r'<div id="status" data-step="(\d+)" data-total="(\d+)"', dom)
    assert status and int(status.group(1)) == 22 and int(status.group(2)) == len(record.actions)
    expected = np.asarray(record.state_at(22).board).astype(int) - 1
    np.testing.assert_array_equal(_board(dom, (rows, cols)), expected)
    # End jumps to the final position; the browser's scores equal the replayed ones
    dom = _dom(page, "keys=Home,End")
    np.testing.assert_array_equal(_board(dom, (rows, cols)), np.asarray(record.replay().board).astype(int) - 1)
    shown = [int(s) for s in re.findall(r'<td class="score">(-?\d+)</td>', dom)]
    assert shown == list(record.final_scores)
    players = [int(s) for s in re.findall(r'<td class="pscore">(-?\d+)</td>', dom)]
    assert players == list(record.player_scores)
    assert 'id="error"></div>' in dom


def _replay(capsys, *flags) -> str:
    assert cli.main(["replay", str(GAME), *flags]) == 0
    return capsys.readouterr().out.rstrip("\n")


def test_replay_command_prints_the_game(capsys):
    text = _replay(capsys)
    record = records.load(GAME)
    lines = text.splitlines()
    assert lines[0].startswith(f"{GAME.name}: classic_2p")
    assert lines[1].split()[:4] == ["1.", "Blue", "L5", "a19,a20,b20,c20,d20"]
    assert sum(" pass" in line for line in lines) == len(record.actions) - len(record.moves)
    assert lines[-1].startswith("result: ") and str(record.player_scores[0]) in lines[-1]
    assert "\x1b[" in _replay(capsys, "--ansi")
