"""``blokus-jax play``'s input loop holds against hostile lines (caps on a line's length and words, orientation
numbers in ASCII digits only) and a bad ``--hint-bot`` is refused before the game starts."""

from __future__ import annotations

import io
import sys

import pytest

import blokus_jax
from blokus_agents import cli
from blokus_agents.cli import play


def run_play(monkeypatch, capsys, script: str, *extra: str) -> str:
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    assert cli.main(["play", "--variant", "simple", "--opponent", "greedy", "--hint-bot", "corners", *extra]) == 0
    return capsys.readouterr().out


def test_a_huge_line_is_refused_without_being_echoed_and_the_game_goes_on(monkeypatch, capsys):
    huge = " ".join(["a1"] * 100_000)  # 300,000 characters
    out = run_play(monkeypatch, capsys, huge + "\npieces\nquit\n")
    assert f"error: a line has at most {play.MAX_LINE_CHARS} characters" in out
    assert len(out) < 20_000 and "a1 a1 a1" not in out
    assert "bye" in out and "1(1)" in out  # the next line ('pieces') was read as a line of its own


@pytest.mark.parametrize("orientation", ["²", "٣", "0" * 5000, "1234"])
def test_an_orientation_outside_ascii_digits_or_too_long_is_a_clear_error(orientation):
    env = blokus_jax.make("simple")
    with pytest.raises(blokus_jax.IllegalActionError, match="written in the digits 0-9") as caught:
        play.parse_move(f"L4 {orientation} a1", env)
    assert len(str(caught.value)) < 300


def test_a_line_of_too_many_words_is_a_clear_error():
    env = blokus_jax.make("simple")
    with pytest.raises(blokus_jax.IllegalActionError, match=f"at most {play.MAX_TOKENS} words"):
        play.parse_move(" ".join(["a1"] * (play.MAX_TOKENS + 1)), env)


@pytest.mark.parametrize(
    ("hint_bot", "message"),
    [
        ("strong:seconds=-1", "seconds"),
        ("mcts:seconds=abc", "seconds"),
        ("mcts:sims=8,seconds=2", "not both"),
        ("nosuch", "unknown agent 'nosuch'"),
    ],
)
def test_a_bad_hint_bot_is_refused_before_the_game_starts(hint_bot, message, monkeypatch, capsys):
    def no_game(*args, **kwargs):
        raise AssertionError("the game started")

    monkeypatch.setattr(play, "play_game", no_game)
    monkeypatch.setattr(sys, "stdin", io.StringIO("hint\nquit\n"))
    assert cli.main(["play", "--variant", "simple", "--hint-bot", hint_bot]) == 2
    err = capsys.readouterr().err
    assert "blokus-jax play: error:" in err and message in err


def test_help_inside_play_names_the_hint_bot_flag(monkeypatch, capsys):
    assert "--hint-bot" in run_play(monkeypatch, capsys, "help\nquit\n")


@pytest.mark.parametrize("text", ["\u212a1", "L4 0 \u212a1", "\u212a1 \u212a2", "a\u0661"])
def test_a_kelvin_sign_or_other_non_ascii_is_no_cell(text):
    env = blokus_jax.make("duo")  # 14 columns: 'k' is one of them
    with pytest.raises(blokus_jax.IllegalActionError):
        play.parse_move(text, env)
    with pytest.raises(blokus_jax.IllegalActionError):
        play.parse_cell("\u212a1", env)
    assert play.parse_cell("k1", env) == play.parse_cell("K1", env)


def test_typed_bytes_that_are_not_utf8_or_a_kelvin_sign_are_bad_moves_and_the_game_goes_on(monkeypatch, capsys):
    raw = io.BytesIO("\xff1\n\u212a1\npieces\nquit\n".encode("utf-8").replace(b"\xc3\xbf", b"\xff"))
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(raw, encoding="utf-8"))  # strict, as a terminal's may be
    assert cli.main(["play", "--variant", "simple", "--opponent", "greedy", "--hint-bot", "corners"]) == 0
    out = capsys.readouterr().out
    assert out.count("is not a cell") == 2 and "1(1)" in out and "bye" in out
