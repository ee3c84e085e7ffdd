"""Arena: exact seat rotation, win credits on rigged matches, forfeits, statistics and reproducibility."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import blokus_jax
from blokus_agents.core.policies import ParamPolicy
from blokus_agents.engines.arena import bradley_terry_elo, play_match, round_robin, seat_patterns, wilson_interval
from blokus_agents.players.bots import get_bot
from blokus_jax.pieces import standard_pieces


@pytest.fixture(scope="module")
def simple():
    return blokus_jax.make("simple")


@pytest.fixture(scope="module")
def tiny4():
    """A 4-player game on an 8x8 board with four small pieces: cheap, but with four seats."""
    variant = blokus_jax.Variant(
        "tiny4",
        (8, 8),
        4,
        ((0,), (1,), (2,), (3,)),
        (((0, 0),), ((0, 7),), ((7, 7),), ((7, 0),)),
        standard_pieces(["1", "2", "V3", "O"]),
    )
    return blokus_jax.Env(variant)


@pytest.mark.parametrize("players", [1, 2, 3, 4, 5])
def test_seat_patterns_put_each_policy_in_each_seat_half_the_time(players):
    patterns = seat_patterns(players)
    assert len({tuple(p) for p in patterns}) == len(patterns)
    if players > 1:
        np.testing.assert_array_equal((patterns == 0).sum(0), np.full(players, len(patterns) // 2))
        assert ((patterns == 0).any(1) & (patterns == 1).any(1)).all()  # both policies in every game


def test_match_rotates_seats_exactly_and_credits_sum_to_one(simple):
    bot = get_bot("random", simple)
    result = play_match(
        simple, (bot, get_bot("greedy", simple)), ("random", "greedy"), 9, jax.random.key(0), progress=False
    )
    assert result.games == 10  # rounded up to the 2 seat patterns
    np.testing.assert_array_equal((result.seats == 0).sum(0), [5, 5])
    np.testing.assert_allclose(result.credit.sum(1), 1.0)
    a_scores = np.where(result.seats == 0, result.scores, 0).sum(1)
    b_scores = np.where(result.seats == 1, result.scores, 0).sum(1)
    expected = np.where(a_scores > b_scores, 1.0, np.where(a_scores == b_scores, 0.5, 0.0))
    np.testing.assert_array_equal(result.credit[:, 0], expected)
    np.testing.assert_array_equal(result.margins(0), a_scores - b_scores)
    assert (result.forfeits == 0).all()
    assert (result.steps > 0).all()


def test_four_player_match_rotates_and_splits_ties(tiny4):
    bot = get_bot("random", tiny4)
    result = play_match(tiny4, (bot, bot), ("a", "b"), 8, jax.random.key(1), progress=False)
    assert result.games == 8
    np.testing.assert_array_equal((result.seats == 0).sum(0), [4, 4, 4, 4])
    np.testing.assert_allclose(result.credit.sum(1), 1.0)
    best = result.scores == result.scores.max(1, keepdims=True)
    share = best / best.sum(1, keepdims=True)
    np.testing.assert_allclose(result.credit[:, 1], (share * (result.seats == 1)).sum(1))


def test_a_policy_that_always_passes_forfeits_every_game(simple):
    def always_pass(key, state):
        return jnp.int32(simple.pass_action)

    report = round_robin(simple, {"pass": always_pass, "random": get_bot("random", simple)}, 6, seed=0, progress=False)
    by_name = {a.name: a for a in report.agents}
    assert by_name["pass"].win_rate == 0.0 and by_name["random"].win_rate == 1.0
    assert by_name["pass"].forfeits == 6 and by_name["random"].forfeits == 0
    assert by_name["pass"].win_rate_ci[0] < 1e-12 and 0 < by_name["pass"].win_rate_ci[1] < 0.5
    assert by_name["random"].elo == 0.0 and by_name["random"].elo - by_name["pass"].elo > 100  # random anchors Elo
    summary = report.to_dict()
    assert summary["variant"] == "simple" and summary["games"] == 6
    assert {"name", "win_rate", "win_rate_ci", "mean_score"} <= set(summary["agents"][0])
    assert summary["pairings"][0]["win_rate_a"] == 0.0


@pytest.mark.slow
def test_round_robin_is_reproducible_and_seed_dependent(simple):
    bots = {n: get_bot(n, simple) for n in ("random", "greedy", "corners")}
    first = round_robin(simple, bots, 8, seed=3, progress=False)
    again = round_robin(simple, bots, 8, seed=3, progress=False)
    other = round_robin(simple, bots, 8, seed=4, progress=False)
    assert first.to_dict() == again.to_dict()
    assert first.to_dict() != other.to_dict()
    assert len(first.matches) == 3 and all(a.games == 16 for a in first.agents)
    h2h = first.head_to_head()
    np.testing.assert_allclose(h2h + h2h.T, np.where(np.eye(3, dtype=bool), np.nan, 1.0))
    assert "| random |" in first.markdown()
    assert abs(sum(a.win_rate for a in first.agents) - 1.5) < 1e-9  # 3 pairings, one win credit each


def test_wilson_interval_matches_known_values():
    lo, hi = wilson_interval(50, 100)
    assert abs(lo - 0.4038) < 1e-3 and abs(hi - 0.5962) < 1e-3
    lo, hi = wilson_interval(0, 10)
    assert lo < 1e-12 and abs(hi - 0.2775) < 1e-3


def test_bradley_terry_ratings_order_agents():
    wins = np.asarray([[0, 80, 95], [20, 0, 75], [5, 25, 0]], float)
    games = np.full((3, 3), 100.0) - 100 * np.eye(3)
    elo = bradley_terry_elo(wins, games)
    assert elo[0] == 0 and elo[0] > elo[1] > elo[2]
    even = bradley_terry_elo(np.full((2, 2), 50.0) * (1 - np.eye(2)), np.full((2, 2), 100.0) * (1 - np.eye(2)))
    np.testing.assert_allclose(even, [0, 0], atol=1e-6)


def test_bad_arguments_raise_clear_errors(simple):
    with pytest.raises(ValueError, match="at least two agents"):
        round_robin(simple, {"random": get_bot("random", simple)}, 2)
    with pytest.raises(ValueError, match="positive"):
        play_match(simple, (get_bot("random", simple),) * 2, ("a", "b"), 0, jax.random.key(0))


def test_param_policies_reuse_the_compiled_match(simple):
    """New params for the same policy function (a network during training) must not recompile the match."""
    traces = []
    greedy, random = get_bot("greedy", simple), get_bot("random", simple)

    def switchable(params, key, state):
        traces.append(1)  # runs only while tracing
        return jnp.where(params > 0, greedy(key, state), random(key, state))

    key = jax.random.key(5)
    as_greedy = play_match(
        simple, (ParamPolicy(switchable, jnp.int32(1)), random), ("p", "random"), 64, key, progress=False
    )
    traced = len(traces)
    as_random = play_match(
        simple, (ParamPolicy(switchable, jnp.int32(0)), random), ("p", "random"), 64, key, progress=False
    )
    assert len(traces) == traced > 0
    assert as_greedy.credit[:, 0].mean() > 0.8  # params really reached the compiled match
    assert abs(as_random.credit[:, 0].mean() - 0.5) < 0.2
    assert ParamPolicy(switchable, jnp.int32(1))(key, simple.init()) == greedy(key, simple.init())


def test_random_openings_are_shared_by_both_seat_orders_and_make_deterministic_agents_play_different_games():
    from blokus_agents.engines.arena import _opening_runner

    env = blokus_jax.make("simple")

    def first_legal(key, state):  # a deterministic agent
        return jnp.argmax(state.legal_action_mask).astype(jnp.int32)

    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(0), 8))
    opened = jax.device_get(_opening_runner(env, 2, 2)(states, jax.random.key(1)))
    boards = [opened.board[i].tobytes() for i in range(8)]
    assert all(boards[2 * i] == boards[2 * i + 1] for i in range(4)), "a rotation must share its opening"
    assert len(set(boards)) > 1 and int(opened.step_count[0]) == 2
    plain = play_match(env, (first_legal, first_legal), ("a", "b"), 16, jax.random.key(2), progress=False)
    varied = play_match(env, (first_legal, first_legal), ("a", "b"), 16, jax.random.key(2), progress=False, opening=2)
    assert len({s.tobytes() for s in plain.scores}) <= 2
    assert len({s.tobytes() for s in varied.scores}) > 2
    with pytest.raises(ValueError, match="opening must be a non-negative"):
        play_match(env, (first_legal, first_legal), ("a", "b"), 2, jax.random.key(2), progress=False, opening=-1)


def test_openings_must_leave_the_games_unfinished(simple):
    from blokus_agents.engines.arena import check_opening, max_game_moves

    bots = (get_bot("greedy", simple), get_bot("random", simple))
    limit = max_game_moves(simple)
    assert limit == simple.num_colors * (int(simple.tables.piece_copies.sum()) + 1)
    assert check_opening(simple, 3) == 3
    for bad in (limit, 200, 10**20):
        with pytest.raises(ValueError, match=f"at most {limit} moves"):
            play_match(simple, bots, ("g", "r"), 2, jax.random.key(0), progress=False, opening=bad)
    for bad in (1.5, True, "3"):
        with pytest.raises(ValueError, match="non-negative number of random moves"):
            check_opening(simple, bad)
    # below the bound, but random moves end some games first: refused instead of reading 0.50
    with pytest.raises(ValueError, match="ended within the random opening moves"):
        play_match(simple, bots, ("g", "r"), 8, jax.random.key(0), progress=False, opening=limit - 2)


def test_elo_is_anchored_on_random(simple):
    bots = {n: get_bot(n, simple) for n in ("greedy", "random")}
    report = round_robin(simple, bots, 4, seed=0, progress=False)
    elo = {a.name: a.elo for a in report.agents}
    assert elo["random"] == 0.0 and elo["greedy"] != 0.0
    assert bradley_terry_elo(np.asarray([[0.0, 3.0], [1.0, 0.0]]), np.full((2, 2), 4.0) * (1 - np.eye(2)), anchor=1)[
        1
    ] == pytest.approx(0.0)


def test_a_new_match_announces_its_compilation_once(simple):
    lines = []
    bots = (get_bot("corners", simple), get_bot("random", simple))
    play_match(simple, bots, ("c", "r"), 2, jax.random.key(0), progress=False, log=lines.append)
    assert len(lines) == 2 and lines[0].startswith("compiling the match c vs r (2 games")
    assert lines[1].startswith("compiled in ") and lines[1].endswith(" s")
    play_match(simple, bots, ("c", "r"), 2, jax.random.key(1), progress=False, log=lines.append)
    assert len(lines) == 2  # the compiled match is reused: nothing to announce


def test_the_progress_bar_counts_moves_against_a_bound_of_the_moves_left(simple, monkeypatch):
    """The bar advances by moves (all games of a batch move together, so counting finished games sat at 0 and then
    jumped); its total is an upper bound that never falls below what was played."""
    from blokus_agents.engines import arena

    bars = []

    class Recorder:
        def __init__(self, **kwargs):
            self.n, self.total, self.unit, self.totals, self.posts = (
                kwargs["initial"],
                kwargs["total"],
                kwargs["unit"],
                [],
                [],
            )
            bars.append(self)

        def update(self, k):
            self.n += k
            self.totals.append((self.n, self.total))

        def set_postfix_str(self, text, refresh=True):
            self.posts.append(text)

        def close(self):
            pass

    monkeypatch.setattr(arena, "tqdm", Recorder)
    result = play_match(simple, (get_bot("greedy", simple),) * 2, ("a", "b"), 4, jax.random.key(0), chunk=2)
    (bar,) = bars
    assert bar.unit == "move" and len(bar.totals) >= 3  # several updates, not one jump at the end
    assert all(n <= total for n, total in bar.totals)
    assert bar.totals[-1][0] >= int(result.steps.max()) and bar.posts[-1] == "4/4 games over"
