"""The device mesh of data-parallel training and a runner's shardings on it: one `"data"` axis over the devices
(`make_mesh`, `default_mesh`), the per-game fields of a runner split along it and the rest replicated
(`runner_shardings`).

Design notes: `docs/design.md`.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from blokus_jax.errors import ConfigError


def make_mesh(devices: list | None = None) -> Mesh:
    """A one-axis (`"data"`) mesh over `devices` (default: every device of every process, `jax.devices()`) for
    data-parallel training."""
    devices = jax.devices() if devices is None else list(devices)
    return Mesh(np.asarray(devices), ("data",))


def default_mesh(num_envs: int) -> Mesh | None:
    """The mesh a run of `num_envs` games uses by default. With several processes: every device of every process
    (`num_envs` must split evenly over them, else `ConfigError`). With one: the largest number of local devices
    that `num_envs` splits evenly over, or `None` (plain single-device jit) when that is one."""
    if jax.process_count() > 1:
        check_split(num_envs, jax.device_count())
        return make_mesh()
    count = max(d for d in range(1, jax.local_device_count() + 1) if num_envs % d == 0)
    return make_mesh(jax.local_devices()[:count]) if count > 1 else None


def check_split(num_envs: int, devices: int) -> None:
    """Raise `ConfigError` unless `num_envs` games split evenly over `devices` devices."""
    if num_envs % devices:
        where = f" of {jax.process_count()} processes" if jax.process_count() > 1 else ""
        raise ConfigError(
            f"num_envs (--num-envs) {num_envs} must be a multiple of the {devices} devices{where} to split the games "
            f"evenly; e.g. --num-envs {devices * max(1, round(num_envs / devices))}"
        )


#: Runner fields that hold per-game data and are split across devices along their leading (games) axis.
SPLIT_FIELDS = ("env_state", "buffer")


def runner_shardings(runner: Any, mesh: Mesh) -> Any:
    """Shardings of a runner (`blokus_agents.training.ppo.Runner`, or `blokus_agents.training.alphazero.AZRunner`) on
    `mesh`: the per-game fields (`SPLIT_FIELDS`: the games' states, AlphaZero's replay buffer) split along their games
    axis, the rest (parameters, optimiser state, key, counter) replicated. Returns a pytree of `NamedSharding` with the
    runner's structure."""
    split, whole = NamedSharding(mesh, PartitionSpec("data")), NamedSharding(mesh, PartitionSpec())

    def place(name: str) -> Any:
        sharding = split if name in SPLIT_FIELDS else whole
        return jax.tree.map(lambda _: sharding, getattr(runner, name))

    return runner.replace(**{name: place(name) for name in runner.__dataclass_fields__})


__all__ = [
    "SPLIT_FIELDS",
    "check_split",
    "default_mesh",
    "make_mesh",
    "runner_shardings",
]
