"""Environment wrappers in the gymnax style: generic functions around any env with pure `init` / `step`.

`AutoReset` turns an env into one whose `step` starts a fresh game in place of a finished one, the building
block of endless batched rollouts (`jax.vmap(AutoReset(env).step)`). It knows nothing about Blokus: it needs an
`init(key)` and a `step(state, action)` whose states carry boolean `terminated` / `truncated` and a
`rewards` array.

An env whose states carry costly derived fields may split its step into `advance(state, action)` (the new state
with those fields stale) and `refresh(state)` (recompute them), with `step = refresh(advance(...))`. The wrapper
then selects the initial state *before* `refresh`, so the derived fields are computed once per step and never
selected (for Blokus the derived field is the packed legal mask, most of a step's cost).
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


class AutoReset:
    """`env` whose `step` resets finished games; every other attribute is the wrapped env's.

    Args:
        env: The environment to wrap (an `Env`, or anything with its `init` and `step`).
    """

    def __init__(self, env: Any):
        self.env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def step(self, state: Any, action: jax.Array, key: jax.Array | None = None) -> tuple[Any, jax.Array, jax.Array]:
        """Step, and put `env.init(key)` in place of a game that ended (terminated or truncated) in this step.

        Works on one game (vmap it) or on a batch of states with leading axes matching `done`.

        Args:
            state: The position (or a batch of them).
            action: The action to play (one per game).
            key: The PRNG key of the fresh game; may be `None` (Blokus has no chance moves).

        Returns:
            `(next_state, rewards, done)`: `rewards` and `done` describe the step just taken and `next_state` is
            the initial position wherever `done`.
        """
        split = hasattr(self.env, "advance") and hasattr(self.env, "refresh")
        stepped = self.env.advance(state, action) if split else self.env.step(state, action)
        done = stepped.terminated | stepped.truncated
        start = self.env.init(key)

        def pick(fresh: jax.Array, kept: jax.Array) -> jax.Array:
            return jnp.where(done.reshape(done.shape + (1,) * (kept.ndim - done.ndim)), fresh, kept)

        next_state = jax.tree.map(pick, start, stepped)
        return (self.env.refresh(next_state) if split else next_state), stepped.rewards, done
