"""The `blokus-jax` command: help, eval (table and JSON), play driven by scripted stdin, bench delegation."""

from __future__ import annotations

import io
import json
import re
import sys
import threading

import jax
import pytest

import blokus_jax
from blokus_agents import cli, resolve_agent
from blokus_agents.cli import play
from blokus_agents.players.bots import get_bot
from blokus_jax import rollout
from blokus_jax.io import records, render


@pytest.mark.parametrize("command", [[], ["eval"], ["play"], ["bench"]])
def test_every_subcommand_has_help(command, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(command + ["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "usage: blokus-jax" in out
    if not command:
        assert all(name in out for name in ("eval", "play", "bench"))


def test_eval_prints_a_table_and_writes_json(tmp_path, capsys):
    path = tmp_path / "result.json"
    code = cli.main(
        [
            "eval",
            "--variant",
            "simple",
            "--agents",
            "random",
            "greedy",
            "--games",
            "6",
            "--seed",
            "1",
            "--no-progress",
            "--json",
            str(path),
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "random" in out and "greedy" in out and "win rate" in out
    data = json.loads(path.read_text())
    assert data["variant"] == "simple" and data["games"] == 6
    rates = {a["name"]: a for a in data["agents"]}
    assert set(rates) == {"random", "greedy"}
    assert abs(rates["random"]["win_rate"] + rates["greedy"]["win_rate"] - 1.0) < 1e-9
    for agent in data["agents"]:
        lo, hi = agent["win_rate_ci"]
        assert 0 <= lo <= agent["win_rate"] <= hi <= 1 and isinstance(agent["mean_score"], float)


def test_eval_rejects_unknown_agents_with_a_clear_message(capsys):
    assert cli.main(["eval", "--variant", "simple", "--agents", "random", "alphazero", "--no-progress"]) == 2
    assert "unknown agent 'alphazero'" in capsys.readouterr().err


def test_agent_specs_take_options():
    env = blokus_jax.make("simple")
    assert callable(resolve_agent("minimax:k=3,depth=1", env))
    with pytest.raises(ValueError, match="key=value"):
        resolve_agent("minimax:k", env)
    with pytest.raises(ValueError, match="bad options"):
        resolve_agent("greedy:k=3", env)


def test_parse_move_accepts_both_formats():
    env = blokus_jax.make("duo")
    by_piece = cli.play.parse_move("L4 0 e10", env)
    assert by_piece == env.encode_action(5, 0, 4, 4)
    cells = " ".join(render.cell_name(env.variant, r, c) for r, c in env.action_cells(by_piece))
    assert cli.play.parse_move(cells, env) == by_piece
    assert cli.play.parse_move(cells.replace(" ", ","), env) == by_piece
    for bad in ("z1 a1", "e5 g7", "X 9 a1", "W a1"):
        with pytest.raises(blokus_jax.IllegalActionError):
            cli.play.parse_move(bad, env)


def run_play(monkeypatch, capsys, script: str, *extra: str) -> str:
    monkeypatch.setattr(sys, "stdin", io.StringIO(script))
    assert cli.main(["play", "--variant", "simple", "--opponent", "greedy", "--hint-bot", "corners", *extra]) == 0
    return capsys.readouterr().out


def test_play_keeps_the_position_on_bad_input_and_undoes(monkeypatch, capsys):
    out = run_play(monkeypatch, capsys, "help\nfoo\n1 0 d4\nhint\na7\nundo\nundo\nquit\n")
    assert "Commands:" in out
    assert "error: 'foo' is not a cell" in out
    assert (
        "error: 1 0 d4 (cells d4) is not legal here: Blue's first piece '1' at d4 does not cover its start "
        "square a7" in out
    )
    assert "hint: " in out
    assert "Blue starts on a7" in out
    assert "you play 1 0 a7 (cells a7)" in out
    assert "player 1 (Yellow) plays" in out
    assert "undone" in out and "nothing to undo" in out and out.rstrip().endswith("bye")
    boards = re.findall(r"  a b c d e f g\n((?:.*\n){7})", out)
    assert boards[0] == boards[-1] and "B" not in boards[0]  # undo restored the start
    assert "b" in boards[1] or "B" in boards[1]


class HintFollower(io.StringIO):
    """A scripted stdin that asks for a hint and then types the hinted cells, until the game ends."""

    def __init__(self, out: io.StringIO):
        super().__init__()
        self.out = out
        self.asked = False

    def readline(self, *args) -> str:
        self.asked = not self.asked
        if self.asked:
            return "hint\n"
        hint = re.findall(r"hint: .*\(cells ([^)]*)\)", self.out.getvalue())[-1]
        return hint + "\n"


def test_play_runs_a_whole_game_from_typed_moves():
    env = blokus_jax.make("simple")
    out = io.StringIO()
    code = cli.play.play_game(env, get_bot("random", env), get_bot("greedy", env), 1, 0, HintFollower(out), out)
    text = out.getvalue()
    assert code == 0
    assert text.count("you play ") >= 4
    assert "error" not in text
    assert re.search(r"game over: scores \[-?\d+, -?\d+\]; (you win|you lose|a tie)", text)


def test_bench_prints_a_throughput_table(capsys):
    assert cli.main(["bench", "--variants", "simple", "--batch-sizes", "4", "--steps", "3", "--repeats", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("| variant | batch | device | placements/s")
    row = [c.strip() for c in lines[2].split("|")[1:-1]]
    assert row[0] == "simple" and row[1] == "4" and float(row[3].replace(",", "")) > 0


@pytest.mark.slow
def test_eval_saves_sample_games_that_view_and_replay_open(tmp_path, capsys):
    games = tmp_path / "games"
    assert (
        cli.main(
            [
                "eval",
                "--variant",
                "duo",
                "--agents",
                "greedy",
                "random",
                "--games",
                "2",
                "--no-progress",
                "--save-games",
                str(games),
                "--num-saved",
                "2",
            ]
        )
        == 0
    )
    saved = sorted(games.glob("game_*.blksgf"))
    assert len(saved) == 2
    record = records.load(saved[0])
    assert record.players == ("greedy", "random") and record.terminated
    capsys.readouterr()
    assert cli.main(["replay", str(saved[0])]) == 0
    assert cli.main(["view", str(saved[0]), "--out", str(tmp_path / "game.html")]) == 0
    out = capsys.readouterr().out
    assert "Purple" in out and str(tmp_path / "game.html") in out
    assert "<svg" in (tmp_path / "game.html").read_text()


def test_view_reports_a_corrupt_record_with_exit_code_2(tmp_path, capsys):
    bad = tmp_path / "bad.blksgf"
    bad.write_text("(;GM[Blokus Duo];B[a1,b1")
    assert cli.main(["view", str(bad)]) == 2
    assert "truncated" in capsys.readouterr().err


# ------------------------------------------------------------------------------- user errors
@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "--minutes", "0"], "argument --minutes: '0' must be a finite number above 0"),
        (["train", "--blocks", "-1"], "argument --blocks: '-1' is too small"),
        (["train", "--lr", "nan"], "argument --lr: 'nan' must be a finite number"),
        (["train", "--num-envs", "many"], "argument --num-envs: 'many' is not a whole number"),
        (["train", "--root-value", "1.5"], "argument --root-value: '1.5' must be a weight from 0 to 1"),
        (["train", "--root-value", "half"], "argument --root-value: 'half' is not a number"),
        (["bench", "--batch-sizes", "0"], "argument --batch-sizes: '0' is too small"),
        (["bench", "--repeats", "0"], "argument --repeats: '0' is too small"),
        (["eval", "--games", "-5"], "argument --games: '-5' is too small"),
        (["eval", "--json", "/missing/dir/x.json"], "the directory of '/missing/dir/x.json' does not exist"),
        (["match", "--agent", "greedy", "--engine", "e", "--timeout", "1e10"], "'1e10' is too long"),
        (["match", "--agent", "greedy", "--engine", "e", "--seed", str(2**63)], "is too large; give a seed"),
        (["match", "--agent", "greedy", "--engine", "e", "--seed", "\u0663"], "is not a whole number"),
        (["match", "--agent", "greedy", "--engine", "e", "--games", "1000000000"], "is too large; give a number"),
        (["gtp", "--seed", str(2**32)], "argument --seed: '4294967296' is too large"),
        (["play", "--seed", str(2**63)], "argument --seed"),
        (["train", "--seed", "-1"], "argument --seed: '-1' is too small"),
        (["train", "--seed", str(2**32)], "argument --seed: '4294967296' is too large; give a seed"),
        (["train", "--num-envs", str(2**21)], "argument --num-envs: '2097152' is too large"),
        (["eval", "--games", "1000000000"], "argument --games: '1000000000' is too large"),
        (["bench", "--batch-sizes", "1000000000000"], "argument --batch-sizes: '1000000000000' is too large"),
        (["bench", "--steps", "10000000000"], "argument --steps: '10000000000' is too large"),
    ],
)
def test_bad_flags_fail_at_once_with_a_clear_message(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_links_as_output_paths_are_refused_before_any_work(tmp_path, capsys):
    (tmp_path / "dangling.json").symlink_to(tmp_path / "elsewhere" / "x.json")
    (tmp_path / "folder").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "folder")
    for argv in (
        ["train", "--json", str(tmp_path / "dangling.json")],
        ["eval", "--json", str(tmp_path / "dangling.json")],
        ["match", "--agent", "greedy", "--engine", "e", "--results", str(tmp_path / "dangling.json")],
        ["match", "--agent", "greedy", "--engine", "e", "--save-games", str(tmp_path / "linked")],
        ["train", "--out", str(tmp_path / "linked")],
    ):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        assert exc.value.code == 2
        assert "is a symbolic link" in capsys.readouterr().err
    assert not (tmp_path / "elsewhere").exists() and list((tmp_path / "folder").iterdir()) == []


def test_output_paths_are_checked_before_any_work(tmp_path, capsys):
    existing = tmp_path / "a_file"
    existing.write_text("x")
    for argv in (
        ["train", "--out", str(existing)],
        ["eval", "--json", str(tmp_path)],
        ["eval", "--save-games", str(existing)],
    ):
        with pytest.raises(SystemExit) as exc:
            cli.main(argv)
        assert exc.value.code == 2
    assert "is a file" in capsys.readouterr().err


@pytest.mark.slow
def test_eval_prints_the_head_to_head_matrix(capsys):
    assert (
        cli.main(
            ["eval", "--variant", "simple", "--agents", "random", "greedy", "corners", "--games", "2", "--no-progress"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "head to head" in out and out.count("-") >= 3


@pytest.mark.parametrize("variant", blokus_jax.variant_names())
def test_the_help_examples_parse_on_every_board(variant):
    env = blokus_jax.make(variant)
    text = cli.play.play_help(env)
    example = re.search(r'e\.g\. "([^"]+)": piece name', text).group(1)
    cells = re.search(r'the cells to cover, e\.g\. "([^"]+)"', text).group(1)
    assert cli.play.parse_move(example, env) == cli.play.parse_move(cells, env)


def test_play_explains_unknown_pieces_and_orientation_numbers():
    env = blokus_jax.make("simple")
    with pytest.raises(blokus_jax.IllegalActionError, match="'L5' is not a piece of 'simple'; its pieces are 1 2"):
        cli.play.parse_move("L5 3 c4", env)
    with pytest.raises(blokus_jax.IllegalActionError, match=r"'L4' has orientations 0-7 .*'show L4'"):
        cli.play.parse_move("L4 9 a7", env)
    with pytest.raises(blokus_jax.IllegalActionError, match="does not fit on the board"):
        cli.play.parse_move("I4 0 g1", env)


def test_play_reports_bad_moves_without_leaving_the_game(monkeypatch, capsys):
    out = run_play(monkeypatch, capsys, "L5 3 c4\nI4 1 g1\nshow Q\nquit\n")
    assert "'L5' is not a piece of 'simple'" in out and "does not fit on the board" in out
    assert "'Q' is not a piece" in out and out.rstrip().endswith("bye")


# ------------------------------------------------------------------------------------ hostile input and files
@pytest.mark.parametrize("variant", blokus_jax.variant_names())
def test_the_help_example_is_a_legal_first_move_of_each_seat(variant):
    env = blokus_jax.make(variant)
    state = env.init()
    for color in range(env.num_colors):
        text = cli.play.play_help(env, color)
        example = re.search(r'e\.g\. "([^"]+)": piece name', text).group(1)
        cells = re.search(r'the cells to cover, e\.g\. "([^"]+)"', text).group(1)
        action = cli.play.parse_move(example, env)
        assert action == cli.play.parse_move(cells, env)
        starts = {tuple(c) for c in env.variant.start_cells[color]}
        assert starts & {tuple(map(int, rc)) for rc in env.action_cells(action)}, "covers the colour's start square"
        if color == int(state.current_color):
            assert bool(env.is_legal(state, action))


def test_the_readme_play_examples_are_legal_first_moves_on_duo():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    line = next(x for x in readme.splitlines() if x.startswith("blokus-jax play --variant duo"))
    moves = [m for m in re.findall(r'"([^"]+)"', line.split("#", 1)[1]) if m != "help"]
    assert len(moves) == 2
    env = blokus_jax.make("duo")
    for move in moves:
        assert bool(env.is_legal(env.init(), cli.play.parse_move(move, env))), move


def test_play_marks_the_start_squares_and_suggests_a_mistyped_command(monkeypatch, capsys):
    out = run_play(monkeypatch, capsys, "hlep\nqiut\nundp\nquit\n")
    assert "unknown command 'hlep'; did you mean 'help'?" in out
    assert "did you mean 'quit'?" in out and "did you mean 'undo'?" in out
    board = re.search(r"  a b c d e f g\n((?:.*\n){7})", out).group(1)
    assert board.splitlines()[0].split()[1] == "*"  # a7, Blue's start square, top-left
    assert "* = start square: a7 (Blue)" in out
    env = blokus_jax.make("simple")
    assert cli.play.suggest_command("a7", env) is None and cli.play.suggest_command("L4 0 a7", env) is None
    assert cli.play.suggest_command("zzzzzz", env) is None  # nothing close: read as a move, which explains itself


def test_the_last_move_has_a_legend():
    env = blokus_jax.make("duo")
    state = env.step(env.init(), cli.play.parse_move("F 1 d12", env))
    text = render.to_text(state, env)
    assert "p = last move (Purple: " in text
    assert "@ = last move (Purple: " in render.to_text(state, env, ansi=True)
    assert "last move" not in render.to_text(env.init(), env)


def test_eval_prints_the_compile_line_even_without_progress_and_says_how_many_games_it_saves(tmp_path, capsys):
    argv = ["eval", "--variant", "simple", "--agents", "corners", "random", "--games", "2", "--no-progress"]
    assert cli.main(argv + ["--seed", "3", "--save-games", str(tmp_path / "g"), "--num-saved", "3"]) == 0
    err = capsys.readouterr().err
    assert re.search(r"compiling the match corners vs random .*\n.*compiled in \d+\.\d s", err)
    assert "saving 3 sample games of corners (player 0) vs random" in err and "--num-saved" in err
    assert len(list((tmp_path / "g").glob("game_*"))) == 3


@pytest.mark.parametrize("opening", ["200", "100000000000000000000", "20"])
def test_eval_checks_the_opening_against_the_game_length_before_any_work(opening, capsys):
    argv = ["eval", "--variant", "simple", "--agents", "random", "greedy", "--opening", opening, "--no-progress"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "--opening" in err and "a game has at most 20 moves" in err and "Traceback" not in err
    assert "compiling" not in err


def test_every_error_is_one_line_and_debug_shows_the_traceback(monkeypatch, capsys):
    def broken(args):
        raise RuntimeError("something deep\nsecond line")

    monkeypatch.setitem(cli._COMMANDS, "bench", ("x", lambda parser: broken))
    assert cli.main(["bench"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "blokus-jax bench: error: unexpected RuntimeError: something deep (rerun with --debug" in err
    assert cli.main(["--debug", "bench"]) == 2
    assert "Traceback" in capsys.readouterr().err
    assert cli.main(["bench", "--debug"]) == 2
    assert "Traceback" in capsys.readouterr().err
    monkeypatch.setenv("BLOKUS_JAX_DEBUG", "1")
    assert cli.main(["bench"]) == 2
    assert "Traceback" in capsys.readouterr().err


def test_view_open_without_a_browser_says_so(tmp_path, monkeypatch, capsys):
    import webbrowser

    env = blokus_jax.make("simple")
    _, actions = rollout.rollout(env, jax.random.key(0), 1, env.sample_action)
    (path,) = records.save_records(records.from_rollout(env, actions), tmp_path, fmt="json")

    def no_browser(*args, **kwargs):
        raise webbrowser.Error("could not locate runnable browser")

    monkeypatch.setattr(webbrowser, "get", no_browser)
    assert cli.main(["view", str(path), "--open"]) == 0
    captured = capsys.readouterr()
    assert "--open: no web browser found" in captured.err and str(path.with_suffix(".html")) in captured.out


def test_play_builds_a_timed_hint_bot_only_when_a_hint_is_asked(monkeypatch, capsys):
    """The default hint bot (strong) is calibrated at the first 'hint', so a game without hints starts at once, and
    says how its calibration goes step by step."""
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    assert cli.main(["play", "--variant", "simple", "--opponent", "greedy"]) == 0
    assert "preparing" not in capsys.readouterr().err
    from blokus_agents.core import policies
    from blokus_agents.search import mcts as search

    built = []

    def resolve(spec, env):  # a timed spec calibrates (here: says it came to 77 simulations), others do not
        built.append(spec)
        if cli.play._timed(spec):
            search.calibration_log.info("compiling a 32-simulation probe search (%.0f s so far)", 3.0)
            monkeypatch.setitem(search._CALIBRATED, ("test", spec), search.Budget((0,), (77,)))
        return get_bot("corners", env)

    monkeypatch.setattr(policies, "resolve_agent", resolve)
    monkeypatch.setattr(play, "FIRST_HINT_WAIT", 1e6)  # the build is quick here: the first hint waits for it
    monkeypatch.setattr(sys, "stdin", io.StringIO("hint\nhint\nquit\n"))
    assert cli.main(["play", "--variant", "simple", "--opponent", "greedy", "--hint-bot", "strong:seconds=1"]) == 0
    captured = capsys.readouterr()
    assert built == ["greedy", "strong:seconds=1"]  # built once, at the first hint
    assert captured.err.count("preparing 'strong:seconds=1' for hints in the background") == 1
    # its search is compiled in the background too, so the first hint it answers does not compile in silence
    assert captured.err.count("\n  compiling 'strong:seconds=1''s search for hints (once a process)\n") == 1
    assert captured.err.count("'strong:seconds=1': 77 simulations a move on this machine") == 1
    # each step of the calibration is shown while it runs, indented under the line that announced it
    assert captured.err.count("\n  compiling a 32-simulation probe search (3 s so far)\n") == 1
    assert "'greedy':" not in captured.err
    assert captured.out.count("hint: ") == 2


def test_the_first_hint_answers_at_once_with_a_cheap_bot_while_the_hint_bot_calibrates(monkeypatch, capsys):
    """A hint bot still calibrating (here: until the second hint is typed) does not block the game: the interim bot
    answers and says so, with the time left; once built, the hint bot answers."""
    from blokus_agents.core import policies
    from blokus_agents.search import calibration_store

    release = threading.Event()
    built = []

    def resolve(spec, env):
        built.append(spec)
        if play._timed(spec):
            assert release.wait(60), "the test never released the calibration"
        return get_bot("corners", env)

    class Stdin(io.StringIO):
        """Releases the calibration and waits for it when the third line is read."""

        lines = 0

        def readline(self, *args):
            Stdin.lines += 1
            if Stdin.lines == 3:
                release.set()
                for thread in threading.enumerate():
                    if thread.name == "hint-bot-calibration":
                        thread.join(60)
            return super().readline(*args)

    monkeypatch.setattr(policies, "resolve_agent", resolve)
    monkeypatch.setattr(play, "FIRST_HINT_WAIT", 0.0)
    monkeypatch.setattr(calibration_store, "calibration_remaining", lambda: 42.0)
    monkeypatch.setattr(sys, "stdin", Stdin("hint\nhint\nhint\nquit\n"))
    assert cli.main(["play", "--variant", "simple", "--opponent", "greedy", "--hint-bot", "strong:seconds=1"]) == 0
    out = capsys.readouterr().out
    hints = [line for line in out.splitlines() if "hint: " in line]
    assert len(hints) == 3
    assert all("(from 'greedy' while 'strong:seconds=1' calibrates, about 42 s left)" in h for h in hints[:2])
    assert "calibrates" not in hints[2]  # the hint bot itself, once built
    assert built.count("strong:seconds=1") == 1 and "greedy" in built


def test_the_help_texts_name_every_command_and_read_plainly():
    """``blokus-jax --help`` names every command; no flag's help nests parentheses; a flag that takes one agent
    says "the agent", one that takes several "the agents"."""
    import re

    from blokus_agents.cli import COMMANDS, DESCRIPTION

    assert all(re.search(rf"[(, ]{command.NAME}[,)]", DESCRIPTION) for command in COMMANDS), DESCRIPTION
    parser = cli.build_parser()
    for name, command in parser.commands.items():
        for action in command._actions:
            depth = 0
            for char in action.help or "":
                depth += {"(": 1, ")": -1}.get(char, 0)
                assert depth <= 1, (name, action.dest, action.help)
    helps = {(n, a.dest): a.help for n, c in parser.commands.items() for a in c._actions}
    assert helps["match", "agent"].startswith("the agent: ") and helps["gtp", "agent"].startswith("the agent that")
    assert helps["eval", "agents"].startswith("the agents, each ")
