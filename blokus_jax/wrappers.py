"""Environment wrappers in the gymnax style: generic functions around any env with pure ``init`` / ``step``.

:class:`AutoReset` turns an env into one whose ``step`` starts a fresh game in place of a finished one, the building
block of endless batched rollouts (``jax.vmap(AutoReset(env).step)``). It knows nothing about Blokus: it needs an
``init(key)`` and a ``step(state, action)`` whose states carry boolean ``terminated`` / ``truncated`` and a
``rewards`` array.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


class AutoReset:
    """``env`` whose :meth:`step` resets finished games; every other attribute is the wrapped env's."""

    def __init__(self, env: Any):
        self.env = env

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def step(self, state: Any, action: jax.Array, key: jax.Array | None = None) -> tuple[Any, jax.Array, jax.Array]:
        """Step, and put ``env.init(key)`` in place of a game that ended (terminated or truncated) in this step.

        Returns ``(next_state, rewards, done)``: ``rewards`` and ``done`` describe the step just taken and
        ``next_state`` is the initial position wherever ``done``. Works on one game (vmap it) or on a batch of
        states with leading axes matching ``done``.
        """
        stepped = self.env.step(state, action)
        done = stepped.terminated | stepped.truncated
        start = self.env.init(key)

        def pick(fresh: jax.Array, kept: jax.Array) -> jax.Array:
            return jnp.where(done.reshape(done.shape + (1,) * (kept.ndim - done.ndim)), fresh, kept)

        return jax.tree.map(pick, start, stepped), stepped.rewards, done
