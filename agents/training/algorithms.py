"""The training algorithms by name: each one's trainer factory.

The names and config classes live in one registry, `blokus_agents.players.configs.CONFIGS`: a run directory's
checkpoint metadata names its algorithm (`"ppo"` or `"alphazero"`), `blokus_agents.players.checkpoint_read` reads the
config back with the matching class, and `blokus_agents.training.train` builds the matching trainer here, so both
algorithms share one host loop, one checkpoint format and one CLI (`blokus-jax train --algo ...`). This module adds
only what the players' layer must not import: each algorithm's `make_train`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from blokus_agents.players.configs import CONFIGS, RunConfig
from blokus_agents.training import alphazero, ppo

#: name -> `make_train(config, mesh=None)`, for every name of `CONFIGS` (the one registry of names and config classes)
ALGORITHMS: dict[str, Callable[..., Any]] = {"ppo": ppo.make_train, "alphazero": alphazero.make_train}
if set(ALGORITHMS) != set(CONFIGS):  # pragma: no cover - a new algorithm registered in one place only
    raise ImportError(f"training algorithms {sorted(ALGORITHMS)} and configs {sorted(CONFIGS)} differ: register both")


def make_trainer(config: RunConfig, mesh: Any = None) -> Any:
    """The trainer of a run's config, by its algorithm.

    A trainer is pure functions (its runner is separate), so one built for a config that reads nothing from outside
    the package (no PPO `opponent`, no AlphaZero `teacher`: an agent spec may name a run directory, whose files can
    change) is kept and shared by later calls with an equal config and mesh: a second run in the same process (a
    resume, a notebook's next cell, a test) reuses its compiled update instead of tracing and compiling it again.

    Args:
        config: A `PPOConfig` or `AZConfig`.
        mesh: The device mesh to split the trainer over, or `None`.

    Returns:
        The algorithm's trainer (`make_train(config, mesh)`).
    """
    if getattr(config, "opponent", "") or getattr(config, "teacher", ""):
        return ALGORITHMS[config.algorithm](config, mesh)
    return _shared_trainer(config, mesh)


@functools.lru_cache(maxsize=4)
def _shared_trainer(config: RunConfig, mesh: Any) -> Any:
    """`make_train(config, mesh)` of the config's algorithm, built once per process for each (config, mesh)."""
    return ALGORITHMS[config.algorithm](config, mesh)


__all__ = ["ALGORITHMS", "make_trainer"]
