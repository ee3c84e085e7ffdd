"""``rules.illegal_reason`` / ``explain_illegal`` against the rules on random positions: an action is explained as
illegal exactly when ``Env.is_legal`` rejects it, and the reason given holds on the board (checked here with a
plain NumPy restatement of each rule)."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import blokus_jax
from blokus_jax import rules
from blokus_jax.io import records
from blokus_jax.rollout import rollout


def _positions(name: str, games: int, seed: int):
    """Every position (start, after each step, and the finished one) of a few random games."""
    env = blokus_jax.make(name)
    _, actions = rollout(env, jax.random.key(seed), batch=games)
    step = jax.jit(env.step)
    states = []
    for row in np.asarray(actions):
        state = env.init()
        states.append(state)
        for a in row[row >= 0]:
            state = step(state, int(a))
            states.append(state)
    return env, states


@pytest.fixture(scope="module")
def positions():
    return {name: _positions(name, 2, k) for k, name in enumerate(["simple", "duo"])}


def _near_action(env, state, pick: int) -> int:
    """A placement that covers, or lies next to, an occupied square (so that occupied / edge / corner / legal
    reasons come up often, not only "no corner contact")."""
    rows, cols = env.board_shape
    taken = np.argwhere(np.asarray(state.board) != 0)
    if len(taken) == 0:
        return pick % env.num_actions
    r, c = taken[pick % len(taken)]
    dr, dc = (pick // 7) % 3 - 1, (pick // 21) % 3 - 1
    o = (pick // 63) % env.num_orientations
    cells = env.tables.orientation_cells[o]
    j = (pick // 7) % len(cells)
    ar, ac = r + dr - cells[j][0], c + dc - cells[j][1]
    if not (0 <= ar < rows and 0 <= ac < cols):
        return env.pass_action
    return int((o * rows + ar) * cols + ac)


def _check_reason(env, state, action, reason, cells) -> None:
    """The reason holds on the board, restated in NumPy."""
    board = np.asarray(state.board)
    rows, cols = board.shape
    color = int(state.current_color)
    if reason == "game_over":
        assert bool(state.terminated) or bool(state.truncated)
        return
    if reason == "out_of_range":
        assert not 0 <= action < env.num_actions
        return
    if reason == "cannot_pass":
        assert action == env.pass_action and np.asarray(state.legal_bits).any()
        return
    o, rc = divmod(action, rows * cols)
    placed = env.tables.orientation_cells[o] + np.asarray(divmod(rc, cols))
    if reason == "off_board":
        assert (placed[:, 0] >= rows).any() or (placed[:, 1] >= cols).any()
        return
    assert (placed < [rows, cols]).all()
    if reason == "no_piece":
        assert np.asarray(state.remaining)[color, env.tables.orientation_piece[o]] == 0
        return
    occupied = {tuple(rc) for rc in placed if board[rc[0], rc[1]] != 0}
    if reason == "occupied":
        assert occupied and {tuple(rc) for rc in cells} == occupied
        return
    assert not occupied
    own = np.pad(board == color + 1, 1)
    edge = {
        tuple(rc)
        for rc in placed
        if own[rc[0], rc[1] + 1] | own[rc[0] + 2, rc[1] + 1] | own[rc[0] + 1, rc[1]] | own[rc[0] + 1, rc[1] + 2]
    }
    if reason == "edge":
        assert edge and {tuple(rc) for rc in cells} == edge
        return
    assert not edge
    first = int(np.asarray(state.pieces_placed)[color]) == 0
    if reason == "start":
        assert first and not {tuple(rc) for rc in placed} & set(env.variant.start_cells[color])
        return
    assert reason == "corner" and not first
    diagonal = {
        tuple(rc)
        for rc in placed
        if own[rc[0], rc[1]] | own[rc[0], rc[1] + 2] | own[rc[0] + 2, rc[1]] | own[rc[0] + 2, rc[1] + 2]
    }
    assert not diagonal


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["simple", "duo"]),
    which=st.integers(0, 10**6),
    how=st.sampled_from(["any", "near", "legal", "pass", "edge"]),
    pick=st.integers(0, 10**6),
)
def test_explanations_agree_with_the_rules(positions, name, which, how, pick):
    env, states = positions[name]
    state = states[which % len(states)]
    if how == "any":
        action = pick % (env.num_actions + 4) - 2
    elif how == "near":
        action = _near_action(env, state, pick)
    elif how == "legal":
        legal = np.flatnonzero(np.asarray(state.legal_action_mask))
        action = int(legal[pick % len(legal)]) if len(legal) else env.pass_action
    elif how == "pass":
        action = env.pass_action
    else:
        action = pick % (env.num_actions + 40) - 20
    legal = bool(env.is_legal(state, action)) if 0 <= action < env.num_actions else False
    found = rules.illegal_reason(env, state, action)
    assert (found is None) == legal, (action, found)
    if found is None:
        assert "is legal" in rules.explain_illegal(env.tables, state, action)
        return
    reason, cells = found
    assert reason in rules.ILLEGAL_REASONS
    _check_reason(env, state, action, reason, cells)
    text = records.explain_illegal(env.variant, state, action)
    assert text and "is legal" not in text


@pytest.mark.slow
def test_every_reason_is_reached(positions):
    """The strategies above do reach every reason (so the property test is not vacuous)."""
    env, states = positions["duo"]
    seen = set()
    for k, state in enumerate(states[:3] + states[10:13] + states[-1:]):
        for pick in range(0, 4000, 131):
            for action in (_near_action(env, state, pick + k), pick % env.num_actions, env.pass_action):
                found = rules.illegal_reason(env, state, action)
                seen.add(None if found is None else found[0])
    assert {None, "game_over", "cannot_pass", "off_board", "occupied", "edge", "start", "corner"} <= seen


def test_default_names_and_pentobi_names():
    env = blokus_jax.make("duo")
    state = env.init()
    action = env.action_from_cells([(0, 0)])
    assert rules.explain_illegal(env, state, action) == (
        "colour 0's first piece '1' at (0, 0) does not cover its start square (4, 4)"
    )
    assert records.explain_illegal(env.variant, state, action) == (
        "Purple's first piece '1' at a14 does not cover its start square e10"
    )
