"""Time budgets by phase of the game (``seconds=``): :class:`~blokus_agents.search.mcts.Budget` picks the phase of a
position, :func:`~blokus_agents.search.mcts.phased` runs the phase's search (also under ``jit`` and ``vmap``), and
:func:`~blokus_agents.search.mcts.calibrate_budget` fits each phase's simulations to the slowest position of that phase
(checked with a synthetic clock, so the arithmetic is exact and the test costs no timing)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import blokus_jax
from blokus_agents.search import mcts as search
from blokus_agents.search.mcts import BUDGET_SHARE, Budget, calibrate_budget, phased


@pytest.fixture(scope="module")
def simple():
    return blokus_jax.make("simple")


@pytest.fixture(scope="module")
def game(simple):
    """The calibration positions of ``simple`` (one random game, every few moves)."""
    return search._calibration_positions(simple)


def _constant_search(n: int):
    """A stand-in search that answers its own simulation count."""
    return lambda key, state: jnp.float32(n)


def test_phase_follows_the_pieces_on_the_board(game):
    placed = [int(s.pieces_placed.sum()) for s in game]
    budget = Budget((0, placed[1], placed[2]), (10, 20, 30))
    expected = [0, 1] + [2] * (len(game) - 2)
    assert [int(budget.phase(s)) for s in game] == expected
    assert [float(phased(_constant_search, budget)(None, s)) for s in game] == [10.0, 20.0] + [30.0] * (len(game) - 2)


def test_phased_search_under_jit_and_vmap(game):
    placed = [int(s.pieces_placed.sum()) for s in game]
    budget = Budget((0, placed[2]), (7, 9))
    policy = phased(_constant_search, budget)
    assert float(jax.jit(policy)(jax.random.key(0), game[0])) == 7.0
    assert float(jax.jit(policy)(jax.random.key(0), game[-1])) == 9.0
    batch = jax.tree.map(lambda *x: jnp.stack(x), *game)
    keys = jax.random.split(jax.random.key(0), len(game))
    got = np.asarray(jax.jit(jax.vmap(policy))(keys, batch))
    assert got.tolist() == [7.0, 7.0] + [9.0] * (len(game) - 2)


def test_sims_at_is_the_phases_count_and_the_clocked_search_is_one_function_for_all_phases(game):
    """On the clock a phased budget is one search: its tree sized for the largest phase, each phase's count the
    traced cap ``Budget.sims_at`` (under ``jit`` too); a budget of one count needs no cap."""
    placed = [int(s.pieces_placed.sum()) for s in game]
    budget = Budget((0, placed[1], placed[2]), (10, 30, 20))
    expected = [10, 30] + [20] * (len(game) - 2)
    assert [int(budget.sims_at(s)) for s in game] == expected
    assert [int(jax.jit(budget.sims_at)(s)) for s in game] == expected
    built = []

    def build(n, stop_after=0.0, cap=None):
        built.append((n, stop_after, cap))
        return n

    assert search.clocked(build, 2.0, budget) == 30
    assert search.clocked(build, 2.0, Budget((0, 5), (8, 8))) == 8
    assert built == [(30, search.CLOCK_SHARE * 2.0, budget), (8, search.CLOCK_SHARE * 2.0, None)]


def test_one_simulation_count_is_one_search():
    budget = Budget((0, 5, 9), (4, 4, 4))
    assert phased(_constant_search, budget)(None, None) == 4.0
    assert budget.describe() == "4 simulations a move"
    assert "from 5 pieces" in Budget((0, 5), (4, 8)).describe()


def test_calibration_fits_each_phase_to_its_slowest_position(simple, game, monkeypatch):
    """Each position costs (its simulations) x (a cost per simulation that falls as the game goes on), except one
    slow position in the middle: every phase gets ``target / slowest cost per simulation`` of its own positions and
    the nearest position of each neighbouring phase."""
    cost = np.linspace(2e-3, 2e-4, len(game))
    cost[len(game) // 2] = 3e-3
    calls = []

    def clock(policy, states):
        calls.append(len(states))
        return [float(policy(None, s)) * c for s, c in zip(states, cost)]

    monkeypatch.setattr(search, "_move_times", clock)
    monkeypatch.setattr(search, "_calibration_positions", lambda env: game)
    budget = calibrate_budget(simple, _constant_search, 1.0, ("synthetic", 1), phases=3)
    groups = np.array_split(np.arange(len(game)), 3)
    assert budget.starts[0] == 0 and list(budget.starts) == sorted(set(budget.starts))
    assert budget.starts[1:] == tuple(int(game[g[0]].pieces_placed.sum()) for g in groups[1:])
    for n, g in zip(budget.sims, groups):
        near = slice(max(0, g[0] - 1), g[-1] + 2)  # the phase's positions and the nearest of each neighbour
        assert n == int(BUDGET_SHARE * 1.0 / cost[near].max())
    assert calls == [len(game)]  # the probe alone: the clock (one_game) ends each move in time, not a second timing
    assert calibrate_budget(simple, _constant_search, 1.0, ("synthetic", 1), phases=3) is budget  # cached
    assert search.calibrated_budgets()[-1] == budget
    assert search.calibrated_sims()[-1] == max(budget.sims)


def test_on_the_clock_a_phase_searches_at_most_its_calibrated_simulations_times_the_cap(monkeypatch):
    """The search played one game at a time plans on the clock; its tree holds ``CLOCK_CAP`` times each phase's
    calibrated simulations (never more than ``MAX_SIMS``), and the phases start where they did. The shipped cap is 1:
    on an idle machine the clock plays the calibrated count, and only lowers it."""
    budget = search.Budget((0, 12, 24), (100, 250, search.MAX_SIMS - 1))
    assert search.CLOCK_CAP == 1.0 and 0 < search.CLOCK_SHARE < 1 and search.on_the_clock(budget) == budget
    monkeypatch.setattr(search, "CLOCK_CAP", 3.0)
    assert search.on_the_clock(budget) == search.Budget((0, 12, 24), (300, 750, search.MAX_SIMS))


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan"), float("inf"), 1e9])
def test_bad_budgets_are_refused(simple, bad):
    with pytest.raises(blokus_jax.BlokusError, match="seconds"):
        calibrate_budget(simple, _constant_search, bad)


def test_calibration_logs_each_step_so_a_program_can_show_progress(simple, game, monkeypatch, caplog):
    monkeypatch.setattr(search, "_move_times", lambda policy, states: [float(policy(None, s)) * 1e-3 for s in states])
    monkeypatch.setattr(search, "_calibration_positions", lambda env: game)
    with caplog.at_level("INFO", logger=search.calibration_log.name):
        budget = calibrate_budget(simple, _constant_search, 0.5, ("synthetic", 3), phases=3)
    lines = [r.getMessage() for r in caplog.records if r.name == search.calibration_log.name]
    assert len(lines) == 3, lines
    assert "playing a game for positions" in lines[0] and "0.5 s budget on simple" in lines[0]
    assert f"32-simulation probe search and timing it on {len(game)} positions" in lines[1]
    assert lines[2].startswith(f"calibrated: {budget.describe()}") and lines[2].endswith("s so far)")
