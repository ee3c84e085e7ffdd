"""`blokus-jax match`: games against GTP engines (a tiny misbehaving one written for the tests, and the project's
own `blokus-jax gtp`), failures counted apart and never as wins, results that resume, and the Elo ladder."""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import pytest

import blokus_agents  # noqa: F401  (registers the built-in agents)
from blokus_agents.engines import ladder
from blokus_agents.engines.gtp_client import EngineError, GtpClient, MatchError
from blokus_agents.engines.rating import ladder_elo, level_elo, parse_levels
from blokus_jax.io import records, sgf

TINY = f"{sys.executable} {Path(__file__).parent / 'tiny_gtp_engine.py'}"


@pytest.fixture(scope="module")
def runner() -> ladder.MatchRunner:
    return ladder.MatchRunner("greedy", "duo", timeout=5.0)


def test_levels_and_pentobi_ratings() -> None:
    assert parse_levels("1-5") == [1, 2, 3, 4, 5]
    assert parse_levels("2,4") == [2, 4] and parse_levels("3") == [3] and parse_levels("1-2,2-3") == [1, 2, 3]
    for bad in ("0", "10", "5-1", "a", "", "1-"):
        with pytest.raises(MatchError):
            parse_levels(bad)
    assert level_elo("duo", 1) == 1000 and level_elo("duo", 4) == 1567 and level_elo("duo", 9) == 2209
    assert level_elo("classic_2p", 3) == 1283
    with pytest.raises(MatchError):
        level_elo("simple", 1)
    with pytest.raises(MatchError):
        level_elo("duo", 10)


def test_ladder_elo() -> None:
    # even results against one rating: that rating; a 76 % score is about +200
    estimate, low, high = ladder_elo([(1567, 50, 100)])
    assert abs(estimate - 1567) <= 1 and low < 1567 < high and high - low < 200
    assert abs(ladder_elo([(1378, 76, 100)])[0] - (1378 + 400 * math.log10(76 / 24))) <= 1
    # more games, narrower interval; levels on both sides pull the estimate between them
    assert ladder_elo([(1567, 500, 1000)])[2] - ladder_elo([(1567, 500, 1000)])[1] < high - low
    mid = ladder_elo([(1378, 80, 100), (1755, 20, 100)])[0]
    assert 1378 < mid < 1755
    # all wins against the strongest: no upper bound
    assert ladder_elo([(1000, 10, 10)])[2] == math.inf
    assert ladder_elo([(1000, 0, 10)])[1] == -math.inf
    with pytest.raises(MatchError):
        ladder_elo([])


@pytest.mark.parametrize(
    "mode, kinds",  # the failure seen with the agent in seat 0 (it moves first) and in seat 1
    [("crash", "crash crash"), ("garbage", "garbage garbage"), ("illegal", "illegal illegal"),
     ("slow", "timeout timeout"), ("refuse", "disagreement illegal"), ("disagree", "disagreement disagreement"),
     ("mute", "crash crash")],
)  # fmt: skip
def test_misbehaving_engines_end_the_game_and_count_apart(runner, mode, kinds, tmp_path) -> None:
    settings = ladder.MatchSettings("greedy", f"{TINY} {mode}", "duo", 2, 0, 0)
    engine = None
    results = []
    for index in range(2):  # seat 0 (the agent moves first) and seat 1 (the engine does)
        if engine is None or not engine.alive:
            try:
                engine = runner.start_engine(settings.engine)
            except EngineError as exc:
                assert exc.kind == kinds.split()[index]
                results.append(None)
                continue
        results.append(runner.game(engine, index, None, settings, tmp_path))
    if engine is not None:
        engine.close()
    for result, kind in zip(results, kinds.split()):
        if result is not None:
            assert result.failed and result.error.startswith(kind) and result.share is None, result
            assert result.record is None
    summary = ladder.LevelSummary.of(None, [r for r in results if r is not None])
    assert summary.games == 0 and summary.errors == len([r for r in results if r is not None])


def test_gtp_client_bounds_and_errors() -> None:
    with pytest.raises(MatchError, match="cannot start"):
        GtpClient("/nonexistent/engine --flag")
    with pytest.raises(MatchError, match="empty"):
        GtpClient("   ")
    with pytest.raises(MatchError, match="split"):
        GtpClient('engine "unterminated')
    client = GtpClient(f"{TINY} slow", timeout=0.5)
    assert client.send("name") == ""
    with pytest.raises(EngineError) as caught:
        client.send("genmove b")
    assert caught.value.kind == "timeout" and not client.alive
    with pytest.raises(EngineError) as caught:
        client.send("name")
    assert caught.value.kind == "crash"


def test_resignation_is_a_win_and_results_resume(tmp_path) -> None:
    results, games = tmp_path / "match.jsonl", tmp_path / "games"
    first = ladder.play_match("greedy", f"{TINY} resign", 2, results=results, games_dir=games, progress=False)
    rows = first[None]
    assert [r.share for r in rows] == [1.0, 1.0] and all(r.resigned for r in rows)
    # the agent moved before the engine resigned in game 0 (seat 0), not in game 1 (seat 1)
    assert rows[0].moves == 1 and rows[1].moves == 0
    assert records.load(rows[0].record).actions  # the saved game opens as a record
    # the records say the agent won by resignation; an unfinished position's scores give no margin
    assert [sgf.read(Path(r.record).read_text()).result for r in rows] == ["B+R", "W+R"]
    assert [r.margin for r in rows] == [None, None]
    # a longer match with the same settings plays only the missing games
    again = ladder.play_match("greedy", f"{TINY} resign", 3, results=results, games_dir=games, progress=False)
    assert [r.game for r in again[None]] == [0, 1, 2]
    lines = [json.loads(line) for line in results.read_text().splitlines()]
    assert lines[0]["type"] == "settings" and [row["game"] for row in lines[1:]] == [0, 1, 2]
    # an interrupted file (a game line lost) resumes that game
    results.write_text("\n".join(json.dumps(x) for x in lines[:2]) + "\n")
    resumed = ladder.play_match("greedy", f"{TINY} resign", 3, results=results, progress=False)
    assert [r.game for r in resumed[None]] == [0, 1, 2]
    # another agent's file is refused, and so is a file that is not a results file
    with pytest.raises(MatchError, match="other settings"):
        ladder.play_match("random", f"{TINY} resign", 3, results=results, progress=False)
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not json\n")
    with pytest.raises(MatchError, match="not a results line"):
        ladder.play_match("greedy", f"{TINY} resign", 1, results=junk, progress=False)


def test_bad_match_settings() -> None:
    with pytest.raises(MatchError, match="level"):
        ladder.play_match("greedy", f"{TINY} resign", 1, levels=[1])
    with pytest.raises(MatchError, match="--levels"):
        ladder.play_match("greedy", f"{TINY} resign --level {{level}}", 1)
    with pytest.raises(MatchError, match="positive"):
        ladder.play_match("greedy", f"{TINY} resign", 0)
    with pytest.raises(MatchError, match="no Pentobi game"):
        ladder.MatchRunner("greedy", "simple")


@pytest.mark.slow
def test_match_command_against_blokus_jax_gtp(tmp_path, capsys) -> None:
    """`blokus-jax match` against `blokus-jax gtp` (the project's own engine, rules checked by all_legal at every
    move): every game finishes, the table and the results file say so, and the games open as records."""
    from blokus_agents.cli import main

    engine = f"{sys.executable} -m blokus_agents.cli gtp --agent greedy --variant duo"
    results, games = tmp_path / "m.jsonl", tmp_path / "games"
    argv = ["match", "--agent", "random", "--engine", engine, "--games", "2", "--results", str(results)]
    assert main([*argv, "--save-games", str(games)]) == 0
    out = capsys.readouterr().out
    assert "win rate" in out and "random against" in out
    rows = [json.loads(line) for line in results.read_text().splitlines()[1:]]
    assert len(rows) == 2 and all(r["error"] is None and r["moves"] > 10 for r in rows)
    assert [r["seat"] for r in rows] == [0, 1]
    for row in rows:
        record = records.load(row["record"])
        assert len(record.moves) >= row["moves"]
    # a bad level list or engine command is refused before any game
    with pytest.raises(SystemExit) as exit_:
        main(["match", "--agent", "random", "--engine", engine, "--levels", "0-3"])
    assert exit_.value.code == 2 and "each level is 1-9" in capsys.readouterr().err


def test_match_command_shows_a_calibration_as_it_goes(monkeypatch, capsys) -> None:
    """A time-budgeted agent (``strong``) calibrates when the match starts: `blokus-jax match` prints each step."""
    from blokus_agents.cli import main
    from blokus_agents.search import mcts as search

    def calibrating(*args, **kwargs):
        search.calibration_log.info("compiling a 32-simulation probe search (%.0f s so far)", 2.0)
        raise MatchError("stop after the calibration")

    monkeypatch.setattr(ladder, "play_match", calibrating)
    assert main(["match", "--agent", "strong", "--engine", f"{TINY} resign --level {{level}}", "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert "\n  compiling a 32-simulation probe search (2 s so far)\n" in f"\n{err}" and "stop after" in err


# ------------------------------------------------------------------------------ hostile paths and results files
def _resign_match(tmp_path, **kwargs):
    return ladder.play_match("greedy", f"{TINY} resign", 2, progress=False, **kwargs)


def test_a_dangling_link_as_the_results_file_is_refused_and_nothing_is_written_elsewhere(tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    link = tmp_path / "results.jsonl"
    link.symlink_to(elsewhere / "created.jsonl")
    with pytest.raises(MatchError, match="symbolic link"):
        _resign_match(tmp_path, results=link)
    assert list(elsewhere.iterdir()) == [] and link.is_symlink()


def test_appending_to_a_results_file_through_a_link_is_refused(tmp_path) -> None:
    real = tmp_path / "real.jsonl"
    _resign_match(tmp_path, results=real)
    before = real.read_bytes()
    link = tmp_path / "link.jsonl"
    link.symlink_to(real)
    with pytest.raises(MatchError, match="symbolic link"):
        ladder.play_match("greedy", f"{TINY} resign", 3, progress=False, results=link)
    assert real.read_bytes() == before


def test_a_link_planted_in_the_games_folder_is_never_written_through(tmp_path) -> None:
    games, victim = tmp_path / "games", tmp_path / "victim.txt"
    games.mkdir()
    victim.write_text("precious")
    (games / "game0000.blksgf").symlink_to(victim)
    results = tmp_path / "r.jsonl"
    rows = _resign_match(tmp_path, results=results, games_dir=games, log=lambda text: None)[None]
    assert victim.read_text() == "precious" and (games / "game0000.blksgf").is_symlink()
    # the game whose record could not be written still counts and is in the results file
    assert rows[0].share == 1.0 and rows[0].record is None and rows[1].record is not None
    assert [json.loads(x).get("game") for x in results.read_text().splitlines()[1:]] == [0, 1]


def test_a_link_as_the_games_folder_is_refused(tmp_path) -> None:
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "games").symlink_to(target)
    with pytest.raises(MatchError, match="symbolic link"):
        _resign_match(tmp_path, games_dir=tmp_path / "games")
    assert list(target.iterdir()) == []


def test_an_unwritable_games_folder_keeps_the_results_and_goes_on(tmp_path, monkeypatch) -> None:
    from blokus_jax.io import fileio

    def refuse(*args, **kwargs):
        raise kwargs["error"]("cannot write game record: Permission denied")

    monkeypatch.setattr(fileio, "write_atomic", refuse)
    said: list[str] = []
    results = tmp_path / "r.jsonl"
    rows = _resign_match(tmp_path, results=results, games_dir=tmp_path / "games", log=said.append)[None]
    assert [r.share for r in rows] == [1.0, 1.0] and all(r.record is None for r in rows)
    assert len(results.read_text().splitlines()) == 3
    assert sum("warning" in line and "not saved" in line for line in said) == 2


GOOD_ROW = {"game": 0, "level": None, "seat": 0, "share": 1.0, "scores": [10, 3], "margin": 7, "moves": 1,
            "agent_seconds": 0.1, "engine_seconds": 0.1, "error": None, "record": None, "resigned": True}  # fmt: skip


@pytest.mark.parametrize(
    "line, field",
    [('{"share": 5.0}', "'share'"), ('{"share": NaN}', "'share'"), ('{"share": "1"}', "'share'"),
     ('{"game": -1}', "'game'"), ('{"game": "0"}', "'game'"), ('{"game": 1.5}', "'game'"),
     ('{"game": true}', "'game'"), ('{"error": 3, "share": null}', "'error'"), ('{"scores": "10"}', "'scores'"),
     ('{"agent_seconds": Infinity}', "'agent_seconds'"), ('{"level": 12}', "'level'"),
     ('{"share": null}', "'share'"), ('{"surprise": 1}', "'surprise'"), ("[1, 2]", "JSON object"),
     ('{"game": 1e400}', "'game'")],
)  # fmt: skip
def test_every_results_line_is_checked_naming_file_line_and_field(tmp_path, line, field) -> None:
    path = tmp_path / "r.jsonl"
    _resign_match(tmp_path, results=path)
    head = path.read_text().splitlines()[0]
    bad = line if line.startswith("[") else json.dumps(GOOD_ROW)[:-1] + ", " + line[1:]
    path.write_text(head + "\n" + bad + "\n")
    with pytest.raises(MatchError) as caught:
        _resign_match(tmp_path, results=path)
    assert str(path) in str(caught.value) and "line 2" in str(caught.value) and field in str(caught.value)


def test_results_files_that_are_not_utf8_text_or_regular_files_are_refused_at_once(tmp_path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"\n\xff\xfe\n")
    with pytest.raises(MatchError, match=r"r.jsonl', line 2: not UTF-8"):
        _resign_match(tmp_path, results=path)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(MatchError, match="FIFO|not a regular file"):  # at once: nothing writes to it
        _resign_match(tmp_path, results=fifo)
    long = tmp_path / "long.jsonl"
    long.write_bytes(b"x" * (ladder.MAX_RESULTS_LINE + 10) + b"\n")
    with pytest.raises(MatchError, match="longer than"):
        _resign_match(tmp_path, results=long)


def test_numeric_settings_are_bounded() -> None:
    with pytest.raises(MatchError, match="at most"):
        ladder.play_match("greedy", f"{TINY} resign", 10**9)
    with pytest.raises(MatchError, match="seed"):
        ladder.play_match("greedy", f"{TINY} resign", 1, seed=2**63)
    with pytest.raises(MatchError, match="timeout"):
        ladder.play_match("greedy", f"{TINY} resign", 1, timeout=1e10)
