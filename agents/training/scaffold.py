"""The trainer scaffold: what both trainers (`blokus_agents.training.ppo`, `blokus_agents.training.alphazero`) build
their own update into, written once: the trainer's parts (environment, network, optimiser), the fields every runner
starts with, and the jit wiring of `init`, `update` and `train` over a mesh. The optimiser is
`blokus_agents.training.optim`, the mesh and shardings `blokus_agents.training.mesh`.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from blokus_agents.players.configs import RunConfig
from blokus_agents.players.networks import PolicyValueNet, config_network
from blokus_agents.training.mesh import check_split, runner_shardings
from blokus_agents.training.optim import make_optimizer
from blokus_jax.env import Env, make


class Parts(NamedTuple):
    """What a trainer is built from: the environment of the config, the shared network and the optimiser."""

    env: Env
    network: PolicyValueNet
    optimizer: optax.GradientTransformation


def make_parts(config: RunConfig, mesh: Mesh | None) -> Parts:
    """The `Parts` of `config` (any trainer config); `ConfigError` when its games do not split evenly over
    `mesh`."""
    if mesh is not None:
        check_split(config.num_envs, mesh.size)
    env = make(config.variant, reward=config.reward)
    return Parts(env, config_network(config, env), make_optimizer(config))


def fresh_runner_fields(parts: Parts, num_envs: int, key: jax.Array) -> dict[str, Any]:
    """The fields every runner starts with: `num_envs` new games, fresh network parameters and optimiser state,
    the PRNG key to train on and the update counter 0 (a trainer adds its own, e.g. AlphaZero's buffer).

    Args:
        parts: The trainer's environment, network and optimiser.
        num_envs: Games played side by side.
        key: The PRNG key; the games and the parameters are drawn from one half of its split, the other half is
            the key to train on.

    Returns:
        `params`, `opt_state`, `env_state`, `key` and `update`, by name.
    """
    init_key, key = jax.random.split(key)
    env_state = jax.vmap(parts.env.init)(jax.random.split(init_key, num_envs))
    obs = jax.vmap(parts.env.observe)(jax.tree.map(lambda x: x[:1], env_state))
    params = parts.network.init(init_key, obs)
    return dict(
        params=params, opt_state=parts.optimizer.init(params), env_state=env_state, key=key, update=jnp.int32(0)
    )


def param_norm(params: Any) -> jax.Array:
    """The global L2 norm of `params`, a metric of every update: non-finite exactly when training diverged (a
    parameter is NaN or infinite, or so large that its square overflows)."""
    return optax.tree.norm(params)


class Jitted(NamedTuple):
    """A trainer's compiled entry points (see `jit_trainer`)."""

    init: Callable
    update: Callable
    train: Callable
    shardings: Any


def jit_trainer(
    init: Callable[[jax.Array], Any], update: Callable[[Any], tuple[Any, dict]], num_updates: int, mesh: Mesh | None
) -> Jitted:
    """Jit a trainer's pure `init(key) -> runner` and `update(runner) -> (runner, metrics)`: `init` and `update`
    place the runner as `runner_shardings` says on `mesh` (metrics replicated); `update` *donates* its runner (pass a
    runner once; use the one it returns: the old one's buffers are reused, so e.g. the replay buffer is updated in
    place instead of copied every update); `train(key)` runs `num_updates` updates from `init(key)` in one
    `lax.scan` (metrics stacked per update). Without a mesh, plain `jax.jit`.

    Args:
        init: The pure `init(key) -> runner`.
        update: The pure `update(runner) -> (runner, metrics)`.
        num_updates: The updates `train` runs.
        mesh: The device mesh to split the runner over, or `None`.

    Returns:
        `Jitted(init, update, train, shardings)`; `shardings` is the runner's (`None` without a mesh).
    """

    def train(key: jax.Array) -> tuple[Any, dict]:
        return jax.lax.scan(lambda runner, _: update(runner), init(key), None, num_updates)

    if mesh is None:
        return Jitted(jax.jit(init), jax.jit(update, donate_argnums=0), jax.jit(train), None)
    shardings = runner_shardings(jax.eval_shape(init, jax.random.PRNGKey(0)), mesh)
    outputs = (shardings, NamedSharding(mesh, PartitionSpec()))
    return Jitted(
        jax.jit(init, out_shardings=shardings),
        jax.jit(update, out_shardings=outputs, donate_argnums=0),
        jax.jit(train, out_shardings=outputs),
        shardings,
    )


__all__ = [
    "Jitted",
    "Parts",
    "fresh_runner_fields",
    "jit_trainer",
    "make_parts",
    "param_norm",
]
