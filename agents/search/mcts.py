"""The search agents: `mcts` (the network-free search with playouts), `az:RUN_DIR` and the network search that
`baseline:` plays, `strong` (the best setting a variant has measured at a time budget), an AlphaZero run's
`teacher`, and the calibration of `seconds=` time budgets into simulations. The search itself is
`blokus_agents.search.gumbel`; the settings are declared once in `blokus_agents.search.settings`."""

from __future__ import annotations

import functools
import inspect
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from blokus_agents.core.options import MAX_SECONDS, MIN_SECONDS, XLA_OVERHEAD, Option, check_budget, search_bytes
from blokus_agents.core.policies import (
    AgentSpecError,
    ParamPolicy,
    Policy,
    agent_options,
    load_network,
    require_agent_run,
    resolve_agent,
)
from blokus_agents.search import calibration_store
from blokus_agents.search.calibration_store import _PROGRESS, calibration_remaining
from blokus_agents.search.gumbel import (
    SearchOutput,
    _single,
    make_search,
    mixed_evaluator,
    rollout_evaluator,
)
from blokus_agents.search.move_model import MoveModel, model_evaluator, shipped_model
from blokus_agents.search.settings import (
    MAX_SIMS,
    SETTING_NAMES,
    STRONG_SECONDS,
    VALUE_SCALE,
    SearchSettings,
    setting_options,
    takes_settings,
)
from blokus_jax.env import Env, State
from blokus_jax.errors import ConfigError, VariantError

#: The search settings of `mcts` (all but `mix`: its leaves are valued by playouts alone) and their defaults.
MCTS_SETTINGS = SearchSettings(sims=128)
#: The search settings of a network's search (`az:RUN_DIR`, `network_search_policy`): `SearchSettings`' defaults.
NETWORK_SETTINGS = SearchSettings()
#: The search settings `mcts` takes: all but the value head's `mix` (its `prior=model` is a move model without a
#: network logit, as shipped for `classic_2p` and `classic`).
MCTS_SETTING_NAMES = tuple(name for name in SETTING_NAMES if name != "mix")


@takes_settings(MCTS_SETTINGS, MCTS_SETTING_NAMES)
def mcts_policy(
    env: Env,
    *,
    temperature: float = 1.0,
    value_scale: float = VALUE_SCALE,
    centre: float = 0.0,
    **settings: Any,
) -> Policy:
    """The agent `mcts` (`mcts:sims=128,k=32`): Gumbel MuZero search over the exact env with the `rollout`
    evaluator, no network.

    Defaults chosen on Duo against `minimax` (see `benchmarks/RESULTS.md`, "Search"): 128 simulations, 8 greedy
    playouts per leaf blended with the score margin, no Gumbel noise when playing (`MCTS_SETTINGS`).

    Args:
        env: The environment.
        temperature: Divides the prior's move scores.
        value_scale: Weight of Q against the prior in the tree (mctx's `value_scale`).
        centre: Prior weight of moving towards the centre, per cell; 0 turns it off.
        **settings: The search settings `MCTS_SETTING_NAMES` (`sims`, `k`, `considered`, `gumbel_scale`,
            `playouts`, `playout`, `margin`, `seconds`, `prior`), each as `SearchSettings` declares it, with the
            defaults of `MCTS_SETTINGS`. `prior=model` ranks and weighs the moves by the variant's shipped move
            model instead of its own (the `corners` score; `centre` then has no effect); the model must take no
            network logit (`network_free_model`). `seconds=S > 0` is a time budget a move that replaces `sims`: in
            each phase of the game, the simulations one batch-1 search on this machine runs in at most `S` seconds
            (`calibrate_budget`). Batched (the arena), the policy plays that fixed budget; its `one_game` form
            (matches, GTP, `play`) reads the clock as it searches and stops at `CLOCK_SHARE` of the budget.

    Returns:
        A pure `policy(key, state) -> int32` for one unbatched state; with `seconds`, a `ParamPolicy` of no
        parameters whose `timed` function is the search on the clock.

    Raises:
        ValueError: `seconds` is neither 0 nor from `MIN_SECONDS` to `MAX_SECONDS`.
        ConfigError: `prior=model` on a variant without a shipped move model that takes no network logit.
    """
    check_budget({"seconds": settings["seconds"]})  # the range; sims with seconds is checked where a spec is resolved
    o = MCTS_SETTINGS.replace(**settings)
    evaluator = mcts_evaluator(
        env, o.prior, playouts=o.playouts, playout=o.playout, temperature=temperature, margin=o.margin, centre=centre
    )

    built: dict[tuple[int, float, Budget | None], Callable[[jax.Array, State], jax.Array]] = {}

    def build(n: int, stop_after: float = 0.0, cap: Budget | None = None) -> Callable[[jax.Array, State], jax.Array]:
        # One policy object per budget (and clock), so that every caller shares its compilation.
        if (n, stop_after, cap) not in built:
            act = _single(
                make_search(
                    env,
                    evaluator,
                    sims=n,
                    k=o.k,
                    considered=o.considered,
                    gumbel_scale=o.gumbel_scale,
                    value_scale=value_scale,
                    stop_after=stop_after,
                    cap=None if cap is None else cap.sims_at,
                )
            )
            built[n, stop_after, cap] = lambda key, state: act(None, key, state)
        return built[n, stop_after, cap]

    if o.seconds:
        options = (o.k, o.playouts, o.playout, o.considered, temperature, o.margin, o.gumbel_scale, value_scale, centre)
        # the prior joins the key only when it is the model, so that calibrations stored before it keep their keys
        key = ("mcts",) + options + (("prior=model",) if o.prior == "model" else ())
        budget = calibrate_budget(env, build, o.seconds, key)
        fixed, timed = phased(build, budget), clocked(build, o.seconds, on_the_clock(budget))
        return ParamPolicy(_without_params(fixed), None, timed=_without_params(timed))
    return build(o.sims)


@functools.lru_cache(maxsize=64)
def _without_params(policy: Callable[[jax.Array, State], jax.Array]) -> Callable[[None, jax.Array, State], jax.Array]:
    """`policy(key, state)` as a `ParamPolicy` function of no parameters (one object per policy, so compilations
    are shared)."""
    return lambda params, key, state: policy(key, state)


def mcts_evaluator(env: Env, prior: str = "network", **rollout: Any) -> Callable:
    """The evaluator of the network-free search (`mcts`, a teacher's, `move_prior`'s): `rollout_evaluator` with
    the `rollout` options, its prior logits replaced by the variant's `network_free_model` when `prior` is
    `"model"`."""
    evaluator = rollout_evaluator(env, **rollout)
    return model_evaluator(env, evaluator, network_free_model(env)) if prior == "model" else evaluator


def network_free_model(env: Env) -> MoveModel:
    """The move model shipped for `env`'s variant as the prior of a network-free search (`mcts:prior=model`, a
    teacher's): one that takes no network logit. Where the search's model takes one (Duo's, over the logits of
    `baseline:duo`), the model over the mover's observation planes shipped for policy networks
    (`move_model_duo_observation.json`); raises `ConfigError` for a variant without either."""
    model = shipped_model(env.variant.name)
    if not model.network:
        return model
    try:
        return shipped_model(env.variant.name, "observation")
    except ConfigError:
        raise ConfigError(
            f"the move model shipped for {env.variant.name!r} scores moves over the logits of {model.network!r}, "
            f"so it guides that network's search: use '{model.network},prior=model' (mcts's prior=model needs a "
            f"model without a network, as shipped for 'classic_2p' and 'classic')"
        ) from None


# Declared options of the search agents (type and range, checked when a spec is resolved, see
# blokus_agents.core.options) and their memory estimates for one game (the tree of mctx, the playouts).
SEARCH_OPTIONS = setting_options("sims", "k", "considered", "gumbel_scale")
MCTS_OPTIONS = {
    **setting_options(*MCTS_SETTING_NAMES),
    "temperature": Option(float, 1e-4, 1e4, doc="divides the prior's move scores; smaller values overflow float32"),
    "value_scale": Option(
        float, 1e-3, 100.0, doc=f"weight of Q against the prior in the tree (mctx's, {VALUE_SCALE:g})"
    ),
    "centre": Option(float, 0.0, 100.0, doc="prior weight of moving towards the centre (per cell); 0: off"),
}
STRONG_OPTIONS = {"seconds": Option(float, MIN_SECONDS, MAX_SECONDS, doc="time budget per move at batch 1")}
AZ_OPTIONS = setting_options()


#: The share of a `seconds=` budget that calibration aims at, leaving room for the machine's load to vary.
BUDGET_SHARE = 0.75
#: A `seconds=` budget is calibrated separately for this many phases of a game (by the pieces on the board), so
#: the cheap phases search more than the slowest one allows.
BUDGET_PHASES = 3


@dataclass(frozen=True)
class Budget:
    """Simulations a move by phase of the game: phase `i` starts once `starts[i]` pieces are on the board (all
    colours together; `starts[0]` is 0) and searches `sims[i]` simulations."""

    starts: tuple[int, ...]
    sims: tuple[int, ...]

    def phase(self, state: State) -> jax.Array:
        """`int32`: the phase of `state` (unbatched)."""
        placed = state.pieces_placed.sum()
        return sum((placed >= start).astype(jnp.int32) for start in self.starts[1:]) + jnp.int32(0)

    def sims_at(self, state: State) -> jax.Array:
        """`int32`: the simulations of `state`'s phase (unbatched)."""
        return jnp.asarray(self.sims, jnp.int32)[self.phase(state)]

    def describe(self) -> str:
        """The budget in words (`"312 simulations a move"`, or one figure per phase)."""
        if len(set(self.sims)) == 1:
            return f"{self.sims[0]} simulations a move"
        phases = ", ".join(f"{n} from {start} pieces on the board" for start, n in zip(self.starts, self.sims))
        return f"simulations a move by phase: {phases}"


#: A time-budgeted search played one game at a time (`one_game`) stops starting simulations once this share of
#: its `seconds=` budget has passed since they started; the root's evaluation, the last chunk of simulations and
#: the call come on top.
CLOCK_SHARE = 0.85
#: On the clock, a phase searches at most this multiple of its calibrated simulations (its tree holds them). At 1 the
#: clock only lowers the calibrated count, where a position or a loaded machine is slower than calibrated: on Duo,
#: planning for up to 3 times it (a mean of 1.43 s a move instead of 1.01 s) won 0.355 of 100 games against Pentobi
#: level 5, and 1.5 times it fixed won 0.370, where the calibrated count won 0.425 of the same 100: more simulations
#: are not what `strong` lacks (docs/strength.md).
CLOCK_CAP = 1.0


def on_the_clock(budget: Budget) -> Budget:
    """The most simulations of each phase of `budget` when the search runs on the clock (`CLOCK_CAP` times the
    calibrated ones): the calibration's counts fit its slowest positions at `BUDGET_SHARE` of the time, and on the
    clock the search plans for what `CLOCK_SHARE` of it affords, up to these."""
    return Budget(budget.starts, tuple(min(MAX_SIMS, int(n * CLOCK_CAP)) for n in budget.sims))


def clocked(build: Callable[..., Callable], seconds: float, budget: Budget) -> Callable:
    """The search of `budget` on the clock: `build(sims, stop_after, cap)` built once, its tree sized for the
    largest phase and each phase's count a traced cap (`Budget.sims_at`), so one program serves every phase where
    `phased` compiles a search per phase; it stops starting simulations at `CLOCK_SHARE` of `seconds`.

    Args:
        build: `build(sims, stop_after=..., cap=...)`, a builder that returns one object per arguments (so that
            callers share its compilation).
        seconds: The time budget a move.
        budget: The most simulations of each phase (`on_the_clock` of the calibrated budget).

    Returns:
        The search function of `build`.
    """
    cap = None if len(set(budget.sims)) == 1 else budget
    return build(max(budget.sims), stop_after=CLOCK_SHARE * seconds, cap=cap)


#: Calibrated budgets, by (variant, agent options, seconds, machine); calibrating costs a few compilations.
_CALIBRATED: dict[tuple, Budget] = {}

#: Each step of a calibration (compiling, timing) is logged at INFO here, so that a program can show its progress
#: (`blokus-jax play` prints these lines while the first hint calibrates).
calibration_log = logging.getLogger("blokus_agents.search.mcts.calibration")


def calibrated_sims() -> list[int]:
    """The simulation counts that the `seconds=` budgets calibrated so far in this process came to, oldest first
    (the largest phase's count of a phased budget; `calibrated_budgets` has every phase)."""
    return [max(budget.sims) for budget in _CALIBRATED.values()]


def calibrated_budgets() -> list[Budget]:
    """The `Budget` of every `seconds=` budget calibrated so far in this process, oldest first (what a
    time-budgeted agent actually searched, for a match's record)."""
    return list(_CALIBRATED.values())


#: The phased searches built so far, by (builder, budget), so that the policies of one budget share one function.
_PHASED: dict[tuple[Callable, Budget], Callable] = {}


def phased(build: Callable[[int], Callable], budget: Budget) -> Callable:
    """The search of `budget`: `build(sims)` is a search function whose last argument is the (unbatched) state;
    the result calls the one of the state's phase (`jax.lax.switch`: at batch 1 only that branch runs; under
    `vmap`, as in the arena, every branch runs and the phase's result is kept)."""
    if (build, budget) in _PHASED:  # the same function object, so that its compilations are shared
        return _PHASED[build, budget]
    branches = [build(n) for n in budget.sims]
    if len(set(budget.sims)) == 1:
        return branches[0]

    def search(*args):
        return jax.lax.switch(budget.phase(args[-1]), branches, *args)

    _PHASED[build, budget] = search
    return search


def _calibration_positions(env: Env) -> list[State]:
    """Positions of one random game at every phase where a search has a choice: the start (the longest playouts)
    and every few moves after it while at least two actions are legal (narrow late positions grow deep trees)."""
    step, sample = jax.jit(env.step), jax.jit(env.sample_action)
    state, positions, t = env.init(jax.random.key(0)), [], 0
    while not bool(state.terminated):
        if t % (2 * env.num_colors) == 0 and int(state.legal_action_mask.sum()) > 1:
            positions.append(state)
        state, t = step(state, sample(jax.random.key(100 + t), state)), t + 1
    return positions


def _move_times(policy: Callable[[jax.Array, State], jax.Array], states: list[State]) -> list[float]:
    """Seconds a move of the batch-1 `policy` at each of `states` after compiling it (median of three)."""
    act = jax.jit(policy)
    jax.block_until_ready(act(jax.random.key(1), states[0]))  # compile
    medians = []
    for state in states:
        times = []
        for i in range(3):
            start = time.perf_counter()
            jax.block_until_ready(act(jax.random.key(2 + i), state))
            times.append(time.perf_counter() - start)
        medians.append(sorted(times)[1])
    return medians


def _check_seconds(seconds: float) -> float:
    seconds = float(seconds)
    if not 0 < seconds <= MAX_SECONDS:
        raise VariantError(f"seconds must be a time budget in (0, {MAX_SECONDS:g}] seconds per move, got {seconds!r}")
    return seconds


def calibrate_sims(
    env: Env,
    build: Callable[[int], Callable[[jax.Array, State], jax.Array]],
    seconds: float,
    cache_key: tuple = (),
    probe: int = 32,
    max_sims: int = MAX_SIMS,
) -> int:
    """The simulations a batch-1 search built by `build(sims) -> policy` runs in `BUDGET_SHARE * seconds` on
    this machine in every phase of a game: `calibrate_budget` with a single phase.

    Args:
        env: The environment.
        build: `build(sims) -> policy`, the search of `sims` simulations a move.
        seconds: The time budget a move, a positive finite number of seconds.
        cache_key: The agent's other settings, part of the calibration's cache key.
        probe: The simulations of the probe search that times a simulation.
        max_sims: The most simulations returned.

    Returns:
        The simulations a move.

    Raises:
        VariantError: A budget that is not a positive finite number of seconds.
    """
    return calibrate_budget(env, build, seconds, cache_key, probe, max_sims, phases=1).sims[0]


def calibrate_budget(
    env: Env,
    build: Callable[[int], Callable[[jax.Array, State], jax.Array]],
    seconds: float,
    cache_key: tuple = (),
    probe: int = 32,
    max_sims: int = MAX_SIMS,
    phases: int = BUDGET_PHASES,
) -> Budget:
    """The `Budget` of `phases` phases whose batch-1 search (`phased` over `build(sims) -> policy`) takes at most
    `BUDGET_SHARE * seconds` a move on this machine in each phase, measured after compilation on positions of every
    phase of a game (the slowest position of a phase or next to it counts; forced moves return at once): a probe
    search of `probe` simulations gives the time per simulation at each position, and each phase's count is
    extrapolated from its slowest one. Played one game at a time (`one_game`), the search also reads the clock and
    stops at `CLOCK_SHARE` of the budget, with up to `CLOCK_CAP` times these counts. Cached per `cache_key`,
    variant, budget, `probe`, `max_sims` and `phases` in this process and, with a store (`use_calibration_store`,
    as `blokus-jax` commands set one), also on this machine across processes (JAX version, device and CPU in the
    key); each step is logged on `calibration_log`
    with the time so far and, once known, an estimate of the time left (`calibration_remaining`).

    Args:
        env: The environment.
        build: `build(sims) -> policy`, the search of `sims` simulations a move.
        seconds: The time budget a move, a positive finite number of seconds.
        cache_key: The agent's other settings, part of the calibration's cache key.
        probe: The simulations of the probe search that times a simulation.
        max_sims: The most simulations a phase gets.
        phases: The phases of the game calibrated separately.

    Returns:
        The `Budget`: the pieces on the board at which each phase starts and its simulations a move.

    Raises:
        VariantError: A budget that is not a positive finite number of seconds.
    """
    seconds = _check_seconds(seconds)
    key = (env.variant, cache_key, seconds, probe, max_sims, phases, jax.default_backend())
    if key in _CALIBRATED:
        return _CALIBRATED[key]
    kept = calibration_store.stored(key)
    stored = None if kept is None else Budget(*kept)
    if stored is not None:
        _CALIBRATED[key] = stored
        calibration_log.info(
            "%s s budget on %s: calibrated here before (%s)", seconds, env.variant.name, stored.describe()
        )
        return stored
    started = time.perf_counter()
    _PROGRESS.update(started=started, expected=calibration_store.typical_seconds(env.variant.name))

    def step(message: str) -> None:
        left = calibration_remaining()
        estimate = f", about {left:.0f} s left" if left is not None else ""
        calibration_log.info("%s (%.0f s so far%s)", message, time.perf_counter() - started, estimate)

    try:
        budget = _calibrate(env, build, seconds, probe, max_sims, phases, step)
    finally:
        _PROGRESS.update(started=None, expected=None)
    _CALIBRATED[key] = budget
    calibration_store.store(key, budget.starts, budget.sims, time.perf_counter() - started, env.variant.name)
    step(f"calibrated: {budget.describe()}")
    return budget


def _calibrate(
    env: Env,
    build: Callable[[int], Callable[[jax.Array, State], jax.Array]],
    seconds: float,
    probe: int,
    max_sims: int,
    phases: int,
    step: Callable[[str], None],
) -> Budget:
    """The measurement of `calibrate_budget` (not cached)."""
    step(f"calibrating a {seconds:g} s budget on {env.variant.name}: playing a game for positions to time")
    states = _calibration_positions(env)
    target = BUDGET_SHARE * seconds
    groups = [g for g in np.array_split(np.arange(len(states)), min(phases, len(states))) if len(g)]
    starts = tuple(int(states[g[0]].pieces_placed.sum()) for g in groups)
    # A phase is fitted to its own positions and the nearest one of each neighbouring phase: which phase a position
    # falls in depends on the game, and the cost of a simulation changes fastest across a phase's boundary.
    fitted = [range(max(0, g[0] - 1), min(len(states), g[-1] + 2)) for g in groups]
    starts = (0,) + starts[1:]

    def fit(times: list[float], sims: tuple[int, ...]) -> tuple[int, ...]:
        slowest = [max(times[i] for i in g) for g in fitted]
        return tuple(int(min(max_sims, max(1, n * target / t))) if t > 0 else n for n, t in zip(sims, slowest))

    step(f"compiling a {probe}-simulation probe search and timing it on {len(states)} positions")
    # The fitted counts extrapolate the probe's time a simulation and are not timed again: a search played one game
    # at a time also reads the clock (`one_game`), which ends every move in time whatever the extrapolation's error.
    return Budget(starts, fit(_move_times(build(probe), states), (probe,) * len(groups)))


def network_search_policy(
    env: Env, apply_fn: Callable, params: Any, settings: SearchSettings = NETWORK_SETTINGS
) -> ParamPolicy:
    """Gumbel MuZero search guided by a policy-value network (the `network` evaluator).

    `gumbel_scale=0` plays the search's best move; self-play training wants `gumbel_scale=1` (exploration, and
    the policy-improvement guarantee of Gumbel sampling). `mix > 0` mixes playouts into the leaf values
    (`mixed_evaluator` with `playouts`, `playout` and `margin`; unused at `mix=0`). `seconds=S > 0` replaces
    `sims` by a time budget, as for `mcts_policy`: the simulations one batch-1 search with these `params` runs
    in at most `S` seconds on this machine in each phase of the game (`calibrate_budget`, cached per network
    architecture and options), and its `one_game` form reads the clock as it searches (`ParamPolicy.timed`).

    Args:
        env: The environment.
        apply_fn: The network, `apply_fn(params, obs) -> (logits, value)`.
        params: The network's parameters.
        settings: The search settings; default `NETWORK_SETTINGS` (`SearchSettings`' defaults, a network's
            search).

    Returns:
        A `ParamPolicy` (a policy `(key, state) -> int32` whose `params` the arena passes into its compiled
        match).

    Raises:
        ValueError: `settings.seconds` is neither 0 nor from `MIN_SECONDS` to `MAX_SECONDS`.
    """
    check_budget({"seconds": settings.seconds})
    o = settings
    evaluator = mixed_evaluator(env, apply_fn, o.mix, playouts=o.playouts, playout=o.playout, margin=o.margin)
    if o.prior == "model":
        evaluator = model_evaluator(env, evaluator, shipped_model(env.variant.name))

    def build(
        n: int, stop_after: float = 0.0, cap: Budget | None = None
    ) -> Callable[[Any, jax.Array, State], jax.Array]:
        settings = {"sims": n, "k": o.k, "considered": o.considered, "gumbel_scale": o.gumbel_scale}
        cap_fn = None if cap is None else cap.sims_at
        return _single(make_search(env, evaluator, stop_after=stop_after, cap=cap_fn, **settings))

    if o.seconds:
        # The cost of a simulation depends on the network's architecture (its repr names every layer size), not on
        # the values of its weights.
        network = repr(getattr(apply_fn, "__self__", apply_fn))
        options = (network, o.k, o.considered, o.gumbel_scale, o.mix, o.playouts, o.playout, o.margin, o.prior)
        built: dict[tuple[int, float, Budget | None], Callable[[Any, jax.Array, State], jax.Array]] = {}

        def build_search(
            n: int, stop_after: float = 0.0, cap: Budget | None = None
        ) -> Callable[[Any, jax.Array, State], jax.Array]:
            # One search function per budget, so the calibration's compilation of the chosen one is reused.
            if (n, stop_after, cap) not in built:
                built[n, stop_after, cap] = build(n, stop_after, cap)
            return built[n, stop_after, cap]

        def build_policy(n: int) -> Callable[[jax.Array, State], jax.Array]:
            return functools.partial(build_search(n), params)

        budget = calibrate_budget(env, build_policy, o.seconds, ("network",) + options)
        timed = clocked(build_search, o.seconds, on_the_clock(budget))
        return ParamPolicy(phased(build_search, budget), params, timed=timed)
    return ParamPolicy(build(o.sims), params)


@takes_settings(NETWORK_SETTINGS)
def az_policy(env: Env, run_dir: str, **settings: Any) -> ParamPolicy:
    """The agent `az:RUN_DIR` (`az:runs/duo,sims=64`, `az:runs/duo,mix=0.5`): the newest checkpoint of a
    training run directory played with `network_search_policy`. An AlphaZero run directory given as an agent
    plays the same way.

    Args:
        env: The environment.
        run_dir: The training run directory.
        **settings: Every search setting (`SETTING_NAMES`), each with its default and range as `SearchSettings`
            declares it. `sims` is the play budget, independent of the `sims` an AlphaZero run trained with;
            `seconds` a time budget a move instead of `sims` (0: off).

    Returns:
        The `ParamPolicy` of `network_search_policy`.

    Raises:
        CheckpointError: The run's checkpoint is corrupt or was trained on another variant.
        AgentSpecError: The run directory holds no checkpoint.
    """
    require_agent_run(run_dir, f"az:{run_dir}")
    network, params = load_network(run_dir, env)
    return network_search_policy(env, network.apply, params, SearchSettings(**settings))


def _teacher_settings(env: Env, spec: str) -> dict[str, Any]:
    """Every `mcts_policy` setting of a teacher spec (the spec's options over the defaults), checked as
    `teacher_search` documents; raises `AgentSpecError`."""
    name, options = agent_options(spec, env)
    if name != "mcts":
        raise AgentSpecError(
            f"teacher {spec!r}: a teacher is the network-free search 'mcts' with its options (e.g. "
            f"'mcts:sims=64,playouts=4'), whose moves and visit weights the network learns from"
        )
    fixed = sorted({"k", "gumbel_scale", "seconds"} & set(options))
    if fixed:
        raise AgentSpecError(
            f"teacher {spec!r}: {', '.join(fixed)} cannot be set for a teacher: the run's k sizes its stored "
            f"targets, its gumbel_scale and root_noise explore, and a time budget would make training depend on the "
            f"machine (give sims)"
        )
    defaults = {n: p.default for n, p in inspect.signature(mcts_policy).parameters.items() if n != "env"}
    return {**defaults, **options}


def teacher_search(
    env: Env, spec: str, *, k: int, gumbel_scale: float, root_noise: float, root_alpha: float
) -> Callable[[Any, jax.Array, State], SearchOutput]:
    """The batched search of an AlphaZero run's `teacher` (an `mcts` agent spec, `mcts:sims=64,playouts=4`):
    `make_search` with the `rollout` evaluator and the spec's settings (the defaults of `mcts_policy`
    for those not given), `(params, key, states) -> SearchOutput` like the network's search (`params` unused).
    The run's `k` sizes the stored targets and its `gumbel_scale`, `root_noise` and `root_alpha` explore, so the
    spec may not set `k` or `gumbel_scale`, nor `seconds` (a time budget would make the run depend on the machine).

    Args:
        env: The environment.
        spec: The teacher's agent spec, `mcts` with its options.
        k: The run's candidates a node, the width of the stored targets.
        gumbel_scale: The run's Gumbel noise at the root.
        root_noise: The run's weight of Dirichlet noise in the root's prior (see `make_search`).
        root_alpha: The run's Dirichlet concentration of `root_noise`.

    Returns:
        The batched search, `(params, key, states) -> SearchOutput` (`params` unused).

    Raises:
        AgentSpecError: Any other agent than `mcts`, an option it may not set, or a bad option.
    """
    o = _teacher_settings(env, spec)
    evaluator = mcts_evaluator(
        env,
        o["prior"],
        playouts=o["playouts"],
        playout=o["playout"],
        temperature=o["temperature"],
        margin=o["margin"],
        centre=o["centre"],
    )
    return make_search(
        env,
        evaluator,
        sims=o["sims"],
        k=k,
        considered=o["considered"],
        gumbel_scale=gumbel_scale,
        root_noise=root_noise,
        root_alpha=root_alpha,
        value_scale=o["value_scale"],
    )


def teacher_memory(env: Env, spec: str, k: int) -> int:
    """Estimated bytes of one game's teacher search (`teacher_search` of `spec` with the run's `k`): its
    tree and playouts, as `blokus_agents.core.options.search_bytes` counts them but without XLA's working copies
    (a lower estimate, like the trainer's other parts).

    Args:
        env: The environment.
        spec: The teacher's agent spec, `mcts` with its options.
        k: The run's candidates a node (at most the variant's placements count).

    Returns:
        The estimate in bytes.

    Raises:
        AgentSpecError: A bad spec (as for `teacher_search`).
    """
    o = _teacher_settings(env, spec)
    return search_bytes(env, o["sims"], min(k, env.pass_action), o["playouts"]) // XLA_OVERHEAD


#: The search settings of the agent `strong` (its budget is `seconds`), chosen by the matches of
#: `benchmarks/RESULTS.md` ("Search that scales"): today's default settings, except where a variant has measured
#: better ones at the same time a move (`STRONG_BY_VARIANT`, `STRONG_SPECS`).
STRONG = {
    name: getattr(MCTS_SETTINGS, name) for name in ("k", "playouts", "playout", "considered", "margin", "gumbel_scale")
}
#: Variant name -> the `mcts` settings of `strong` there. Duo: 64 candidates a node, 32 at the root and the centre
#: prior, the setting whose strength rises with its simulations, which beat `STRONG` at the same 2 s a move.
#: Classic (4 players): the same 64 and 32 candidates (the centre prior was not measured there), which beat the
#: default settings at 2 s a move where `STRONG` with the same budget did not, ranked and weighted by the
#: variant's fitted move model (`prior=model`), which lifted its first-place share against three Pentobi level-3
#: seats from 0.235 to 0.46 of 100 games at the same 2 s a move. Classic for two players: the same, which
#: lifted it against Pentobi's `classic_2` level 4 from 0.19 to 0.61 of 100 games (docs/strength.md).
STRONG_BY_VARIANT = {
    "duo": {**STRONG, "k": 64, "considered": 32, "centre": 1.0},
    "classic": {**STRONG, "k": 64, "considered": 32, "prior": "model"},
    "classic_2p": {**STRONG, "k": 64, "considered": 32, "prior": "model"},
}
#: Variant name -> an agent spec that `strong` plays there instead of `mcts`, with `strong`'s time budget
#: added (`seconds=S`): a shipped network guiding the search where that beat the network-free search at the same
#: time a move. Duo: `baseline:duo` (its network's prior and half its value head, half 8 `local` playouts, which
#: measured stronger against Pentobi than greedy ones at the same 2 s a move) over 64 candidates a node, 32 at the
#: root, ranked and weighted by the fitted move model over the network's logits (`prior=model`, which lifted its
#: result against Pentobi level 4 from 0.25 to about 0.6 at the same simulations, docs/strength.md).
STRONG_SPECS = {"duo": "baseline:duo,k=64,considered=32,playout=local,prior=model"}


def strong_settings(env: Env) -> dict[str, Any]:
    """The `mcts_policy` settings of the agent `strong` on `env`'s variant (budget aside) where it plays
    `mcts`; a fresh dict, so a caller that edits it does not change `strong` for the rest of the process."""
    return dict(STRONG_BY_VARIANT.get(env.variant.name, STRONG))


def strong_spec(env: Env, seconds: float = STRONG_SECONDS) -> str:
    """The agent spec that `strong:seconds=S` plays on `env`'s variant: `STRONG_SPECS`'s with the budget
    added, else `mcts` with `strong_settings` and the budget."""
    if env.variant.name in STRONG_SPECS:
        return f"{STRONG_SPECS[env.variant.name]},seconds={float(seconds)!r}"
    options = {**strong_settings(env), "seconds": float(seconds)}
    return "mcts:" + ",".join(f"{name}={value}" for name, value in options.items())


def strong_policy(env: Env, *, seconds: float = STRONG_SECONDS) -> Policy:
    """The agent `strong` (`strong`, `strong:seconds=5`): the best player of the project at `seconds` a move
    on this machine, on every variant: the agent of `strong_spec` (on Duo the shipped network's search, else
    `mcts_policy` with `strong_settings`) with that time budget (the simulations are calibrated once per
    process, which costs two extra compilations)."""
    if env.variant.name in STRONG_SPECS:
        return resolve_agent(strong_spec(env, seconds), env)
    return mcts_policy(env, seconds=seconds, **strong_settings(env))


def strong_memory(env: Env, options: dict) -> int:
    """Estimated bytes of one game of `strong` with `options` where it plays `mcts`; 0 where it plays an agent
    of `STRONG_SPECS`, whose own estimate is checked when `strong_policy` resolves it."""
    if env.variant.name in STRONG_SPECS:
        return 0
    return search_memory(env, {**strong_settings(env), **options})


def search_memory(env: Env, options: dict) -> int:
    """Estimated bytes of one game's search with `options` (`blokus_agents.core.options.search_bytes`)."""
    sims = MAX_SIMS if options.get("seconds") else options["sims"]
    return search_bytes(env, sims, min(options["k"], env.pass_action), options.get("playouts", 0))


def az_memory(env: Env, options: dict) -> int:
    """Estimated bytes of one game's `az:` search with `options`: the tree, and playouts only when `mix > 0`."""
    return search_memory(env, {**options, "playouts": options["playouts"] if options["mix"] else 0})


__all__ = [
    "AZ_OPTIONS",
    "MCTS_OPTIONS",
    "MCTS_SETTINGS",
    "MCTS_SETTING_NAMES",
    "mcts_evaluator",
    "network_free_model",
    "NETWORK_SETTINGS",
    "SearchSettings",
    "SEARCH_OPTIONS",
    "STRONG",
    "STRONG_BY_VARIANT",
    "STRONG_SPECS",
    "STRONG_OPTIONS",
    "SearchOutput",
    "az_memory",
    "az_policy",
    "BUDGET_PHASES",
    "Budget",
    "calibrate_budget",
    "calibrate_sims",
    "calibrated_budgets",
    "CLOCK_CAP",
    "CLOCK_SHARE",
    "clocked",
    "on_the_clock",
    "phased",
    "make_search",
    "mcts_policy",
    "mixed_evaluator",
    "network_search_policy",
    "rollout_evaluator",
    "search_memory",
    "strong_policy",
    "strong_memory",
    "strong_settings",
    "strong_spec",
    "teacher_memory",
    "teacher_search",
]
