"""The NumPy boundary shared by the Gymnasium and PettingZoo adapters: action validation, the error that explains a
rejected action, opponent policies by name, and the observation conversion.

Validation is cheap on the hot path: the adapters keep the host copy of the current legal mask that they return to
the caller anyway, so a legal action costs one array lookup. Only when an action is rejected is the reason worked out
(host side, with `blokus_jax.io.records.explain_illegal`; the legality decision itself is always the core's mask).
"""

from __future__ import annotations

import functools
import numbers
import os
from collections.abc import Callable, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax.env import Env, State
from blokus_jax.errors import ActionTypeError, ConfigError, IllegalActionError

#: A pure JAX policy `(key, state) -> int32 action`, the convention of `blokus_agents.players.bots`.
Policy = Callable[[jax.Array, State], jax.Array]

#: Machine-readable values of `RejectedActionError.reason`.
REASONS = ("dtype", "shape", "out_of_range", "game_over", "not_your_turn", "illegal")


class RejectedActionError(IllegalActionError):
    """An action refused at the adapter boundary; the environment is left exactly as it was.

    `reason` is one of `REASONS`: `"dtype"` (not an integer), `"shape"` (not a scalar, or a batch of
    the wrong shape), `"out_of_range"`, `"game_over"` (step after the end; call `reset()`),
    `"not_your_turn"` (another agent is to move) or `"illegal"` (a placement that breaks a rule, or a pass while
    a placement exists; the message says which rule: occupied squares, an edge shared with the own colour, no
    corner contact or a missed start square, a piece already used). `action` is the offending value.
    """

    def __init__(self, message: str, action: Any, reason: str):
        super().__init__(message)
        self.action = action
        self.reason = reason


def action_index(action: Any, num_actions: int) -> int:
    """The action as a Python `int` after checking that it is one integer scalar in `[0, num_actions)`.

    Accepts Python ints and NumPy/JAX integer scalars or 0-d arrays; raises `RejectedActionError` (reason
    `dtype`, `shape` or `out_of_range`) for anything else, including floats and bools.
    """
    if isinstance(action, (bool, np.bool_)):
        raise RejectedActionError(
            f"action {action!r} is a bool; pass an integer index in [0, {num_actions})", action, "dtype"
        )
    if isinstance(action, numbers.Integral):
        value = int(action)
    else:
        arr = np.asarray(action) if hasattr(action, "dtype") else None
        if arr is None or not np.issubdtype(arr.dtype, np.integer):
            kind = type(action).__name__ if arr is None else f"an array of dtype {arr.dtype}"
            raise RejectedActionError(
                f"action {action!r} is {kind}; pass an integer index in [0, {num_actions})", action, "dtype"
            )
        if arr.shape != ():
            raise RejectedActionError(
                f"action {action!r} has shape {arr.shape}; pass one integer index (shape ())", action, "shape"
            )
        value = int(arr)
    if not 0 <= value < num_actions:
        raise RejectedActionError(
            f"action {value} is out of range [0, {num_actions}); the last index {num_actions - 1} is the pass",
            action,
            "out_of_range",
        )
    return value


def action_batch(actions: Any, num_envs: int, num_actions: int) -> np.ndarray:
    """`int32[num_envs]` actions after checking dtype, shape and range; raises `RejectedActionError` naming the
    first bad sub-environment.

    Args:
        actions: One action per sub-environment (a sequence or an array of integers).
        num_envs: The number of sub-environments, the shape `(num_envs,)` the actions must have.
        num_actions: The action count; every action must lie in `[0, num_actions)`.

    Returns:
        The actions as an `int32[num_envs]` NumPy array.

    Raises:
        RejectedActionError: Not integers (reason `dtype`, bools included), not of shape `(num_envs,)`
            (`shape`), or an action out of range (`out_of_range`, naming the first such sub-environment).
    """
    arr = np.asarray(actions)
    if not np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_:
        raise RejectedActionError(
            f"actions have dtype {arr.dtype}; pass integer indices in [0, {num_actions})", actions, "dtype"
        )
    if arr.shape != (num_envs,):
        raise RejectedActionError(
            f"actions have shape {arr.shape}; pass one index per sub-environment, shape ({num_envs},)", actions, "shape"
        )
    bad = np.flatnonzero((arr < 0) | (arr >= num_actions))
    if bad.size:
        i = int(bad[0])
        raise RejectedActionError(
            f"sub-environment {i}: action {int(arr[i])} is out of range [0, {num_actions})", actions, "out_of_range"
        )
    return arr.astype(np.int32)


def rejection(env: Env, state: State, action: int, prefix: str = "") -> RejectedActionError:
    """The `RejectedActionError` for an in-range `action` that the mask of `state` (one unbatched game) does not
    allow, with the rule it breaks spelled out. Call it only after the mask said no.

    Args:
        env: The environment the state belongs to.
        state: One unbatched game.
        action: The refused action index.
        prefix: Put before the message, e.g. `"sub-environment 3: "`.

    Returns:
        The error (not raised), with reason `game_over` when the game has ended, and otherwise `illegal` with
        the rule broken (from `blokus_jax.io.records.explain_illegal`).
    """
    from blokus_jax.io.records import explain_illegal

    over = bool(state.terminated) or bool(state.truncated)
    why = "the game is over; call reset() to start a new one" if over else explain_illegal(env.variant, state, action)
    return RejectedActionError(f"{prefix}action {action} is illegal: {why}", action, "game_over" if over else "illegal")


def resolve_policy(spec: str | Policy | None, env: Env) -> Policy:
    """A pure JAX policy from an agent spec (`"greedy"`, `"minimax:k=8"`, a run directory, ... resolved with
    `blokus_agents.core.policies.resolve_agent`, imported lazily), a policy callable (wrapped by
    `checked_policy`) or `None` (the uniform random policy)."""
    if spec is None or spec == "random":
        return env.sample_action
    if callable(spec):
        return checked_policy(spec)
    if not isinstance(spec, str):
        raise ConfigError(f"opponent {spec!r} is neither an agent spec nor a policy callable (key, state) -> action")
    try:
        from blokus_agents.core.policies import resolve_agent
    except ImportError as exc:
        raise ImportError(
            f"opponent bot {spec!r} needs the `blokus_agents` package of blokus-jax (install the project "
            f"with `pip install -e .`), or pass a policy callable (key, state) -> action"
        ) from exc
    return resolve_agent(spec, env)


@functools.cache
def _reference_env() -> Env:
    """The env whose board bounds agent options when no game is known yet: `classic`, the registered variant
    with the most placements (so a bound such as `k <= placements` is the loosest one)."""
    from blokus_jax.env import make

    return make("classic")


def check_agent_spec(spec: Any, owner: str = "agent") -> None:
    """Check an agent spec before any game is known, as far as that is possible: a callable or `None` (random)
    passes; anything else must be a non-empty string. A registered agent's name and options are checked as
    `blokus_agents.core.policies.agent_options` checks them, option bounds that depend on the board taken on
    `classic` (the loosest); a spec that names run directories needs them to exist; a shipped baseline and a run's
    checkpoint are read later, against the game's variant. Raises `ConfigError` (type,
    empty) or `AgentSpecError` (unknown agent, bad option, missing run directory); builds nothing."""
    if spec is None or callable(spec):
        return
    if not isinstance(spec, str):
        raise ConfigError(
            f"{owner}: agent spec {spec!r} is of type {type(spec).__name__}; pass an agent spec string (e.g. 'greedy', "
            f"'mcts:sims=64', a run directory) or a policy callable (key, state) -> action"
        )
    if not spec.strip():
        raise ConfigError(f"{owner}: the agent spec is empty; pass e.g. 'greedy', 'mcts:sims=64' or a run directory")
    if spec == "random":
        return
    try:
        from blokus_agents.core.policies import AgentSpecError, agent_names, agent_options, resolve_agent, spec_paths
    except ImportError as exc:
        raise ImportError(
            f"agent {spec!r} needs the `blokus_agents` package of blokus-jax (install the project with "
            f"`pip install -e .`), or pass a policy callable (key, state) -> action"
        ) from exc
    if spec.partition(":")[0] in agent_names():
        agent_options(spec, _reference_env())
        return
    paths = spec_paths(spec)
    if paths == [spec] and not os.path.isdir(spec):
        resolve_agent(spec, _reference_env())  # not a directory: an unknown agent or a missing run, refused unbuilt
    for path in paths:
        if not os.path.isdir(path):
            raise AgentSpecError(
                f"{owner}: agent {spec!r}: no such run directory {path!r}; check the path (a run directory is the "
                f"--out of 'blokus-jax train')"
            )


def checked_policy(policy: Policy) -> Policy:
    """`policy` with its result checked where it is traced: one integer action (a Python int or an integer
    scalar array), returned as `int32`. Anything else (a float, a bool, an array of several values) raises
    `ActionTypeError` naming what the callable returned, instead of an error from deep
    inside JAX."""

    def checked(key: jax.Array, state: State) -> jax.Array:
        action = policy(key, state)
        dtype = getattr(action, "dtype", None)
        if isinstance(action, bool) or (dtype is None and not isinstance(action, int)):
            kind = type(action).__name__
        elif dtype is not None and (not jnp.issubdtype(dtype, jnp.integer) or jnp.shape(action) != ()):
            kind = f"an array of dtype {dtype} and shape {jnp.shape(action)}"
        else:
            return jnp.asarray(action, jnp.int32)
        raise ActionTypeError(
            f"the opponent policy {getattr(policy, '__name__', policy)!r} returned {kind}; a policy (key, state) "
            f"-> action must return one integer action index (e.g. jnp.int32)"
        )

    return checked


def opponents_identity(spec: Any) -> tuple:
    """A hashable identity of what opponent specs load now (see `blokus_agents.core.policies.spec_identity`): the
    checkpoint folders of every run directory they name, so that a cache keyed on it reloads a retrained run.
    Empty for bot names and callables, and when `blokus_agents` is not installed."""
    specs = spec if isinstance(spec, (list, tuple)) else (spec,)
    try:
        from blokus_agents.core.policies import spec_identity
    except ImportError:
        return ()
    return tuple(spec_identity(s) if isinstance(s, str) else () for s in specs)


def resolve_opponents(spec: str | Policy | None | Sequence[str | Policy | None], env: Env) -> list[Policy]:
    """The opponents' policies in seat order after the learner: one spec is used for every opponent, a sequence
    gives `num_players - 1` specs, the first for the player right after the learner."""
    others = env.num_players - 1
    if isinstance(spec, (list, tuple)):
        if len(spec) != others:
            raise ConfigError(
                f"got {len(spec)} opponents for {env.variant.name!r}, which has {others} opponent "
                f"seats; pass one spec for all or exactly {others}"
            )
        return [resolve_policy(s, env) for s in spec]
    return [resolve_policy(spec, env)] * max(others, 1)


def render_state(state: State, env: Env, render_mode: str | None) -> str | np.ndarray | None:
    """The adapters' `render()`: text for `"ansi"`, an RGB array for `"rgb_array"`, printed text (returning
    `None`) for `"human"`, and `None` without a render mode.

    Args:
        state: The position to draw (fetched to the host first).
        env: The environment the state belongs to.
        render_mode: `"ansi"`, `"rgb_array"`, `"human"` or `None`.

    Returns:
        The text, the RGB array, or `None` (for `"human"` and without a render mode).
    """
    if render_mode is None:
        return None
    from blokus_jax.io import render

    state = jax.device_get(state)
    if render_mode == "rgb_array":
        return render.to_rgb(state, env)
    text = render.to_text(state, env)
    if render_mode == "human":
        print(text)
        return None
    return text
