"""The search on the clock (``blokus_agents.search.anytime``): its sequential-halving plan is mctx's table for any
budget, plans agree on the visits made before they are made, the loop runs whole chunks and stops on the clock or at
its plan, the plan is what the first simulations' pace affords (a stubbed clock), and with time to spare the search
is mctx's ``gumbel_muzero_policy`` exactly."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mctx._src import seq_halving

import blokus_jax
from blokus_agents.search import anytime
from blokus_agents.search.gumbel import make_search, rollout_evaluator

_LEVELS = jax.jit(jax.vmap(anytime.considered_visit, in_axes=(None, 0, None)))
_STEPS = jnp.arange(4096, dtype=jnp.int32)


@pytest.fixture(scope="module")
def simple():
    return blokus_jax.make("simple")


@settings(max_examples=60, deadline=None)
@given(considered=st.integers(0, 64), sims=st.integers(1, 4096))
def test_the_planned_visit_counts_are_mctxs_table_for_any_budget(considered, sims):
    want = np.asarray(seq_halving.get_table_of_considered_visits(considered, sims)[considered])
    got = np.asarray(_LEVELS(jnp.int32(considered), _STEPS, jnp.int32(sims)))[:sims]
    np.testing.assert_array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(considered=st.integers(1, 64), plans=st.lists(st.integers(anytime.MIN_PLAN, 4096), min_size=2, max_size=2))
def test_plans_of_at_least_min_plan_agree_on_the_visits_made_before_the_plan(considered, plans):
    """The first ``PLAN_AFTER`` simulations run under the tree's size as the plan; the plan made then must have
    brought the candidates to the same visit counts, whatever the two budgets."""
    first = [np.asarray(_LEVELS(jnp.int32(considered), _STEPS, jnp.int32(n)))[: anytime.PLAN_AFTER] for n in plans]
    np.testing.assert_array_equal(first[0], first[1])


def test_the_clock_loop_runs_whole_chunks_and_stops_once_its_time_is_spent():
    """``clock_loop`` is ``fori_loop`` in chunks: with no time left it runs its first chunk alone, with time to spare
    every iteration (a count that is no multiple of the chunk included), with the same result as ``fori_loop``."""

    def body(i, carry):
        count, total = carry
        return count + 1, total * 1.5 + i

    init = (jnp.int32(0), jnp.float32(1.0))
    for seconds, upper, runs in ((0.0, 50, 8), (3600.0, 50, 50), (3600.0, 5, 5)):
        count, total = jax.jit(lambda: anytime.clock_loop(seconds, chunk=8)(0, upper, body, init))()
        assert int(count) == runs
        if runs == upper:
            np.testing.assert_array_equal(total, jax.lax.fori_loop(0, upper, body, init)[1])


def _cap(n):
    """A phase's cap of ``n`` simulations at every position."""
    return lambda state: jnp.int32(n)


def _counting(env, calls):
    """The rollout evaluator of ``env`` that appends to ``calls`` on the host at every evaluation."""
    rollout = rollout_evaluator(env, playouts=1)

    def counted(params, key, state, root_player):
        logits, value = rollout(params, key, state, root_player)
        count = jax.experimental.io_callback(
            lambda v: calls.append(1) or v, jax.ShapeDtypeStruct((), jnp.float32), value
        )
        return logits, count

    return counted


def _search(env, evaluator, state, **settings):
    search = jax.jit(make_search(env, evaluator, k=4, considered=4, **settings))
    return jax.block_until_ready(search(None, jax.random.key(1), jax.tree.map(lambda x: x[None], state)))


@pytest.mark.slow
def test_a_search_on_the_clock_stops_after_a_chunk_and_with_time_to_spare_is_the_full_search(simple):
    """``make_search(stop_after=...)``: with its time spent at once, a search of 64 simulations evaluates the root and
    one chunk of ``CLOCK_CHUNK`` simulations and plays a legal move; with time to spare it is mctx's search of all
    64, move and improved policy alike, for the same key (each evaluation counted on the host). With a ``cap`` of 44
    (a phase's count, in a tree sized for a larger phase) it is mctx's search of 44."""
    calls = []
    evaluator = _counting(simple, calls)
    state = simple.init(jax.random.key(0))
    outputs = {}
    for name, options in {
        "spent": dict(sims=64, stop_after=1e-6),
        "spare": dict(sims=64, stop_after=3600.0),
        "mctx": dict(sims=64),
        "capped": dict(sims=64, stop_after=3600.0, cap=_cap(44)),
        "mctx 44": dict(sims=44),
    }.items():
        calls.clear()
        outputs[name] = (_search(simple, evaluator, state, **options), len(calls))
    spent, evaluations = outputs["spent"]
    assert evaluations == 1 + anytime.CLOCK_CHUNK and bool(simple.is_legal(state, spent.action[0]))
    assert outputs["spare"][1] == outputs["mctx"][1] == 1 + 64
    assert outputs["capped"][1] == outputs["mctx 44"][1] == 1 + 44
    for clocked, plain in (("spare", "mctx"), ("capped", "mctx 44")):
        for a, b in zip(outputs[clocked][0], outputs[plain][0], strict=True):
            np.testing.assert_array_equal(a, b)


@pytest.mark.slow
def test_the_plan_is_what_the_pace_of_the_first_simulations_affords(simple, monkeypatch):
    """With a stubbed clock that advances ``tick`` milliseconds at every reading (two a chunk), the first
    ``PLAN_AFTER`` simulations take ``8 * tick`` ms, so a 1 s budget plans ``32 * 1000 / (8 * tick)`` simulations:
    the search runs exactly those (5 ms: 800), no more than its cap (a phase of 500 in a tree of 1000) or its tree
    (a tree of 700), and when the plan is below ``MIN_PLAN`` the clock ends the search (50 ms: the 10 chunks that
    start within the second)."""
    readings = []

    def clock(_):
        readings.append(1)
        return np.int32(tick[0] * (len(readings) - 1))

    monkeypatch.setattr(anytime, "_milliseconds", clock)
    calls = []
    evaluator = _counting(simple, calls)
    state = simple.init(jax.random.key(0))
    tick = [5]
    search = jax.jit(make_search(simple, evaluator, k=4, considered=4, sims=1000, stop_after=1.0))
    searches = {
        1000: search,
        500: jax.jit(make_search(simple, evaluator, k=4, considered=4, sims=1000, stop_after=1.0, cap=_cap(500))),
        700: jax.jit(make_search(simple, evaluator, k=4, considered=4, sims=700, stop_after=1.0, cap=_cap(900))),
    }
    for ms, sims, expected in ((5, 1000, 800), (5, 500, 500), (5, 700, 700), (50, 1000, 80)):
        tick[0] = ms
        readings.clear()
        calls.clear()
        jax.block_until_ready(searches[sims](None, jax.random.key(1), jax.tree.map(lambda x: x[None], state)))
        assert len(calls) == 1 + expected, (ms, sims)
