"""The one batched play loop: `batch` games side by side on device, one jitted `vmap` of a `lax.scan`.

Every place that plays whole games without Python per step uses `make_rollout`: the random-play demo
(`blokus_jax.demo`), the throughput benchmark (`blokus_jax.benchmark`, with auto-reset for endless play)
and batched game recording (`rollout`, whose action history `blokus_jax.io.records.from_rollout` turns
into checked records). Game `b` draws its per-step keys from `split(split(key, batch)[b], num_steps)`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import jax
import jax.numpy as jnp

from blokus_jax.env import Env, State
from blokus_jax.variants import Variant

Policy = Callable[[jax.Array, State], jax.Array]


def max_game_length(variant: Variant) -> int:
    """An upper bound on the steps of any game: every colour places all its pieces and passes once.

    Args:
        variant: The rules.

    Returns:
        The bound, in steps (placements and passes).
    """
    return variant.num_colors * (sum(p.copies for p in variant.pieces) + 1)


def make_rollout(
    env: Env,
    batch: int,
    num_steps: int | None = None,
    policy: Policy | None = None,
    autoreset: bool = False,
    constrain: Callable[[jax.Array], jax.Array] | None = None,
) -> Callable[[jax.Array], tuple[State, jax.Array]]:
    """Build a pure `play(key) -> (states, actions)` that plays a batch of games with a policy. Wrap it in
    `jax.jit` (or call it inside a jitted function).

    Args:
        env: The environment.
        batch: Games played at once.
        num_steps: Steps each; default `max_game_length`, enough to finish any game.
        policy: `policy(key, state) -> action` for one state; default uniform random legal moves
            (`Env.sample_action`).
        autoreset: Restart a finished game at once (`Env.step_autoreset`) and record every action, the endless
            play a throughput measurement wants; without it a finished game stays as it ended (its final
            rewards included) and its later actions read `-1`.
        constrain: Applied to the `[batch]` per-game keys and initial states, e.g. a sharding constraint that
            splits the batch across devices.

    Returns:
        `play(key)`, which returns the final states (leading axis `batch`) and the `int32[batch, num_steps]`
        action history.
    """
    length = max_game_length(env.variant) if num_steps is None else int(num_steps)
    choose = env.sample_action if policy is None else policy

    def body(states: State, keys: jax.Array) -> tuple[State, jax.Array]:
        actions = jnp.asarray(jax.vmap(choose)(keys, states), jnp.int32)
        if autoreset:
            return jax.vmap(env.step_autoreset)(states, actions)[0], actions
        done = states.terminated | states.truncated
        nxt = jax.vmap(env.step)(states, actions)
        keep = lambda a, b: jnp.where(done.reshape(done.shape + (1,) * (a.ndim - 1)), a, b)  # noqa: E731
        return jax.tree.map(keep, states, nxt), jnp.where(done, -1, actions)

    def play(key: jax.Array) -> tuple[State, jax.Array]:
        game_keys = jax.random.split(key, batch)
        if constrain is not None:
            game_keys = constrain(game_keys)
        step_keys = jax.vmap(lambda k: jax.random.split(k, length))(game_keys)  # [batch, length]
        states = jax.vmap(env.init)(game_keys)
        if constrain is not None:
            states = constrain(states)
        states, actions = jax.lax.scan(body, states, jnp.swapaxes(step_keys, 0, 1))
        return states, actions.T

    return play


@functools.lru_cache(maxsize=64)
def _jitted(env: Env, batch: int, num_steps: int | None, policy: Policy | None) -> Callable:
    return jax.jit(make_rollout(env, batch, num_steps, policy))


def rollout(
    env: Env, key: jax.Array, batch: int, policy: Policy | None = None, max_steps: int | None = None
) -> tuple[State, jax.Array]:
    """Play a batch of games at once on device: no Python per step, one compilation per
    `(env, batch, max_steps, policy)`.

    Args:
        env: The environment.
        key: The PRNG key; game `b` draws its per-step keys from `split(split(key, batch)[b], max_steps)`.
        batch: Games played at once.
        policy: `policy(key, state) -> action` for one state; default uniform random legal moves.
        max_steps: Steps each; default `max_game_length`, enough to finish any game.

    Returns:
        The final states (leading axis `batch`) and the `int32[batch, max_steps]` action history, `-1` after a game
        has ended; pass the history to `blokus_jax.io.records.from_rollout`.
    """
    return _jitted(env, int(batch), None if max_steps is None else int(max_steps), policy)(key)
