"""The training algorithms by name: each one's config class and trainer factory.

A run directory's checkpoint metadata names its algorithm (`"ppo"` or `"alphazero"`);
`blokus_agents.players.checkpoint_read` reads the config back with the matching class (`blokus_agents.players.configs`)
and `blokus_agents.training.train` builds the matching trainer here, so both algorithms share one host loop, one
checkpoint format and one CLI (`blokus-jax train --algo ...`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from blokus_agents.players.configs import RunConfig
from blokus_agents.training import alphazero, ppo

#: name -> (config class, `make_train(config, mesh=None)`)
ALGORITHMS: dict[str, tuple[type, Callable[..., Any]]] = {
    "ppo": (ppo.PPOConfig, ppo.make_train),
    "alphazero": (alphazero.AZConfig, alphazero.make_train),
}


def make_trainer(config: RunConfig, mesh: Any = None) -> Any:
    """The trainer of a run's config, by its algorithm.

    Args:
        config: A `PPOConfig` or `AZConfig`.
        mesh: The device mesh to split the trainer over, or `None`.

    Returns:
        The algorithm's trainer (`make_train(config, mesh)`).
    """
    return ALGORITHMS[config.algorithm][1](config, mesh)


__all__ = ["ALGORITHMS", "make_trainer"]
