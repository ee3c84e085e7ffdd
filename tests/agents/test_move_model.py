"""The move model: its features against a plain NumPy reference on reachable positions, the fast scoring path
against features times weights, `move_prior` for search specs, the model file's checks, the fit on synthetic data,
and recall."""

from __future__ import annotations

import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blokus_jax
from blokus_agents import AgentSpecError, move_prior, resolve_agent
from blokus_agents.search import mcts
from blokus_agents.search.move_features import (
    DEFAULT_PHASES,
    LAST_MOVE_PLANES,
    PLANES,
    cell_planes,
    feature_names,
    move_features,
    observation_phase,
    observation_planes,
    phase_of,
)
from blokus_agents.search.move_fit import fit, recall_at, softmax_loss
from blokus_agents.search.move_model import MoveModel, MoveModelError, shipped_model
from blokus_jax.errors import ConfigError

EDGE = ((1, 0), (-1, 0), (0, 1), (0, -1))
DIAG = ((1, 1), (1, -1), (-1, 1), (-1, -1))


@pytest.fixture(scope="module")
def simple():
    env = blokus_jax.make("simple")
    return env, jax.jit(env.step), jax.jit(env.sample_action), jax.jit(lambda s: move_features(env.tables, s))


def _position(env, step, sample, seed: int, moves: int):
    state = env.init(jax.random.key(seed))
    for t in range(moves):
        if bool(state.terminated):
            break
        state = step(state, sample(jax.random.key(seed * 1000 + t), state))
    return state


def _reference_planes(env, state) -> dict[str, np.ndarray]:
    """The planes of `PLANES`, written cell by cell with plain Python (a second, independent reading of their docs)."""
    variant = env.variant
    rows, cols = variant.board_shape
    board = np.asarray(state.board)
    mover = int(state.current_color)
    owner = [variant.color_owner(c) for c in range(variant.num_colors)]
    opponents = [c for c in range(variant.num_colors) if c != mover and (owner[c] != owner[mover] or owner[c] < 0)]
    placed = np.asarray(state.pieces_placed)
    passed = np.asarray(state.passed)

    def inside(r, c):
        return 0 <= r < rows and 0 <= c < cols

    def attach(color):
        out = np.zeros((rows, cols), bool)
        blocked = np.zeros((rows, cols), bool)
        for r in range(rows):
            for c in range(cols):
                if board[r, c]:
                    continue
                edge = any(inside(r + a, c + b) and board[r + a, c + b] == color + 1 for a, b in EDGE)
                blocked[r, c] = edge
                if placed[color] == 0:
                    out[r, c] = (r, c) in set(map(tuple, variant.start_cells[color])) and not edge
                else:
                    diag = any(inside(r + a, c + b) and board[r + a, c + b] == color + 1 for a, b in DIAG)
                    out[r, c] = diag and not edge
        return out, blocked

    own_attach, own_blocked = attach(mover)
    opp_attach = np.zeros((rows, cols), bool)
    opp_blocked = np.zeros((rows, cols), bool)
    for c in opponents:
        a, b = attach(c)
        if not passed[c]:
            opp_attach |= a
        opp_blocked |= b
    empty = board == 0
    near_opp = np.zeros((rows, cols), bool)
    for r in range(rows):
        for c in range(cols):
            near_opp[r, c] = (
                empty[r, c]
                and not opp_attach[r, c]
                and any(inside(r + a, c + b) and opp_attach[r + a, c + b] for a, b in EDGE)
            )
    last_cells = np.zeros((rows, cols), bool)
    last = int(state.last_action)
    if 0 <= last < env.pass_action:
        cells = env.tables.action_cells(last)
        if board[cells[0][0], cells[0][1]] - 1 in opponents:
            last_cells[cells[:, 0], cells[:, 1]] = True
    last_attach = np.zeros((rows, cols), bool)
    near_last = np.zeros((rows, cols), bool)
    open_cells = np.zeros((rows, cols), bool)
    for r in range(rows):
        for c in range(cols):
            last_attach[r, c] = opp_attach[r, c] and any(
                inside(r + a, c + b) and last_cells[r + a, c + b] for a, b in DIAG
            )
            near_last[r, c] = empty[r, c] and any(
                inside(r + a, c + b) and last_cells[r + a, c + b] for a, b in EDGE + DIAG
            )
            free = sum(inside(r + a, c + b) and empty[r + a, c + b] for a, b in EDGE)
            open_cells[r, c] = empty[r, c] and free >= 3
    centre = np.zeros((rows, cols))
    for r in range(rows):
        for c in range(cols):
            y, x = (r - (rows - 1) / 2) / ((rows - 1) / 2), (c - (cols - 1) / 2) / ((cols - 1) / 2)
            centre[r, c] = 1 - math.hypot(y, x) / math.sqrt(2)
    opponent = np.isin(board, [c + 1 for c in opponents])
    return {
        "occupied": ~empty,
        "own": board == mover + 1,
        "opponent": opponent,
        "off_board": np.zeros((rows, cols), bool),
        "own_attach": own_attach,
        "own_blocked": own_blocked,
        "opp_attach": opp_attach,
        "near_opp_attach": near_opp,
        "opp_blocked": opp_blocked,
        "last_attach": last_attach,
        "near_last": near_last,
        "open": open_cells,
        "centre": centre,
    }


def _reference_features(env, state, action: int) -> np.ndarray:
    planes = _reference_planes(env, state)
    rows, cols = env.variant.board_shape
    cells = {tuple(x) for x in env.tables.action_cells(action).tolist()}
    edges = {(r + a, c + b) for r, c in cells for a, b in EDGE} - cells
    corners = {(r + a, c + b) for r, c in cells for a, b in DIAG} - edges - cells
    out = []
    for region in (cells, edges, corners):
        for name in PLANES:
            total = 0.0
            for r, c in region:
                if 0 <= r < rows and 0 <= c < cols:
                    total += float(planes[name][r, c])
                elif name == "off_board":
                    total += 1.0
            out.append(total)
    piece = env.tables.decode(action)[0]
    out += [1.0 if p == piece else 0.0 for p in range(env.variant.num_pieces)]
    return np.asarray(out)


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), moves=st.integers(0, 12), pick=st.integers(0, 10**6))
def test_features_match_a_plain_reference(simple, seed, moves, pick):
    env, step, sample, features = simple
    state = _position(env, step, sample, seed, moves)
    legal = np.flatnonzero(np.asarray(state.legal_action_mask)[:-1])
    if len(legal) == 0:
        return
    got = np.asarray(features(state))
    assert got.shape == (env.pass_action, len(feature_names(env.tables, False)))
    for action in (legal[pick % len(legal)], legal[(pick // 7) % len(legal)]):
        np.testing.assert_allclose(got[action], _reference_features(env, state, int(action)), rtol=1e-5, atol=1e-5)


def test_fast_scores_equal_features_times_weights(simple):
    env, step, sample, features = simple
    rng = np.random.default_rng(0)
    names = feature_names(env.tables, True)
    weights = tuple(tuple(rng.normal(size=len(names)).tolist()) for _ in DEFAULT_PHASES)
    model = MoveModel("simple", names, DEFAULT_PHASES, weights, network="baseline:x")
    fast_scores = jax.jit(lambda s, lg: model.scores(env.tables, s, lg))
    features_of = jax.jit(lambda s, lg: move_features(env.tables, s, lg))
    for moves in (0, 3, 9):
        state = _position(env, step, sample, 5, moves)
        logits = jnp.asarray(rng.normal(size=env.num_actions), jnp.float32)
        fast = np.asarray(fast_scores(state, logits))
        slow = np.asarray(features_of(state, logits)) @ np.asarray(weights)[int(phase_of(model.phases, state))]
        legal = np.asarray(state.legal_action_mask)
        np.testing.assert_allclose(fast[:-1][legal[:-1]], slow[legal[:-1]], rtol=1e-4, atol=1e-4)
        assert np.all(np.isneginf(fast[~legal]))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6), moves=st.integers(0, 14))
def test_observation_planes_are_the_cell_planes_but_the_newest_pieces(simple, seed, moves):
    env, step, sample, _ = simple
    state = _position(env, step, sample, seed, moves)
    whole = np.asarray(jax.jit(lambda s: cell_planes(env.tables, s))(state))
    seen = np.asarray(jax.jit(lambda o: observation_planes(env.tables, o))(env.observe(state)))
    for i, name in enumerate(PLANES):
        if name in LAST_MOVE_PLANES:
            assert not seen[..., i].any(), name
        elif not np.asarray(state.passed).any():  # a passed opponent keeps its attach points in the observation
            np.testing.assert_array_equal(seen[..., i], whole[..., i], err_msg=name)
    assert int(observation_phase(env.tables, DEFAULT_PHASES, env.observe(state))) == int(
        phase_of(DEFAULT_PHASES, state)
    )


def test_observation_planes_see_both_own_colours_of_classic_for_two():
    env = blokus_jax.make("classic_2p")
    state, step = env.init(), jax.jit(env.step)
    for t in range(6):  # every colour places, so the mover has a second colour on the board
        state = step(state, env.sample_action(jax.random.key(t), state))
    whole = np.asarray(jax.jit(lambda s: cell_planes(env.tables, s))(state))
    seen = np.asarray(jax.jit(lambda o: observation_planes(env.tables, o))(env.observe(state)))
    keep = [i for i, name in enumerate(PLANES) if name not in LAST_MOVE_PLANES]
    np.testing.assert_array_equal(seen[..., keep], whole[..., keep])


def test_observation_model_scores_its_features_times_weights(simple):
    env, step, sample, _ = simple
    rng = np.random.default_rng(3)
    names = feature_names(env.tables, False)
    weights = tuple(tuple(rng.normal(size=len(names)).round(3).tolist()) for _ in DEFAULT_PHASES)  # as files keep them
    model = MoveModel("simple", names, DEFAULT_PHASES, weights, inputs="observation")
    state = _position(env, step, sample, 11, 7)
    fast = np.asarray(jax.jit(lambda s: model.scores(env.tables, s))(state))
    features = jax.jit(lambda s: move_features(env.tables, s, None, "observation"))(state)
    slow = np.asarray(features) @ np.asarray(weights)[int(phase_of(model.phases, state))]
    legal = np.asarray(state.legal_action_mask)
    np.testing.assert_allclose(fast[:-1][legal[:-1]], slow[legal[:-1]], rtol=1e-4, atol=1e-4)
    assert MoveModel.from_json(model.to_json()) == model
    with pytest.raises(MoveModelError, match="no network logit"):
        MoveModel("simple", names, DEFAULT_PHASES, weights, network="baseline:x", inputs="observation")
    with pytest.raises(MoveModelError, match="inputs"):
        MoveModel("simple", names, DEFAULT_PHASES, weights, inputs="board")


def test_phase_counts_the_movers_pieces():
    env = blokus_jax.make("simple")
    state = env.init()
    assert int(phase_of((0, 2, 5), state)) == 0
    state = state.replace(pieces_placed=state.pieces_placed.at[0].set(5))
    assert int(phase_of((0, 2, 5), state)) == 2


def _model_json(**changes) -> str:
    env = blokus_jax.make("simple")
    names = feature_names(env.tables, False)
    data = {
        "format": "blokus-jax move model",
        "version": 1,
        "variant": "simple",
        "network": "",
        "phases": [0, 2],
        "features": list(names),
        "weights": [[0.0] * len(names), [0.5] * len(names)],
        "provenance": {"command": "test"},
    }
    data.update(changes)
    return json.dumps(data)


def test_model_file_round_trips():
    model = MoveModel.from_json(_model_json())
    again = MoveModel.from_json(model.to_json())
    assert again == model
    model.check(blokus_jax.make("simple").tables)


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        json.dumps([1, 2]),
        _model_json(format="something else"),
        _model_json(version=2),
        _model_json(weights=[[0.0]]),
        _model_json(weights=[["x"] * 3, [0.0]]),
        _model_json(phases=[1, 2]),
        _model_json(phases=[0, 0]),
        _model_json(variant=3),
        _model_json(provenance="me"),
        _model_json(inputs="board"),
        _model_json(inputs="observation", network="baseline:duo"),
        _model_json(weights=[[float("nan")] * 60, [0.0] * 60]).replace("NaN", "NaN"),
    ],
)
def test_bad_model_files_are_refused(text):
    with pytest.raises(MoveModelError):
        MoveModel.from_json(text, "bad.json")


def test_model_for_other_features_is_refused(tmp_path):
    model = MoveModel.from_json(_model_json())
    with pytest.raises(MoveModelError, match="refit"):
        model.check(blokus_jax.make("duo").tables)
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (2 << 20))
    with pytest.raises(MoveModelError, match="larger"):
        MoveModel.load(big)
    with pytest.raises(MoveModelError, match="cannot read"):
        MoveModel.load(tmp_path / "missing.json")


def test_shipped_duo_model_fits_duo():
    model = shipped_model("duo")
    model.check(blokus_jax.make("duo").tables)
    assert model.network == "baseline:duo"
    assert model.provenance["held_out_positions"] > 0


@pytest.mark.parametrize("variant", ["classic_2p", "classic"])
def test_shipped_classic_models_are_network_free_and_guide_mcts(variant):
    """The models shipped for Classic (two players, and four) take no network logit, so `mcts:prior=model` uses
    them; each one's provenance names the held-out games it was measured on and their top-32 recall."""
    env = blokus_jax.make(variant)
    model = shipped_model(variant)
    model.check(env.tables)
    assert model.network == "" and model.inputs == "state"
    assert model.provenance["held_out_files"] == ["l6_chunk01.blksgf"]
    assert model.provenance["held_out_recall"]["all"]["32"] > 0.85
    state = env.init()
    scores = np.asarray(jax.jit(move_prior("mcts:prior=model", env))(state))
    legal = np.asarray(state.legal_action_mask)
    assert np.all(np.isneginf(scores[~legal])) and np.all(np.isfinite(scores[legal]))


def test_shipped_duo_observation_model_fits_duo():
    model = shipped_model("duo", "observation")
    model.check(blokus_jax.make("duo").tables)
    assert model.inputs == "observation" and model.network == ""
    last = [i for i, name in enumerate(model.features) if name.split(":")[-1] in LAST_MOVE_PLANES]
    assert last and all(row[i] == 0.0 for row in model.weights for i in last)  # it never saw those planes
    assert model.provenance["held_out_recall"]["all"]["32"] > 0.8


def test_fit_recovers_known_weights():
    rng = np.random.default_rng(1)
    n, slots, width = 4000, 12, 3
    true = np.array([[1.5, -1.0, 0.5], [0.0, 2.0, -0.5]], np.float32)
    features = rng.normal(size=(n, slots, width)).astype(np.float32)
    legal = np.ones((n, slots), bool)
    legal[:, -2:] = rng.random((n, 2)) < 0.5
    phase = rng.integers(0, 2, n).astype(np.int32)
    logits = np.einsum("nlf,nf->nl", features, true[phase])
    logits = np.where(legal, logits, -np.inf)
    probs = np.exp(logits - logits.max(1, keepdims=True))
    probs /= probs.sum(1, keepdims=True)
    chosen = np.array([rng.choice(slots, p=p) for p in probs], np.int32)
    weights = fit(features, legal, chosen, phase, 2, l2=0.0, steps=600, learning_rate=0.05, batch=1000)
    np.testing.assert_allclose(weights, true, atol=0.2)
    assert float(softmax_loss(jnp.asarray(weights), features, legal, chosen, phase)) < float(
        softmax_loss(jnp.zeros_like(jnp.asarray(true)), features, legal, chosen, phase)
    )


def test_recall_counts_ranks_and_ties():
    scores = np.array([[3.0, 2.0, 1.0, -np.inf], [1.0, 1.0, 0.0, 5.0], [0.0, 1.0, 2.0, 3.0]])
    chosen = np.array([0, 1, 0])
    # ranks: 1, 3 (a tie counts against it), 4
    assert recall_at(scores, chosen, (1, 2, 3, 4)) == {1: 1 / 3, 2: 1 / 3, 3: 2 / 3, 4: 1.0}


@pytest.fixture(scope="module")
def duo_positions():
    env = blokus_jax.make("duo")
    step, sample = jax.jit(env.step), jax.jit(env.sample_action)
    states = [_position(env, step, sample, seed, moves) for seed, moves in ((0, 0), (1, 6), (2, 14))]
    return env, jax.tree.map(lambda *x: jnp.stack(x), *states)


@pytest.mark.parametrize("spec", ["strong", "baseline:duo", "baseline:duo,prior=model", "mcts:centre=1"])
def test_move_prior_is_minus_inf_exactly_on_illegal_actions(duo_positions, spec):
    env, states = duo_positions
    scores = np.asarray(jax.jit(jax.vmap(move_prior(spec, env)))(states))
    legal = np.asarray(states.legal_action_mask)
    assert scores.shape == legal.shape
    assert np.all(np.isneginf(scores[~legal]))
    assert np.all(np.isfinite(scores[legal]))


def test_move_prior_of_a_network_search_is_its_networks_logits_and_strong_ranks_by_the_model(duo_positions):
    from blokus_agents.players.baselines import load_baseline

    env, states = duo_positions
    network, params, _ = load_baseline("duo", env)
    state = jax.tree.map(lambda x: x[1], states)
    logits = np.asarray(jax.jit(network.apply)(params, env.observe(state))[0])
    legal = np.asarray(state.legal_action_mask)
    scores = np.asarray(jax.jit(move_prior("baseline:duo", env))(state))
    np.testing.assert_allclose(scores[legal], logits[legal], rtol=1e-5, atol=1e-5)
    strong = np.asarray(jax.jit(move_prior("strong", env))(state))  # Duo's strong: prior=model
    model = np.asarray(jax.jit(move_prior("baseline:duo,prior=model", env))(state))
    np.testing.assert_allclose(strong[legal], model[legal], rtol=1e-5, atol=1e-5)
    assert not np.allclose(strong[legal], logits[legal])


@pytest.mark.parametrize("spec", ["random", "greedy", "", "baseline:duo,prior=nope"])
def test_move_prior_refuses_what_is_not_a_search(spec):
    with pytest.raises(AgentSpecError):
        move_prior(spec, blokus_jax.make("duo"))


def test_search_with_the_model_prior_plays_legal_moves(duo_positions):
    env, states = duo_positions
    policy = resolve_agent("baseline:duo,sims=4,k=8,considered=4,prior=model", env)
    actions = np.asarray(jax.jit(jax.vmap(policy))(jax.random.split(jax.random.key(0), 3), states))
    legal = np.asarray(states.legal_action_mask)
    assert all(legal[i, a] for i, a in enumerate(actions))


@pytest.fixture
def simple_network_free_model(monkeypatch):
    """A move model for ``simple`` that takes no network logit (random weights), shipped for the test."""
    names = feature_names(blokus_jax.make("simple").tables, False)
    weights = np.random.default_rng(3).normal(size=(2, len(names))).round(3).tolist()
    model = MoveModel.from_json(_model_json(weights=weights))
    monkeypatch.setattr(mcts, "shipped_model", lambda variant, inputs="state": model)
    return model


def test_mcts_with_the_model_prior_ranks_by_the_model_and_plays_legal_moves(simple, simple_network_free_model):
    env, step, sample, _ = simple
    state = _position(env, step, sample, seed=4, moves=3)
    legal = np.asarray(state.legal_action_mask)
    scores = np.asarray(jax.jit(move_prior("mcts:prior=model", env))(state))
    model = np.asarray(simple_network_free_model.scores(env.tables, state))
    placements = legal[:-1]
    assert placements.any()
    np.testing.assert_allclose(scores[:-1][placements], model[: env.pass_action][placements], rtol=1e-5, atol=1e-5)
    assert not np.allclose(scores[legal], np.asarray(jax.jit(move_prior("mcts", env))(state))[legal])
    policy = resolve_agent("mcts:prior=model,sims=4,k=4,considered=4,playouts=1", env)
    assert bool(legal[int(jax.jit(policy)(jax.random.key(0), state))])


def test_mcts_on_duo_takes_the_network_free_observation_model(monkeypatch):
    """Duo's search model reads `baseline:duo`'s logits, so the network-free search (`mcts:prior=model`, a
    teacher's) takes the model shipped over the mover's observation; without one it is refused."""
    env = blokus_jax.make("duo")
    assert mcts.network_free_model(env).inputs == "observation"
    state = env.init()
    scores = np.asarray(jax.jit(move_prior("mcts:prior=model", env))(state))
    expected = np.asarray(jax.jit(lambda s: shipped_model("duo", "observation").scores(env.tables, s))(state))
    legal = np.asarray(state.legal_action_mask)
    np.testing.assert_allclose(scores[legal], expected[legal], rtol=1e-5, atol=1e-5)
    state_model = shipped_model("duo")

    def without_observation_model(variant, inputs="state"):
        if inputs != "state":
            raise ConfigError("none shipped")
        return state_model

    monkeypatch.setattr(mcts, "shipped_model", without_observation_model)
    with pytest.raises(AgentSpecError, match=r"use 'baseline:duo,prior=model'"):
        resolve_agent("mcts:prior=model", env)


def test_mcts_refuses_a_model_prior_where_none_is_shipped():
    with pytest.raises(AgentSpecError, match="no move model .* shipped for variant 'simple'"):
        resolve_agent("mcts:prior=model", blokus_jax.make("simple"))
