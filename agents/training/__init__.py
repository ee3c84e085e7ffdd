"""Training: `scaffold` (what both trainers share: their parts and jit wiring), `optim` (the optimiser), `mesh`
(devices and shardings), `checks` (before a run: the config and the memory estimate), `distributed` (start-up and
several processes), `ppo` and `alphazero` (`make_train(config)`), `algorithms` (the trainer of a config), `replay`,
`checkpoint` (writing and resuming orbax checkpoints), `rundir` (run directories, metrics, settings), `curves`
(evaluation during a run) and `train` (the host loop). The settings of a run
(`blokus_agents.players.configs`) and reading checkpoints (`blokus_agents.players.checkpoint_read`) are a layer
below, beside the network they describe.

The names below load on first use (the package imports none of its modules itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from blokus_jax._lazy import lazy_getattr

if TYPE_CHECKING:
    from blokus_agents.training.algorithms import make_trainer
    from blokus_agents.training.rundir import read_metrics
    from blokus_agents.training.train import run

#: Each public name and the module of this package that defines it.
_HOMES: dict[str, str] = {
    "make_trainer": "algorithms",
    "read_metrics": "rundir",
    "run": "train",
}


__getattr__ = lazy_getattr(__name__, _HOMES, globals())


__all__ = [
    "make_trainer",
    "read_metrics",
    "run",
]
