"""The HTML viewer in a real headless browser (Debian chromium), and the ``view`` / ``replay`` commands."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from blokus_agents import cli
from blokus_jax.io import records, viewer
from blokus_jax.io.record_json import variant_to_dict
from blokus_jax.rollout import rollout

DATA = Path(__file__).parents[1] / "data" / "sgf"
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


def test_view_never_overwrites_its_input_or_another_records_page(tmp_path, capsys):
    record = records.load(GAME)
    json_record = record.save(tmp_path / "game.json")
    as_html = tmp_path / "rec.html"  # a record that happens to be named .html
    as_html.write_text(json_record.read_text())
    before = as_html.read_bytes()
    assert cli.main(["view", str(as_html)]) == 2
    assert "overwrite its input" in capsys.readouterr().err and as_html.read_bytes() == before
    assert cli.main(["view", str(json_record), "--out", str(json_record)]) == 2
    assert "must be an .html file" in capsys.readouterr().err
    other = tmp_path / "other.json"
    other.write_text(json_record.read_text())
    assert cli.main(["view", str(json_record), "--out", str(other.with_suffix(".html").with_name("x.htm"))]) == 0
    notes = tmp_path / "notes.html"
    notes.write_text("<p>my notes</p>")
    assert cli.main(["view", str(json_record), "--out", str(notes)]) == 2
    assert "not a blokus-jax viewer page" in capsys.readouterr().err and notes.read_text() == "<p>my notes</p>"
    # game.json's page: written once, rewritten for the same record, kept from another record unless --force
    page = tmp_path / "game.html"
    assert cli.main(["view", str(json_record)]) == 0 and page.exists()
    assert cli.main(["view", str(json_record)]) == 0
    assert cli.main(["view", str(other), "--out", str(page)]) == 2
    assert "viewer page of another record" in capsys.readouterr().err
    assert viewer.page_source(page) == str(json_record.resolve())  # the page says which record it shows
    assert str(tmp_path) not in page.read_text()  # by its file name only
    assert cli.main(["view", str(other), "--out", str(page), "--force"]) == 0
    assert viewer.page_source(page) == str(other.resolve()) and str(tmp_path) not in page.read_text()
    assert cli.main(["view", str(json_record), "--out", str(tmp_path)]) == 2
    capsys.readouterr()
    assert cli.main(["view", str(page), "--out", str(tmp_path / "again.html")]) == 2
    assert "not a game record" in capsys.readouterr().err


def test_view_checks_the_output_before_loading_the_record(tmp_path, capsys):
    bad = tmp_path / "bad.blksgf"
    bad.write_text("(;GM[Blokus Duo];B[a1,b1")
    notes = tmp_path / "notes.html"
    notes.write_text("mine")
    assert cli.main(["view", str(bad), "--out", str(notes)]) == 2
    assert "not a blokus-jax viewer page" in capsys.readouterr().err


def test_replay_escapes_control_characters_from_the_file(tmp_path, capsys):
    import dataclasses

    import jax

    import blokus_jax
    from blokus_jax.pieces import Piece

    base = blokus_jax.get_variant("simple")
    pieces = tuple(Piece(f"\x1b[31m{k}\x07", p.cells, p.copies) for k, p in enumerate(base.pieces))
    env = blokus_jax.make(dataclasses.replace(base, name="evil\x1b]0;title\x07", pieces=pieces))
    _, actions = rollout(env, jax.random.key(1), batch=1)
    record = records.from_rollout(env, actions, players=["\x1b[2J", "b\r\n"], metadata={"k\x1b": "\x9b6n"})[0]
    path = record.save(tmp_path / "evil.json")
    assert cli.main(["replay", str(path), "--boards"]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in "\x1b\x07\r\x9b") and "\\x1b[2J" in out and "\\x07" in out


def test_view_refuses_a_tiny_record_asking_for_a_billion_pieces(tmp_path, capsys):
    variant = variant_to_dict(records.load(GAME).variant)
    variant["pieces"] = [["1", [[0, 0]], 10**9]]
    path = tmp_path / "huge.json"
    path.write_text('{"format":"blokus-jax/record","version":1,"variant":' + json.dumps(variant) + ',"actions":[]}')
    assert cli.main(["view", str(path)]) == 2
    assert "copies" in capsys.readouterr().err and not path.with_suffix(".html").exists()
