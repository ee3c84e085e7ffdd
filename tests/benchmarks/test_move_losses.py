"""``benchmarks/move_losses.py``: records read with the agent's seat, results mapped to the agent, one win chance a
ply from a scripted GTP engine, and the table's changes telescoping to the game's result."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest
from helpers import ROOT, load_script

RECORD = """(;GM[Blokus Duo]PB[Pentobi 31.0]PW[blokus-jax strong]RE[W+3]
;B[e8,d9,e9,f9,e10];W[j5,i6,j6,k6,j7];B[h7,i7,g8,h8,h9];W[h4,f5,g5,h5,g6];W[k8,j9])
"""

#: A GTP engine for the test: after `clear_board` its first two genmoves place a piece (on no board), then it passes;
#: it scores the position by the `play` moves it was given and the seed: White wins when their number is even,
#: except under seed 0 mod 3, a draw.
ENGINE = textwrap.dedent(
    """
    import sys
    moves, seed, generated = 0, 1, 0
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        reply = ""
        if words[0] == "clear_board":
            moves, generated = 0, 0
        elif words[0] == "play":
            moves += 1
        elif words[0] == "set_random_seed":
            seed = int(words[1])
        elif words[0] == "genmove":
            generated += 1
            reply = "e8,d9" if generated <= 2 else "pass"
        elif words[0] == "final_score":
            reply = "0" if seed % 3 == 0 else ("W+2" if moves % 2 == 0 else "B+1")
        elif words[0] == "quit":
            print("=\\n", flush=True)
            break
        print("= " + reply + "\\n", flush=True)
    """
)


@pytest.fixture(scope="module")
def move_losses():
    return load_script(ROOT / "benchmarks" / "move_losses.py")


def test_read_game_finds_the_agent_and_every_move(move_losses, tmp_path):
    path = tmp_path / "g.blksgf"
    path.write_text(RECORD)
    agent, moves = move_losses.read_game(path, "blokus-jax")
    assert agent == 1
    assert moves[0] == ("b", "e8,d9,e9,f9,e10") and moves[-1] == ("w", "k8,j9") and len(moves) == 5
    with pytest.raises(ValueError, match="exactly one"):
        move_losses.read_game(path, "nobody")


def test_agent_result_maps_gtp_scores(move_losses):
    assert move_losses.agent_result("B+3", 0) == 1.0 and move_losses.agent_result("B+3", 1) == 0.0
    assert move_losses.agent_result("W+11", 1) == 1.0 and move_losses.agent_result("0", 0) == 0.5


def test_curve_from_a_scripted_engine_and_its_table(move_losses, tmp_path):
    script = tmp_path / "engine.py"
    script.write_text(ENGINE)
    path = tmp_path / "g.blksgf"
    path.write_text(RECORD)
    agent, moves = move_losses.read_game(path, "blokus-jax")
    engine = move_losses.GtpClient(f"{sys.executable} {script}")
    try:
        curve = move_losses.game_curve(engine, agent, moves, samples=3, seed=1)
    finally:
        engine.close()
    # seeds 1e6+3 + t*1009 + k for k = 0, 1, 2: exactly one of three is 0 mod 3 (a draw, 0.5 to White); the others
    # go to White after an even number of moves
    assert curve == [pytest.approx((0.5 + 2.0 * (t % 2 == 0)) / 3) for t in range(len(moves) + 1)]
    row = {"game": "g", "agent": agent, "colors": [c for c, _ in moves], "curve": curve}
    table = move_losses.summarize([row])
    first = table[0]  # the agent's moves 1-2: plies 1 and 3, each from an odd to an even number of moves
    assert first["count"] == 2 and first["agent"][0] == pytest.approx(2 / 3)
    assert first["engine_reply"][0] == pytest.approx(-2 / 3)
    # the changes across all plies telescope to the last chance minus the first
    assert sum(curve[t + 1] - curve[t] for t in range(len(moves))) == pytest.approx(curve[-1] - curve[0])
    json.dumps(table)  # the summary is plain data


def test_self_play_records_name_each_side_in_turn_and_keep_existing_files(move_losses, tmp_path):
    script = tmp_path / "engine.py"
    script.write_text(ENGINE)
    engine = move_losses.GtpClient(f"{sys.executable} {script}")
    try:
        paths = move_losses.self_play_records(engine, 2, tmp_path / "games")
        first = paths[0].read_text()
        paths[1].write_text(RECORD)  # an existing record is kept
        again = move_losses.self_play_records(engine, 2, tmp_path / "games")
    finally:
        engine.close()
    assert [p.name for p in again] == ["check_g000.blksgf", "check_g001.blksgf"]
    assert again[1].read_text() == RECORD and again[0].read_text() == first
    agent, moves = move_losses.read_game(paths[0], "blokus-jax")
    assert agent == 0 and moves == [("b", "e8,d9"), ("w", "e8,d9")]
