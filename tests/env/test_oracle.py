"""Replays every Pentobi reference game and compares turn order, legal sets, final board and scores exactly.

The oracle records a pass turn *every* time a stuck colour's turn comes round; our environment passes a colour once
and then skips it. So on an oracle pass turn we step ``pass_action`` only if it is our colour to move (and then the
pass must be the only legal action), and otherwise skip the record turn.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
import reference
from helpers import DATA_DIR, ORACLE_VARIANTS

import blokus_jax as bj

ORACLE_FILES = sorted(p.name for p in DATA_DIR.glob("*.json.gz"))


def _oracle_id(file_name: str) -> str:
    return file_name.replace("_bonus_dev.json.gz", "").replace("_dev.json.gz", "")


@pytest.fixture(scope="module")
def jitted_envs() -> dict:
    """Per registered variant: the env and its jitted step, compiled once for the module."""
    envs = {}
    for name in set(ORACLE_VARIANTS.values()):
        env = bj.make(name)
        envs[name] = (env, jax.jit(env.step))
    return envs


def test_all_reference_files_present():
    assert len(ORACLE_FILES) == 10
    assert {_oracle_id(f) for f in ORACLE_FILES} == set(ORACLE_VARIANTS)


def _expected_board(rows: list[str]) -> np.ndarray:
    return np.asarray([[0 if ch == "." else int(ch) + 1 for ch in row] for row in rows], np.int8)


@pytest.mark.parametrize("file_name", ORACLE_FILES)
def test_replay_matches_pentobi(oracle, placements_of, jitted_envs, file_name):
    data = oracle(file_name)
    env, step = jitted_envs[ORACLE_VARIANTS[_oracle_id(file_name)]]
    assert data["games"], file_name
    for game in data["games"]:
        where = f"{file_name} game {game['index']}"
        state = env.init()
        for turn in game["turns"]:
            at = f"{where} ply {turn['ply']}"
            color = int(state.current_color)
            mask = np.asarray(state.legal_action_mask)
            if turn["passed"]:
                if color != turn["color"]:
                    continue  # this colour passed earlier and is skipped by our env
                assert np.flatnonzero(mask).tolist() == [env.pass_action], at
                state = step(state, env.pass_action)
                continue
            assert color == turn["color"], at
            assert int(state.current_player) == turn["player"], at
            assert not bool(state.terminated), at
            expected = {frozenset(map(tuple, move)) for move in turn["legal"]}
            assert len(expected) == turn["legal_count"], at
            assert placements_of(env, mask) == expected, at
            assert not mask[env.pass_action], at
            action = env.action_from_cells(turn["played"])
            assert mask[action], at
            state = step(state, action)
        for _ in range(env.num_colors):
            if bool(state.terminated):
                break
            assert np.flatnonzero(np.asarray(state.legal_action_mask)).tolist() == [env.pass_action], where
            state = step(state, env.pass_action)
        assert bool(state.terminated) and not bool(state.truncated), where
        final = game["final"]
        squares = env.variant.squares_per_color
        np.testing.assert_array_equal(np.asarray(state.scores), np.asarray(final["points"]) - squares, where)
        if "player_points" in final:
            owned = np.asarray([len(colors) for colors in env.variant.players_to_colors])
            np.testing.assert_array_equal(
                np.asarray(env.player_scores(state)), np.asarray(final["player_points"]) - squares * owned, where
            )
        np.testing.assert_array_equal(np.asarray(state.board), _expected_board(final["board"]), where)


@pytest.mark.parametrize("file_name", ["duo_dev.json.gz", "junior_bonus_dev.json.gz"])
def test_reference_generator_matches_pentobi(oracle, file_name):
    """The slow reference generator used by the property tests agrees with Pentobi on whole games."""
    data = oracle(file_name)
    header = data["header"]
    shapes = [entry["cells"] for entry in header["pieces"]]
    game = data["games"][0]
    rows, cols = header["board_size"]
    board = np.zeros((rows, cols), np.int8)
    remaining = {c: [entry["instances"] for entry in header["pieces"]] for c in range(header["num_colors"])}
    names = [entry["name"] for entry in header["pieces"]]
    for turn in game["turns"]:
        color = turn["color"]
        first = all(board[r, c] != color + 1 for r in range(rows) for c in range(cols))
        got = reference.legal_placements(board, color, remaining[color], first, header["start_squares"][color], shapes)
        assert got == {frozenset(map(tuple, move)) for move in turn["legal"]}, (file_name, turn["ply"])
        if turn["played"] is not None:
            for r, c in turn["played"]:
                board[r, c] = color + 1
            remaining[color][names.index(turn["piece"])] -= 1
