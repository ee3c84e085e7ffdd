"""Training: `configs` (the settings of a run), `scaffold` (what both trainers share), `ppo` and `alphazero`
(`make_train(config)`), `algorithms` (the trainer of a config), `replay`, `checkpoint` and `checkpoint_index`
(orbax checkpoints), `rundir` (run directories, metrics, settings), `curves` (evaluation during a run) and `train`
(the host loop).

The names below load on first use (the package imports none of its modules itself).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blokus_agents.training.algorithms import make_trainer
    from blokus_agents.training.configs import AZConfig, PPOConfig, RunConfig
    from blokus_agents.training.rundir import read_metrics
    from blokus_agents.training.train import run

#: Each public name and the module of this package that defines it.
_HOMES: dict[str, str] = {
    "AZConfig": "configs",
    "PPOConfig": "configs",
    "RunConfig": "configs",
    "make_trainer": "algorithms",
    "read_metrics": "rundir",
    "run": "train",
}


def __getattr__(name: str) -> Any:
    """Load a public name of `blokus_agents.training` on its first use.

    Args:
        name: The attribute asked for.

    Returns:
        The object, which is then cached in the package's namespace.

    Raises:
        AttributeError: When the package has no such name.
    """
    if name not in _HOMES:
        raise AttributeError(f"module 'blokus_agents.training' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"blokus_agents.training.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "AZConfig",
    "PPOConfig",
    "RunConfig",
    "make_trainer",
    "read_metrics",
    "run",
]
