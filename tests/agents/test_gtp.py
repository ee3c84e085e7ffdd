"""The GTP engine (`blokus-jax gtp`): Pentobi's dialect, every command, bad input answered with `?` and nothing
changed, and Pentobi's own games (the oracle's records) replayed through `play` to Pentobi's final scores."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import numpy as np
import pytest

import blokus_agents  # noqa: F401  (registers the built-in agents)
from blokus_agents.engines.gtp import MAX_LINE, GtpEngine, GtpError, color_text, move_text, parse_color, parse_move
from blokus_jax import make

DATA = Path(__file__).parents[1] / "data"
REQUIRED = (
    "protocol_version name version known_command list_commands quit set_game clear_board play genmove undo "
    "all_legal final_score showboard set_random_seed cputime"
).split()


@pytest.fixture(scope="module")
def duo() -> GtpEngine:
    return GtpEngine("greedy", "duo", seed=0)


@pytest.fixture(scope="module")
def classic() -> GtpEngine:
    return GtpEngine("random", "classic", seed=0)


def ok(engine: GtpEngine, line: str) -> str:
    reply = engine.handle(line)
    assert reply is not None and reply.startswith("="), f"{line!r} -> {reply!r}"
    assert reply.endswith("\n\n")
    return reply[1:].strip()


def err(engine: GtpEngine, line: str) -> str:
    board = np.asarray(engine.state.board).copy()
    moves = len(engine.history)
    reply = engine.handle(line)
    assert reply is not None and reply.startswith("?"), f"{line!r} -> {reply!r}"
    assert reply.endswith("\n\n") and "\n" not in reply.strip()
    np.testing.assert_array_equal(np.asarray(engine.state.board), board)  # nothing changed
    assert len(engine.history) == moves
    return reply[1:].strip()


def test_protocol_basics(duo: GtpEngine) -> None:
    assert ok(duo, "protocol_version") == "2"
    assert ok(duo, "name") == "blokus-jax"
    assert "greedy" in ok(duo, "version")
    listed = ok(duo, "list_commands").split()
    assert set(REQUIRED) <= set(listed)
    assert all(ok(duo, f"known_command {c}") == "true" for c in REQUIRED)
    assert ok(duo, "known_command frobnicate") == "false"
    assert duo.handle("7 name") == "=7 blokus-jax\n\n"  # an id is echoed
    assert duo.handle("8 frobnicate").startswith("?8 unknown command")
    assert duo.handle("") is None and duo.handle("   # a comment") is None
    assert ok(duo, "name # trailing comment") == "blokus-jax"
    assert ok(duo, "\tNAME\x01") == "blokus-jax"  # tabs and control characters; commands are case-insensitive
    assert float(ok(duo, "cputime")) >= 0


def test_notation_and_colors() -> None:
    env = make("duo")
    assert [color_text(env.variant, c) for c in range(2)] == ["b", "w"]
    assert parse_color(env.variant, "Black") == 0 and parse_color(env.variant, "GREEN") == 1
    # columns from 'a' on the left, rows counted from 1 at the bottom: e10 is row 14 - 10 = 4, column 4
    action = parse_move(env, "e10")
    np.testing.assert_array_equal(env.action_cells(action), [[4, 4]])
    assert move_text(env, action) == "e10"
    three = parse_move(env, "f9, e10 ,f10")  # any order, spaces allowed
    assert sorted(map(tuple, env.action_cells(three))) == [(4, 4), (4, 5), (5, 5)]
    assert move_text(env, three) == "f9,e10,f10"  # Pentobi's order: bottom row first
    classic = make("classic")
    assert [color_text(classic.variant, c) for c in range(4)] == ["1", "2", "3", "4"]
    assert parse_color(classic.variant, "red") == 2
    for bad in ("b", "0", "5", "purple"):
        with pytest.raises(GtpError, match="colours are"):
            parse_color(classic.variant, bad)
    for bad in ("pass", "zz1", "a1,a1,a1,a1,a1,a1", "a1,c3", "e10;e9", ""):
        with pytest.raises(GtpError):
            parse_move(env, bad)


def test_play_genmove_undo(duo: GtpEngine) -> None:
    ok(duo, "clear_board")
    ok(duo, "play b e10")  # Purple's monomino on its start point
    assert duo.state.board[4, 4] == 1 and int(duo.state.current_color) == 1
    assert "P" in ok(duo, "showboard")
    reply = ok(duo, "genmove w")
    action = parse_move(duo.env, reply)
    assert duo.state.board[tuple(duo.env.action_cells(action)[0])] == 2
    assert int(duo.state.current_color) == 0
    ok(duo, "undo")
    assert int(duo.state.current_color) == 1 and int((np.asarray(duo.state.board) == 2).sum()) == 0
    ok(duo, "undo")
    assert not np.asarray(duo.state.board).any()
    assert "cannot undo" in err(duo, "undo")


def test_bad_commands_change_nothing(duo: GtpEngine) -> None:
    ok(duo, "clear_board")
    ok(duo, "play b e10")
    assert "illegal move" in err(duo, "play w e10")  # occupied
    assert "illegal move" in err(duo, "play w a1")  # not on Orange's start point
    assert "turn" in err(duo, "play b f11")  # Orange still has moves: b cannot move twice
    assert "colours are" in err(duo, "play x j5")
    assert "pass" in err(duo, "play w pass")
    assert "invalid move" in err(duo, "play w q99")
    assert "usage" in err(duo, "play w")
    assert "usage" in err(duo, "genmove")
    assert "usage" in err(duo, "genmove w b")
    assert "usage" in err(duo, "clear_board now")
    assert "seed" in err(duo, "set_random_seed -3")
    assert "seed" in err(duo, "set_random_seed abc")
    for bad in ("+5", "1_0", "9" * 30, "0x10", "1e3"):
        assert "seed" in err(duo, f"set_random_seed {bad}")
    assert "seed" in err(duo, f"set_random_seed {2**63}")
    for big in (str(2**64), "9" * 30, "0" * 30 + str(2**63)):  # too large: say so and name the bound
        assert f"is too large; give an integer from 0 to 2**63 - 1 ({2**63 - 1})" in err(duo, f"set_random_seed {big}")
    ok(duo, "set_random_seed " + "0" * 30 + str(2**63 - 1))  # the bound itself, however written
    assert "unknown game" in err(duo, "set_game Blokus Trigon")
    assert f"longer than {MAX_LINE}" in err(duo, "play w " + "a1," * 3000)
    ok(duo, "set_random_seed 12")
    ok(duo, "play w j5")  # the engine still plays after all of that
    ok(duo, "set_game Blokus Duo")  # the same game: a new one
    assert not np.asarray(duo.state.board).any()


def test_serve_frames_replies_and_stops_on_quit(duo: GtpEngine) -> None:
    stdin = io.StringIO("1 name\n\n# comment\n" + "x" * (MAX_LINE * 3) + "\n2 protocol_version\nquit\nname\n")
    stdout = io.StringIO()
    duo.quit = False
    assert duo.serve(stdin, stdout) == 0
    duo.quit = False
    replies = stdout.getvalue().split("\n\n")
    assert replies[0] == "=1 blokus-jax"
    assert replies[1].startswith("? command line longer")
    assert replies[2] == "=2 2" and replies[3] == "= " and replies[4] == ""  # nothing after quit


def test_all_legal_matches_the_mask(duo: GtpEngine) -> None:
    ok(duo, "clear_board")
    listed = ok(duo, "all_legal b").splitlines()
    mask = np.asarray(duo.state.legal_action_mask)[:-1]
    assert len(listed) == int(mask.sum()) == len(set(listed))
    assert {parse_move(duo.env, m) for m in listed} == set(np.flatnonzero(mask).tolist())
    # a colour not to move: its placements on the current board
    other = ok(duo, "all_legal w").splitlines()
    assert len(other) == len(listed) and all(parse_move(duo.env, m) >= 0 for m in other)


def _oracle(name: str, count: int) -> list[dict]:
    with gzip.open(DATA / f"{name}_dev.json.gz", "rt") as f:
        return json.load(f)["games"][:count]


@pytest.mark.parametrize("oracle", ["duo", "classic"])
def test_pentobi_games_replay_to_pentobi_scores(oracle: str, duo: GtpEngine, classic: GtpEngine) -> None:
    """Pentobi's recorded games, fed move by move through `play` (skipped colours left out, as Pentobi sends
    them), reach Pentobi's `final_score`; `all_legal` lists exactly Pentobi's legal moves on the first turns."""
    engine = duo if oracle == "duo" else classic
    for game in _oracle(oracle, 2):
        ok(engine, "clear_board")
        for turn in game["turns"]:
            if turn["passed"]:
                continue
            color = color_text(engine.env.variant, turn["color"])
            if turn["ply"] < 3:
                listed = {frozenset(map(tuple, engine.env.action_cells(parse_move(engine.env, m))))
                          for m in ok(engine, f"all_legal {color}").splitlines()}  # fmt: skip
                assert listed == {frozenset(map(tuple, cells)) for cells in turn["legal"]}
            ok(engine, f"play {color} {turn['gtp']}")
        expected = game["final"]["final_score_gtp"].split()
        assert ok(engine, "final_score").split() == expected
        assert ok(engine, "genmove " + color_text(engine.env.variant, 0)) == "pass"  # the game is over


def test_genmove_skips_colours_without_moves(duo: GtpEngine) -> None:
    """In a Pentobi game where one colour ran out of moves first, `genmove` for the other colour is answered
    without a move from the stuck colour (it is skipped), and `genmove` for the stuck colour says `pass`."""
    for game in _oracle("duo", 20):
        placements = [t for t in game["turns"] if not t["passed"]]
        passes = [t for t in game["turns"] if t["passed"]]
        if not passes:
            continue
        first_pass = game["turns"].index(passes[0])
        stuck = passes[0]["color"]
        ok(duo, "clear_board")
        for turn in game["turns"][:first_pass]:
            if not turn["passed"]:
                ok(duo, f"play {color_text(duo.env.variant, turn['color'])} {turn['gtp']}")
        assert ok(duo, f"genmove {color_text(duo.env.variant, stuck)}") == "pass"
        later = [t for t in placements if game["turns"].index(t) > first_pass]
        if later:
            mover = color_text(duo.env.variant, later[0]["color"])
            assert parse_move(duo.env, ok(duo, f"genmove {mover}")) >= 0
        return
    pytest.fail("no oracle Duo game has a colour that runs out of moves first")


@pytest.mark.parametrize(
    "line",
    ["name foo", "quit now please", "protocol_version 2", "version x", "list_commands all", "showboard b",
     "cputime 1", "clear_board now"],
)  # fmt: skip
def test_commands_without_arguments_refuse_extra_ones(duo: GtpEngine, line: str) -> None:
    assert "usage" in err(duo, line)
    assert not duo.quit  # 'quit now please' did not stop the engine


@pytest.mark.parametrize("ident", ["²", "٣", "１２", "3²"])
def test_ids_are_ascii_digits_only(duo: GtpEngine, ident: str) -> None:
    reply = duo.handle(f"{ident} name")
    assert reply is not None and reply.startswith("? ") and ident not in reply  # never echoed as an id
    assert "ASCII" in reply
    assert duo.handle("12 name") == "=12 blokus-jax\n\n"


@pytest.mark.parametrize(
    "line",
    ["play b \u212a1", "play b e\u0661\u0660", "play \u212a e10", "known_command \u212anown_command",
     "set_game Blo\u212aus Duo", "genmove blac\u212a"],
)  # fmt: skip
def test_non_ascii_letters_and_digits_are_never_read_as_ascii(duo: GtpEngine, line: str) -> None:
    ok(duo, "clear_board")
    assert "ASCII" in err(duo, line)


def test_parse_move_and_color_accept_ascii_only() -> None:
    env = make("duo")
    with pytest.raises(GtpError):
        parse_move(env, "\u212a1")  # the Kelvin sign is not the column k
    with pytest.raises(GtpError):
        parse_color(env.variant, "blac\u212a")
    assert parse_move(env, "k1") == parse_move(env, "K1")


def test_the_engine_reads_bytes_that_are_not_utf8_as_a_bad_command(monkeypatch) -> None:
    from blokus_agents.engines.gtp import run_engine

    raw = io.BytesIO(b"1 na\xffme\n2 name\n3 quit\n")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(raw, encoding="utf-8"))  # strict, as a terminal's may be
    out = io.StringIO()
    assert run_engine("random", "duo", stdout=out) == 0
    replies = out.getvalue().split("\n\n")
    assert replies[0].startswith("? ") and "ASCII" in replies[0]
    assert replies[1] == "=2 blokus-jax" and replies[2] == "=3 "


def test_a_controller_that_closes_its_end_stops_the_engine_quietly(duo: GtpEngine) -> None:
    class Closed(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    assert duo.serve(io.StringIO("name\nname\n"), Closed()) == 0
    assert not duo.quit
