"""Search playouts and robustness: the covering test behind the ``block`` playout (against a brute force), the playout
move policies on random positions, a search that plays legal moves whatever its priors and values (NaN, inf, huge,
an underflowing temperature), the ``seconds=`` time budget at batch 1 on the clock (also of a network-guided search),
and the ``strong`` agent."""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import blokus_jax
from blokus_agents.core.policies import one_game, resolve_agent
from blokus_agents.search import gumbel, playouts
from blokus_agents.search import mcts as search
from blokus_agents.search.gumbel import make_search, network_evaluator, rollout_evaluator
from blokus_agents.search.mcts import calibrate_sims
from blokus_agents.search.settings import SearchSettings
from blokus_jax import rules


@pytest.fixture(scope="module")
def duo():
    return blokus_jax.make("duo")


@pytest.fixture(scope="module")
def duo_positions(duo):
    """16 Duo positions after 0-30 random moves (some with few placements left)."""
    step, sample = jax.jit(jax.vmap(duo.step)), jax.jit(jax.vmap(duo.sample_action))
    states = jax.jit(jax.vmap(duo.init))(jax.random.split(jax.random.key(0), 16))
    depth = np.arange(16) * 2
    for t in range(int(depth.max())):
        moved = step(states, sample(jax.random.split(jax.random.key(100 + t), 16), states))
        go = jnp.asarray(t < depth)
        states = jax.tree.map(
            lambda new, old: jnp.where(go.reshape((-1,) + (1,) * (new.ndim - 1)), new, old), moved, states
        )
    return states


def _covering_brute_force(tables, cells: np.ndarray) -> np.ndarray:
    """bool[O, H, W]: orientation o anchored at (r, c) covers a set cell of ``cells`` (bool[H, W]), cells off the
    board ignored."""
    rows, cols = cells.shape
    out = np.zeros((tables.num_orientations, rows, cols), bool)
    for o, shape in enumerate(tables.orientation_cells):
        for r in range(rows):
            for c in range(cols):
                rr, cc = shape[:, 0] + r, shape[:, 1] + c
                inside = (rr < rows) & (cc < cols)
                out[o, r, c] = bool(cells[rr[inside], cc[inside]].any())
    return out


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), density=st.floats(0.0, 0.3))
def test_covering_bits_equals_brute_force(seed, density):
    tables = blokus_jax.make("simple").tables
    rows, cols = tables.variant.board_shape
    cells = np.random.default_rng(seed).random((rows, cols)) < density
    got = rules.unpack_rows(rules.covering_bits(tables, rules.pack_rows(jnp.asarray(cells))), cols)
    np.testing.assert_array_equal(np.asarray(got), _covering_brute_force(tables, cells))


def _opponent_corner_cells(env, state) -> np.ndarray:
    """bool[H, W] corner cells of the colours of the other player (Duo: the other colour), from the env's masks."""
    rows, cols = env.board_shape
    other = 1 - int(state.current_color)
    own = rules.pack_rows(state.board == other + 1)
    occupied = rules.pack_rows(state.board != 0)
    first = rules.is_first_move(state.pieces_placed, other)
    _, corners = rules.forbidden_and_corners(env.tables, own, occupied, first, jnp.int32(other))
    return np.asarray(rules.unpack_rows(corners, cols))


def test_playout_moves_follow_their_policy(duo, duo_positions):
    """``greedy`` plays a legal placement of the largest placeable size; ``block`` does too, and covers an opponent
    corner cell whenever a placement of that size can; ``random`` plays any legal placement."""
    tables = duo.tables
    sizes = tables.orientation_size
    move = jax.jit(playouts.playout_move, static_argnums=(0, 3))
    for i in range(16):
        state = jax.tree.map(lambda x, i=i: x[i], duo_positions)
        mask = np.asarray(state.legal_action_mask)
        if state.terminated or mask[-1]:
            continue
        placements = np.flatnonzero(mask[:-1])
        orientation = placements // (duo.board_shape[0] * duo.board_shape[1])
        best = sizes[orientation].max()
        opp = _opponent_corner_cells(duo, state)
        covers = np.asarray([opp[tuple(duo.action_cells(a).T)].any() for a in placements])
        can_block = (covers & (sizes[orientation] == best)).any()
        covering = rules.covering_bits(tables, rules.pack_rows(jnp.asarray(opp))) & state.legal_bits
        for j in range(6):
            key = jax.random.key(1000 * i + j)
            greedy = int(move(tables, key, state.legal_bits, True, None))
            block = int(move(tables, key, state.legal_bits, True, covering))
            anything = int(move(tables, key, state.legal_bits, False, None))
            for action in (greedy, block, anything):
                assert mask[action], (i, j, action)
            assert sizes[tables.split_action(greedy)[0]] == best
            assert sizes[tables.split_action(block)[0]] == best
            assert opp[tuple(duo.action_cells(block).T)].any() == can_block


def test_block_playouts_end_with_consistent_scores(duo, duo_positions):
    """Block playouts place only pieces the colours had (the counts never go negative or up) and end the game."""

    def one(key, s):
        remaining, _ = playouts.playout(duo.tables, key, s, playouts.PlayoutPolicy(greedy=True, block=True))
        return remaining

    remaining = np.asarray(jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(3), 16), duo_positions))
    before = np.asarray(duo_positions.remaining)
    assert (remaining >= 0).all() and (remaining <= before).all()
    assert (remaining.sum((1, 2)) < before.sum((1, 2))).any()


# ------------------------------------------------------------------------------------- legal whatever the numbers
@pytest.fixture(scope="module")
def diverged_search(duo):
    """A search whose "network" answers its parameter for every logit and for the value: one compilation serves
    every bad number, which arrives at run time as a diverged network's outputs would."""

    def apply_fn(params, observation):
        return jnp.full((duo.num_actions,), params, jnp.float32), params

    return jax.jit(make_search(duo, network_evaluator(duo, apply_fn), sims=4, k=4, considered=4))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf, 1e30])
def test_search_plays_legal_moves_whatever_the_network_says(duo, duo_positions, diverged_search, bad):
    """A diverged network (NaN, inf or huge logits and values) still gets a legal move from the search, never the
    pass while placements are legal: legality comes from the mask alone."""
    out = diverged_search(jnp.float32(bad), jax.random.key(0), duo_positions)
    live = ~np.asarray(duo_positions.terminated)
    legal = np.asarray(jax.jit(jax.vmap(duo.is_legal))(duo_positions, out.action))
    assert legal[live].all()
    can_place = np.asarray(duo_positions.legal_action_mask)[:, :-1].any(1)
    assert (np.asarray(out.action)[can_place] != duo.pass_action).all()


@pytest.mark.slow
def test_underflowing_temperature_still_plays_legal_moves(duo, duo_positions):
    evaluator = rollout_evaluator(duo, playouts=1, temperature=1e-300)
    run = jax.jit(make_search(duo, evaluator, sims=4, k=4, considered=4))
    out = run(None, jax.random.key(0), duo_positions)
    can_place = np.asarray(duo_positions.legal_action_mask)[:, :-1].any(1)
    actions = np.asarray(out.action)
    assert (actions[can_place] != duo.pass_action).all()
    assert np.asarray(jax.jit(jax.vmap(duo.is_legal))(duo_positions, out.action))[
        ~np.asarray(duo_positions.terminated)
    ].all()


@pytest.mark.slow
def test_batch_of_one_path_equals_vmap(duo, duo_positions):
    """The batch-1 path of the search (``fn`` called unbatched, no vmap) computes what vmap computes: the rollout
    evaluator's priors and values, and the whole search's move, for the same keys."""
    evaluator = rollout_evaluator(duo, playouts=2, margin=0.5)
    one = jax.tree.map(lambda x: x[5:6], duo_positions)
    keys = jax.random.split(jax.random.key(4), 1)
    args = (None, keys, one, one.current_player)
    direct = jax.jit(gumbel._batched(evaluator, (None, 0, 0, 0)))(*args)
    mapped = jax.jit(jax.vmap(evaluator, in_axes=(None, 0, 0, 0)))(*args)
    for got, want in zip(direct, mapped):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    run = jax.jit(make_search(duo, evaluator, sims=8, k=8, considered=8))
    a = run(None, jax.random.key(7), one)
    assert bool(duo.is_legal(jax.tree.map(lambda x: x[0], one), a.action[0]))
    np.testing.assert_allclose(float(np.asarray(a.candidate_weights).sum()), 1.0, atol=1e-5)


# ----------------------------------------------------------------------------------------------- the time budget
#: The budget of ``strong`` in the tests that play it: one calibration (and compilation) serves them all on simple.
STRONG_TEST_SECONDS = 0.2


@pytest.fixture(scope="module")
def simple():
    return blokus_jax.make("simple")


@pytest.mark.slow
def test_seconds_budget_is_kept_at_batch_one_on_the_clock(simple):
    """``strong:seconds=S`` (on ``simple``: ``mcts`` with a time budget) played one game at a time (``one_game``, as
    ``match``, GTP and ``play`` do) is the search that reads the clock while it runs: no move of a whole game of
    ``simple`` takes more than 1.2 S after compilation, however loaded the machine (the suite runs one process per
    core). An overrunning move (the process descheduled) is timed up to twice more. Batched play keeps the
    calibrated simulations: the policy's own function has no clock, and ``one_game`` of a policy without one is
    that policy."""
    budget = STRONG_TEST_SECONDS  # strong on simple is mcts with a budget; the test below reuses its calibration
    strong = resolve_agent(f"strong:seconds={budget}", simple)
    assert strong.timed is not None and one_game(strong).fn is strong.timed and one_game(strong).params is None
    greedy = resolve_agent("greedy", simple)
    assert one_game(greedy) is greedy
    policy = jax.jit(one_game(strong))
    state = simple.init(jax.random.key(0))
    step = jax.jit(simple.step)
    jax.block_until_ready(policy(jax.random.key(0), state))
    worst, moves = 0.0, 0
    while not bool(state.terminated):
        for _ in range(3):
            start = time.perf_counter()
            action = jax.block_until_ready(policy(jax.random.key(moves), state))
            spent = time.perf_counter() - start
            if spent <= 1.2 * budget:
                break
        worst = max(worst, spent)
        state = step(state, action)
        moves += 1
    assert moves > 4
    assert worst <= 1.2 * budget, f"slowest move {worst:.3f} s for a {budget} s budget"


@pytest.mark.slow
def test_calibration_grows_with_the_budget_and_rejects_bad_budgets(simple):
    evaluator = rollout_evaluator(simple, playouts=1)

    def build(n):
        act = search._single(make_search(simple, evaluator, sims=n, k=4, considered=4))
        return lambda key, state: act(None, key, state)

    small = calibrate_sims(simple, build, 0.05, ("test",))
    large = calibrate_sims(simple, build, 0.4, ("test",))
    assert 1 <= small < large
    assert calibrate_sims(simple, build, 0.4, ("test",)) == large  # cached
    assert search.calibrated_sims()[-2:] == [small, large]  # what a match's record reports, once per budget
    for bad in (0.0, -1.0, float("nan"), float("inf"), 1e9):
        with pytest.raises(blokus_jax.BlokusError, match="seconds"):
            calibrate_sims(simple, build, bad)


@pytest.mark.slow
def test_a_network_search_with_a_time_budget_calibrates_once_and_plays_legal_moves(simple, monkeypatch):
    """``seconds=`` on a network-guided search (``az:``, ``baseline:``): the simulations come from
    :func:`calibrate_sims` (run for real here, on ``simple`` with a tiny network), a second policy of the same
    architecture and options (other weights) reuses the calibration, and the calibrated searches play legal moves."""
    from blokus_agents.players.networks import make_network

    network = make_network(simple, channels=4, blocks=0, value_hidden=8)
    params = jax.jit(network.init)(jax.random.key(0), simple.observe(simple.init()))
    measured = []
    real = search._calibration_positions
    monkeypatch.setattr(search, "_calibration_positions", lambda env: measured.append(env) or real(env))
    policy = search.network_search_policy(simple, network.apply, params, SearchSettings(seconds=0.1, k=4, considered=4))
    other = jax.jit(network.init)(jax.random.key(1), simple.observe(simple.init()))
    again = search.network_search_policy(simple, network.apply, other, SearchSettings(seconds=0.1, k=4, considered=4))
    assert len(measured) == 1  # the second policy reused the first one's calibration
    assert again.params is other
    state = simple.init(jax.random.key(2))
    assert one_game(again).fn is again.timed and one_game(again).params is other  # the search on the clock
    for act in (policy, again, one_game(again)):  # called as they are: one compiled search per function
        assert bool(simple.is_legal(state, act(jax.random.key(3), state)))


def test_strong_uses_its_variants_measured_agent_and_the_default_elsewhere(monkeypatch):
    """``strong`` on Duo is the shipped network's search (:data:`search.STRONG_SPECS`: ``baseline:duo`` over 64
    candidates, 32 at the root, with ``local`` playouts) with the time budget, measured better than the network-free
    search at the same time a move; on Classic (4 players, and 2 against Pentobi's ``classic_2``) ``mcts`` over 64
    candidates, 32 at the root, ranked by the fitted move model; on variants without a measurement, ``mcts`` with
    today's defaults and the budget."""
    from blokus_agents.core.policies import load_builtins
    from blokus_agents.players.baselines import shipped

    load_builtins()  # the catalog registers the real factories first; the replacements below are what they call
    built, searched = [], []
    monkeypatch.setattr(search, "mcts_policy", lambda env, **options: built.append(options) or options)
    monkeypatch.setattr(
        shipped, "network_search_policy", lambda env, fn, p, settings: searched.append(settings.options()) or settings
    )
    duo, classic, junior = blokus_jax.make("duo"), blokus_jax.make("classic"), blokus_jax.make("junior")
    assert search.strong_spec(duo, 3) == "baseline:duo,k=64,considered=32,playout=local,prior=model,seconds=3.0"
    resolve_agent("strong:seconds=3", duo)
    resolve_agent("strong", classic)
    resolve_agent("strong", junior)
    assert [(o["k"], o["considered"], o["seconds"], o["mix"], o["playout"]) for o in searched] == [
        (64, 32, 3.0, 0.5, "local")
    ]
    assert built == [
        {"seconds": 2.0, **search.STRONG, "k": 64, "considered": 32, "prior": "model"},
        {"seconds": 2.0, **search.STRONG},
    ]
    assert search.strong_spec(classic).startswith("mcts:k=64,") and search.strong_spec(classic).endswith("seconds=2.0")
    assert search.strong_spec(junior).startswith("mcts:k=16,")
    assert search.strong_spec(blokus_jax.make("classic_2p"), 2) == (
        "mcts:k=64,playouts=8,playout=greedy,considered=32,margin=0.5,gumbel_scale=0.0,prior=model,seconds=2.0"
    )
    # the memory check sizes Duo's wide network-free search (still strong_settings there) above the default one
    assert search.search_memory(duo, {**search.strong_settings(duo), "seconds": 2}) > search.search_memory(
        duo, {**search.STRONG, "seconds": 2}
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", ["simple", "junior"])
def test_strong_plays_legal_moves_including_pass_only_positions(name, monkeypatch):
    """``strong`` on the clock (as matches play it) plays only legal moves, passes included, in every phase of its
    time budget. On simple its budget is calibrated for real (shared with the budget test above); on junior the budget
    is set (the same phases, small simulation counts) so that the test pays for strong's search, not for another
    calibration."""
    env = blokus_jax.make(name)
    if name != "simple":
        placed = [int(s.pieces_placed.sum()) for s in search._calibration_positions(env)]
        budget = search.Budget((0, placed[len(placed) // 3], placed[2 * len(placed) // 3]), (6, 8, 10))
        monkeypatch.setattr(search, "calibrate_budget", lambda *args, **kwargs: budget)
    policy = jax.jit(one_game(resolve_agent(f"strong:seconds={STRONG_TEST_SECONDS}", env)))  # as matches play it
    step, sample = jax.jit(env.step), jax.jit(env.sample_action)
    state, t, passes = env.init(jax.random.key(1)), 0, 0
    while not bool(state.terminated):
        mask = np.asarray(state.legal_action_mask)
        # strong plays every other move, random the rest, so that the game reaches pass-only positions quickly
        action = int(policy(jax.random.key(t), state)) if t % 2 == 0 else int(sample(jax.random.key(t), state))
        assert mask[action]
        passes += int(mask[-1] and t % 2 == 0)
        state, t = step(state, action), t + 1
    assert t > 8
