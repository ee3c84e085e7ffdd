"""The optimiser both trainers use: gradient clipping, Adam and `LinearDecay`, a linearly decaying learning rate
whose horizon lives in the optimiser state, so that a time-limited run refits it without recompiling
(`with_lr_horizon`).

Design notes: `docs/design.md`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

from blokus_agents.players.configs import MAX_UPDATES, RunConfig


class LinearDecayState(NamedTuple):
    """State of `LinearDecay`: optimiser steps taken and the horizon in updates."""

    count: jax.Array
    horizon: jax.Array


#: The largest horizon the schedule's `int32` state holds: longer (open-ended) runs saturate there.
MAX_HORIZON = MAX_UPDATES


@dataclass(frozen=True)
class LinearDecay:
    """An optax stateful schedule: the learning rate of update `u = count // steps_per_update` is
    `optax.linear_schedule` from `init_value` to `end_value` over the fraction `u / horizon` of the run, so
    it is constant within an update. The horizon lives in the schedule's state (not in the compiled function), so a
    time-limited run can fit it after measuring its speed without recompiling (`with_lr_horizon`)."""

    init_value: float
    end_value: float
    steps_per_update: int
    horizon: int

    def init(self) -> LinearDecayState:
        horizon = min(int(self.horizon), MAX_HORIZON)
        return LinearDecayState(jnp.zeros([], jnp.int32), jnp.asarray(horizon, jnp.int32))

    def update(self, state: LinearDecayState, **extra_args) -> LinearDecayState:
        return state._replace(count=optax.safe_increment(state.count))

    def __call__(self, state: LinearDecayState, **extra_args) -> jax.Array:
        return self.at(state.count // self.steps_per_update, state.horizon)

    def at(self, update: jax.Array, horizon: jax.Array) -> jax.Array:
        """The learning rate of update number `update` with `horizon` updates."""
        progress = jnp.minimum(update / jnp.maximum(horizon, 1), 1.0)
        return optax.linear_schedule(self.init_value, self.end_value, transition_steps=1)(progress)


def lr_schedule(config: RunConfig) -> LinearDecay:
    """The `LinearDecay` of `config` (`learning_rate` down to `final_lr_fraction` of it over
    `num_updates` updates of `optimizer_steps_per_update` optimiser steps)."""
    return LinearDecay(
        config.learning_rate,
        config.learning_rate * config.final_lr_fraction,
        config.optimizer_steps_per_update,
        config.num_updates,
    )


def make_optimizer(config: RunConfig) -> optax.GradientTransformation:
    """Gradient clipping by global norm, Adam, and the learning rate of `lr_schedule`, injected as a
    hyperparameter (read it as `opt_state.hyperparams`). Any config with `learning_rate`, `final_lr_fraction`,
    `max_grad_norm`, `optimizer_steps_per_update` and `num_updates` will do (PPO's and AlphaZero's)."""

    def adam(learning_rate):
        return optax.chain(
            optax.clip_by_global_norm(config.max_grad_norm),
            optax.scale_by_adam(eps=1e-5),
            optax.scale_by_learning_rate(learning_rate),
        )

    return optax.inject_hyperparams(adam)(learning_rate=lr_schedule(config))


def lr_horizon(runner: Any) -> int:
    """Updates over which `runner`'s learning rate decays (kept in the schedule's state inside `opt_state`)."""
    return int(runner.opt_state.hyperparams_states["learning_rate"].horizon)


def with_lr_horizon(runner: Any, horizon: int) -> Any:
    """`runner` with its learning rate decaying over `horizon` updates (capped at `MAX_HORIZON`) from now
    on, placed like the old value. Every process of a multi-process run must pass the same `horizon`."""
    states = dict(runner.opt_state.hyperparams_states)
    old = states["learning_rate"]
    value = np.asarray(min(int(horizon), MAX_HORIZON), np.int32)
    states["learning_rate"] = old._replace(horizon=jax.device_put(value, old.horizon.sharding))
    return runner.replace(opt_state=runner.opt_state._replace(hyperparams_states=states))


__all__ = [
    "MAX_HORIZON",
    "LinearDecay",
    "LinearDecayState",
    "lr_horizon",
    "lr_schedule",
    "make_optimizer",
    "with_lr_horizon",
]
