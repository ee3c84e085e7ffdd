"""`blokus-jax match --variant classic`: one agent seat against an engine in the other three, without Pentobi. An
in-process fake engine (the project's own GTP engine behind `GtpClient`'s interface, failing on purpose where asked)
stands in for it: seats rotate, the legal moves are compared at every move, an engine that fails mid-game is counted
apart, an interrupted match says what it kept and resumes, and the summary reports first places, rank and margin
with no Elo."""

from __future__ import annotations

import json
import math

import pytest

import blokus_agents  # noqa: F401  (registers the built-in agents)
from blokus_agents.engines import ladder, rating
from blokus_agents.engines.gtp import GtpEngine
from blokus_agents.engines.gtp_client import EngineError
from blokus_jax.io import records

NAME = "FakeEngine 1.0"


class FakeEngine:
    """`GtpClient`'s interface over the project's `GtpEngine` (agent `random`), in this process. The command line
    says what it does wrong: `fake crash N` dies at its N-th genmove, `fake drop N` leaves a legal move out of its
    N-th all_legal reply; plain `fake` plays whole games. It counts the all_legal requests it answers."""

    def __init__(self, gtp: GtpEngine, command: str):
        words = command.split()
        self.gtp, self.mode = gtp, words[1] if len(words) > 1 else ""
        self.at = int(words[2]) if len(words) > 2 else 0
        self.alive, self.genmoves, self.all_legal = True, 0, 0

    def send(self, command: str) -> str:
        if not self.alive:
            raise EngineError("crash", f"the fake engine exited before {command!r}")
        word = command.split()[0]
        if word == "name":
            return NAME.split()[0]
        if word == "version":
            return NAME.split()[1]
        if word == "genmove":
            self.genmoves += 1
            if self.mode == "crash" and self.genmoves == self.at:
                self.alive = False
                raise EngineError("crash", f"the engine exited (code 3) while answering {command!r}")
        reply = self.gtp.handle(command) or "= "
        if reply.startswith("?"):
            raise EngineError("refused", f"the engine refused {command!r}: {reply[1:].strip()}")
        body = reply[1:].strip()
        if word == "all_legal":
            self.all_legal += 1
            if self.mode == "drop" and self.all_legal == self.at:
                body = "\n".join(body.splitlines()[1:])
        return body

    def known(self, command: str) -> bool:
        return self.send(f"known_command {command}") == "true"

    def close(self, kill: bool = False) -> None:
        self.alive = False


@pytest.fixture(scope="module")
def gtp() -> GtpEngine:
    return GtpEngine("random", "classic")


@pytest.fixture(scope="module")
def runner() -> ladder.MatchRunner:
    return ladder.MatchRunner("random", "classic", timeout=5.0)


@pytest.fixture
def engines(gtp, monkeypatch) -> list[FakeEngine]:
    """Every engine the match starts is a `FakeEngine` (the command line picks its fault); returns them all."""
    started: list[FakeEngine] = []

    def start(command, timeout=60.0, stderr=None):
        started.append(FakeEngine(gtp, command))
        return started[-1]

    monkeypatch.setattr(ladder, "GtpClient", start)
    return started


def _settings(command: str, games: int = 1) -> ladder.MatchSettings:
    return ladder.MatchSettings("random", command, "classic", games, 0, 0)


def test_an_engine_that_fails_mid_game_is_counted_apart(runner, engines, tmp_path) -> None:
    engine = runner.start_engine("fake crash 20")
    failed = runner.game(engine, 1, None, _settings("fake crash 20"), tmp_path)
    assert failed.failed and failed.error.startswith("crash") and failed.moves > 20
    assert failed.share is None and failed.margin is None and failed.rank is None and failed.record is None
    assert not list(tmp_path.iterdir())  # no record of a game that did not finish
    good = ladder.GameResult(0, None, 0, 0.0, [-10, -5, -3, 0], -10, 80, 0.01, 0.01)
    summary = ladder.LevelSummary.of(None, [failed, good], players=4)
    # neither a win nor a loss: the finished game alone makes the share, rank and margin
    assert (summary.games, summary.errors, summary.error_kinds) == (1, 1, {"crash": 1})
    assert (summary.win_rate, summary.mean_rank, summary.margin) == (0.0, 4.0, -10.0)


def test_the_legal_moves_are_compared_at_every_move(runner, engines, tmp_path) -> None:
    engine = runner.start_engine("fake drop 7")
    result = runner.game(engine, 2, None, _settings("fake drop 7"), tmp_path)
    assert result.failed and result.error.startswith("disagreement") and "at move 7" in result.error
    assert result.moves == 6 and engines[-1].all_legal == 7  # one request before each of the seven placements


@pytest.mark.slow
def test_seats_rotate_and_an_interrupted_match_resumes(engines, tmp_path, monkeypatch, capsys) -> None:
    """Four games through `blokus-jax match`: Ctrl-C after two keeps them and says how to go on, the same command
    plays only games 2 and 3, the agent sits in seats 0-3, each placement's legal moves were compared, the saved
    games name the engine by its GTP name, and the summary (table and JSON) reports first places, rank and margin
    next to what an equal player takes, with no Elo."""
    from blokus_agents.cli import main

    results, games, report = tmp_path / "m.jsonl", tmp_path / "games", tmp_path / "summary.json"
    argv = ["match", "--agent", "random", "--variant", "classic", "--engine", "fake", "--games", "4"]
    argv += ["--results", str(results), "--save-games", str(games), "--json", str(report)]
    game, calls = ladder.MatchRunner.game, []

    def interrupted_third(self, *args, **kwargs):
        calls.append(args[1])
        if len(calls) == 3:
            raise KeyboardInterrupt
        return game(self, *args, **kwargs)

    monkeypatch.setattr(ladder.MatchRunner, "game", interrupted_third)
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert "2 finished game(s) of 4 are kept in" in err and str(results) in err and str(games) in err
    assert "run the same command again to play the 2 left" in err and not report.exists()

    monkeypatch.setattr(ladder.MatchRunner, "game", game)
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "reusing 2 finished game(s)" in captured.err and "2 left to play" in captured.err
    rows = [json.loads(line) for line in results.read_text().splitlines()[1:]]
    assert [r["game"] for r in rows] == [0, 1, 2, 3] and [r["seat"] for r in rows] == [0, 1, 2, 3]
    assert sum(e.all_legal for e in engines) == sum(r["moves"] for r in rows)  # before every placement
    for row in rows:
        assert row["error"] is None and row["moves"] > 40 and len(row["scores"]) == 4
        result = ladder.GameResult(**row)
        others = [s for p, s in enumerate(row["scores"]) if p != row["seat"]]
        assert row["margin"] == row["scores"][row["seat"]] - max(others)
        assert (row["share"] > 0) == (result.rank < 2) and 1 <= result.rank <= 4
        players = records.load(row["record"]).players
        assert players[row["seat"]] == "blokus-jax random"
        assert [p for s, p in enumerate(players) if s != row["seat"]] == [NAME] * 3

    out = captured.out
    assert "1st share" in out and "an equal player: 0.25" in out and "mean rank" in out and "margin" in out
    assert "win rate" not in out and "Elo" not in out  # no levels, no Elo
    summary = json.loads(report.read_text())
    assert summary["elo"] is None
    (level,) = summary["summaries"]
    assert level["players"] == 4 and level["games"] == 4 and level["equal_share"] == 0.25 and "win_rate" not in level
    shares = [r["share"] for r in rows]
    assert math.isclose(level["first_place_share"], sum(shares) / 4, abs_tol=1e-6)
    low, high = level["interval"]
    assert low <= level["first_place_share"] <= high
    assert math.isclose(level["mean_rank"], sum(ladder.GameResult(**r).rank for r in rows) / 4, abs_tol=1e-6)
    assert math.isclose(level["mean_margin"], sum(r["margin"] for r in rows) / 4, abs_tol=1e-6)


def test_ranks_split_ties_and_four_players_are_rated_as_pentobi_rates_them() -> None:
    def result(scores, seat=0, share=0.0):
        return ladder.GameResult(0, 1, seat, share, scores, 0, 80, 0.0, 0.0)

    assert result([5, 1, 1, 0]).rank == 1.0 and result([0, 1, 2, 3]).rank == 4.0
    assert result([3, 3, 0, 0]).rank == 1.5 and result([0, 3, 0, 0]).rank == 3.0  # three tied for 2nd-4th
    assert result([1, 0], share=1.0).rank == 1.0
    assert ladder.GameResult(0, 1, 0, None, [], None, 5, 0.0, 0.0, "crash: gone").rank is None
    four = {1: [result([9, 1, 1, 1], share=1.0), result([0, 1, 1, 1])]}
    summaries, elo = ladder.summarize("classic", four)
    assert summaries[0].players == 4 and summaries[0].equal_share == 0.25
    assert summaries[0].first_place_share == 0.5 and summaries[0].mean_rank == 2.5
    # half the first places against three level-1 seats: 1 / (1 + 3 * 10 ** ((1000 - R) / 400)) = 0.5
    assert abs(elo[0] - (1000 + 400 * math.log10(3))) <= 1 and elo[1] < elo[0] < elo[2]
    # an equal player's share rates at the opponents' rating
    assert abs(rating.ladder_elo([(1283, 25, 100)], opponents=3)[0] - 1283) <= 1
    with pytest.raises(ladder.MatchError, match="opponents"):
        rating.ladder_elo([(1283, 25, 100)], opponents=0)
    two = {1: [result([3, 1], share=1.0), result([1, 3], share=0.0)]}
    summaries, elo = ladder.summarize("classic_2p", two)
    assert elo is not None and abs(elo[0] - rating.level_elo("classic_2p", 1)) <= 1
    assert summaries[0].to_dict()["win_rate"] == 0.5
