"""Gumbel MuZero on the clock: the search that a time-budgeted agent plays one game at a time (`one_game`).

mctx's `gumbel_muzero_policy` plans its sequential halving over the root's candidates for a fixed number of
simulations. Stopped early by a clock, a search planned for more simulations than it reaches decides among more
candidates with fewer visits each, which played much weaker (Duo, against Pentobi level 5: 0.26 over 58 games, where
the same search without the clock, planned and run for about half the simulations, scored 0.45 on the same seeds).
So this search times its first `PLAN_AFTER` simulations, which every plan spends the same way (the first visits to
the considered candidates), then plans the halving for the simulations the rest of its time affords (at most its
tree's size) and runs that plan; the clock still ends a plan that overruns. Everything else is mctx's search
(`mctx.search`, its interior selection and its final choice among the most visited candidates).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import io_callback

#: The search reads the clock after every this many simulations.
CLOCK_CHUNK = 8
#: Simulations timed before the plan is made (a multiple of `CLOCK_CHUNK`).
PLAN_AFTER = 32
#: The fewest simulations a plan takes: every plan of at least this many brings the candidates to the same visit
#: counts in its first `PLAN_AFTER` simulations (for up to 64 considered candidates), so the visits made before
#: the plan fit it.
MIN_PLAN = 256
#: Sequential-halving rounds computed (enough for 64 considered candidates and any plan).
_ROUNDS = 32
_CLOCK_ZERO = time.perf_counter()


class ClockData(NamedTuple):
    """The tree's `extra_data` of a search on the clock.

    Attributes:
        root_gumbel: `float32[num_actions]` the root's Gumbel noise (mctx's `GumbelMuZeroExtraData`).
        planned: `int32` the simulations the sequential halving is planned for.
        cap: `int32` the most simulations this search may plan and run (at most the tree's size).
    """

    root_gumbel: jax.Array
    planned: jax.Array
    cap: jax.Array


def considered_visit(num_considered: jax.Array, simulation_index: jax.Array, num_simulations: jax.Array) -> jax.Array:
    """The visit count that sequential halving brings a candidate to at `simulation_index`, for a plan of
    `num_simulations` over `num_considered` candidates: mctx's `get_table_of_considered_visits(m,
    num_simulations)[num_considered][simulation_index]`, for traced arguments (all `int32` scalars).

    Args:
        num_considered: The candidates considered at the root (`min(max considered, legal moves)`).
        simulation_index: The simulations made so far.
        num_simulations: The simulations the halving is planned for.

    Returns:
        `int32`: the considered visit count.
    """
    m = jnp.maximum(num_considered, 1)
    log2max = jnp.ceil(jnp.log2(m.astype(jnp.float32))).astype(jnp.int32)
    alive = jnp.maximum(2, m >> jnp.arange(_ROUNDS, dtype=jnp.int32))  # candidates left in each round
    extra = jnp.maximum(1, num_simulations // (jnp.maximum(log2max, 1) * alive))  # visits each gets in the round
    ends = jnp.cumsum(extra * alive)  # simulations at the end of each round
    r = jnp.minimum(jnp.sum(ends <= simulation_index), _ROUNDS - 1)  # the round under way
    begun = jnp.where(r > 0, ends[r - 1], 0)
    visits_before = jnp.sum(jnp.where(jnp.arange(_ROUNDS) < r, extra, 0))
    halving = visits_before + (simulation_index - begun) // alive[r]
    return jnp.where(num_considered <= 1, simulation_index, halving).astype(jnp.int32)


def _score_considered(considered: jax.Array, gumbel, logits, qvalues, visit_counts) -> jax.Array:
    """mctx's sequential-halving score: `gumbel + logits + q` for the candidates at the `considered` visit count."""
    logits = logits - jnp.max(logits, keepdims=True, axis=-1)
    penalty = jnp.where(visit_counts == considered, 0.0, -jnp.inf)
    return jnp.maximum(-1e9, gumbel + logits + qvalues) + penalty


def _masked_argmax(scores: jax.Array, invalid: jax.Array) -> jax.Array:
    return jnp.argmax(jnp.where(invalid, -jnp.inf, scores), axis=-1).astype(jnp.int32)


def _root_selection(max_considered: int, qtransform: Callable) -> Callable:
    """mctx's Gumbel root selection, with the halving planned for the tree's `extra_data.planned` simulations."""

    def select(rng_key: jax.Array, tree: Any, node_index: jax.Array) -> jax.Array:
        del rng_key
        visit_counts = tree.children_visits[node_index]
        num_valid = jnp.sum(1 - tree.root_invalid_actions, axis=-1).astype(jnp.int32)
        considered = considered_visit(
            jnp.minimum(max_considered, num_valid), jnp.sum(visit_counts, -1), tree.extra_data.planned
        )
        scores = _score_considered(
            considered,
            tree.extra_data.root_gumbel,
            tree.children_prior_logits[node_index],
            qtransform(tree, node_index),
            visit_counts,
        )
        return _masked_argmax(scores, tree.root_invalid_actions)

    return select


def _milliseconds(_: Any) -> np.ndarray:
    """Milliseconds since this module was imported, as `int32` (the clock the search reads)."""
    return np.int32(min((time.perf_counter() - _CLOCK_ZERO) * 1000.0, 2**31 - 1))


def _clock(after: jax.Array) -> jax.Array:
    """`int32` milliseconds on the host clock, read once `after` (a value of the loop) is computed."""
    return io_callback(_milliseconds, jax.ShapeDtypeStruct((), jnp.int32), after, ordered=False)


def clock_loop(seconds: float, chunk: int = CLOCK_CHUNK) -> Callable:
    """A drop-in for `jax.lax.fori_loop(lower, upper, body, init)` (mctx's `loop_fn`) that runs `body` in chunks
    of `chunk` iterations and stops after the first chunk that ends `seconds` or more after the loop started (or
    at `upper`). Over mctx's search loop (`init` is `(key, tree)` with `ClockData` as the tree's `extra_data`), it
    also plans the search: once `PLAN_AFTER` simulations are timed, the tree's `planned` simulations become those
    that `seconds` affords at that pace (from `MIN_PLAN` to the tree's `cap`), and the loop ends there.

    Args:
        seconds: The time after which no new chunk starts (the first chunk always runs).
        chunk: The iterations between two readings of the clock.

    Returns:
        The loop function.
    """
    limit = int(round(seconds * 1000.0))

    def loop(lower: int, upper: int, body: Callable, init: Any) -> Any:
        start = _clock(jnp.int32(lower))

        def last(state: Any) -> jax.Array:
            """The loop's end: `upper`, or the most simulations planned in the batch."""
            extra = _clock_data(state)
            return upper if extra is None else jnp.minimum(upper, jnp.max(extra.planned))

        def more(carry: tuple[jax.Array, Any]) -> jax.Array:
            i, state = carry
            return (i < last(state)) & ((i == lower) | (_clock(i) - start < limit))

        def run(carry: tuple[jax.Array, Any]) -> tuple[jax.Array, Any]:
            i, state = carry
            end = jnp.minimum(i + chunk, last(state))
            state = jax.lax.fori_loop(i, end, body, state)
            extra = _clock_data(state)
            if extra is not None:  # plan once the first PLAN_AFTER simulations are timed
                done = jnp.sum(state[-1].node_visits[..., 0])  # read the clock after the chunk, not before it
                spent = jnp.maximum(_clock(done) - start, 1).astype(jnp.float32)
                pace = jnp.maximum(end * (limit / spent), MIN_PLAN)
                plan = jnp.minimum(pace, jnp.minimum(extra.cap, upper)).astype(jnp.int32)
                extra = extra._replace(planned=jnp.where(end == PLAN_AFTER, plan, extra.planned))
                state = (*state[:-1], state[-1].replace(extra_data=extra))
            return end, state

        return jax.lax.while_loop(more, run, (jnp.int32(lower), init))[1]

    return loop


def _clock_data(state: Any) -> ClockData | None:
    """The `ClockData` of mctx's loop state `(key, tree)`, or `None` for any other loop."""
    extra = getattr(state[-1], "extra_data", None) if isinstance(state, tuple) and state else None
    return extra if isinstance(extra, ClockData) else None


def gumbel_on_the_clock(
    params: Any,
    rng_key: jax.Array,
    root: Any,
    recurrent_fn: Callable,
    *,
    num_simulations: int,
    invalid_actions: jax.Array,
    max_num_considered_actions: int,
    gumbel_scale: float,
    qtransform: Callable,
    seconds: float,
    cap: jax.Array | None = None,
) -> Any:
    """`mctx.gumbel_muzero_policy` (same arguments, same output) on the clock: the tree holds `num_simulations`,
    the halving is planned after `PLAN_AFTER` timed simulations for what `seconds` affords (at most `cap`), and no
    chunk of `CLOCK_CHUNK` simulations starts after `seconds`. With time to spare it is `gumbel_muzero_policy` of
    `cap` simulations exactly, so one compiled search serves every phase of a phased budget.

    Args:
        params: Passed to `recurrent_fn`.
        rng_key: The search's key.
        root: The `mctx.RootFnOutput` of the batch.
        recurrent_fn: mctx's recurrent function.
        num_simulations: The most simulations (the tree's size).
        invalid_actions: `bool[B, num_actions]` the root's invalid actions.
        max_num_considered_actions: The root candidates sequential halving starts from.
        gumbel_scale: The scale of the root's Gumbel noise.
        qtransform: mctx's Q transform.
        seconds: The time after which the search stops, counted from its first simulation.
        cap: `int32[B]`, the most simulations of each search of the batch (a traced value, at most
            `num_simulations`); `None`: `num_simulations`.

    Returns:
        An `mctx.PolicyOutput`.
    """
    import mctx

    min_logit = jnp.finfo(root.prior_logits.dtype).min
    logits = root.prior_logits - jnp.max(root.prior_logits, axis=-1, keepdims=True)
    root = root.replace(prior_logits=jnp.where(invalid_actions, min_logit, logits))
    rng_key, gumbel_rng = jax.random.split(rng_key)
    gumbel = gumbel_scale * jax.random.gumbel(gumbel_rng, root.prior_logits.shape, root.prior_logits.dtype)
    batch = root.prior_logits.shape[0]
    full = jnp.full((batch,), num_simulations, jnp.int32)
    cap = full if cap is None else jnp.minimum(jnp.asarray(cap, jnp.int32), full)
    extra = ClockData(gumbel, cap, cap)
    tree = mctx.search(
        params=params,
        rng_key=rng_key,
        root=root,
        recurrent_fn=recurrent_fn,
        root_action_selection_fn=_root_selection(max_num_considered_actions, qtransform),
        interior_action_selection_fn=functools.partial(
            mctx.gumbel_muzero_interior_action_selection, qtransform=qtransform
        ),
        num_simulations=num_simulations,
        invalid_actions=invalid_actions,
        extra_data=extra,
        loop_fn=clock_loop(seconds),
    )
    visits = tree.summary().visit_counts
    qvalues = jax.vmap(qtransform, in_axes=[0, None])(tree, tree.ROOT_INDEX)
    scores = _score_considered(jnp.max(visits, axis=-1, keepdims=True), gumbel, root.prior_logits, qvalues, visits)
    weights = jax.nn.softmax(jnp.where(invalid_actions, min_logit, root.prior_logits + qvalues))
    return mctx.PolicyOutput(action=_masked_argmax(scores, invalid_actions), action_weights=weights, search_tree=tree)


__all__ = [
    "CLOCK_CHUNK",
    "MIN_PLAN",
    "PLAN_AFTER",
    "ClockData",
    "clock_loop",
    "considered_visit",
    "gumbel_on_the_clock",
]
