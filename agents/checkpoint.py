"""Training checkpoints with orbax (never pickle).

A run directory holds ``checkpoints/<update>/`` with three items: ``params`` (the network), ``state`` (optimiser
state, the games in progress, the PRNG key, the update counter and the learning-rate horizon: everything a resumed
run needs to continue exactly) and ``meta`` (JSON: format version, observation-layout version, the
:class:`~agents.ppo.PPOConfig`). Restoring checks the metadata and the array shapes against the expected ones and
raises :class:`~blokus_jax.errors.CheckpointError` naming the problem for a missing, corrupt or mismatched
checkpoint.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jax
import orbax.checkpoint as ocp

from agents.ppo import PPOConfig, PPOTrainer, Runner, runner_shardings
from blokus_jax.errors import CheckpointError
from blokus_jax.observe import OBS_VERSION

#: Version of the checkpoint layout described above; bump it when the layout changes.
FORMAT_VERSION = 1
SUBDIR = "checkpoints"


def _manager(run_dir: str | os.PathLike, keep: int | None = 3, read_only: bool = False) -> ocp.CheckpointManager:
    options = ocp.CheckpointManagerOptions(max_to_keep=keep, create=not read_only, read_only=read_only,
                                           enable_async_checkpointing=False)
    return ocp.CheckpointManager(Path(run_dir).absolute() / SUBDIR, options=options,
                                 item_names=("params", "state", "meta"))


def save(run_dir: str | os.PathLike, runner: Runner, config: PPOConfig, keep: int | None = 3) -> int:
    """Write ``runner`` and ``config`` as checkpoint ``runner.update`` under ``run_dir`` (keeping the newest
    ``keep``); returns the update number saved. Overwrites nothing: saving the same update twice is a no-op."""
    step = int(runner.update)
    manager = _manager(run_dir, keep)
    if step in manager.all_steps():
        manager.close()
        return step
    meta = {"format_version": FORMAT_VERSION, "obs_version": OBS_VERSION, "config": config.to_dict()}
    state = {"opt_state": runner.opt_state, "env_state": runner.env_state, "key": runner.key,
             "update": runner.update, "lr_horizon": runner.lr_horizon}
    manager.save(step, args=ocp.args.Composite(params=ocp.args.StandardSave(runner.params),
                                               state=ocp.args.StandardSave(state),
                                               meta=ocp.args.JsonSave(meta)))
    manager.wait_until_finished()
    manager.close()
    return step


def latest_step(run_dir: str | os.PathLike) -> int | None:
    """The newest saved update number under ``run_dir``, or ``None`` when there is no checkpoint."""
    if not (Path(run_dir) / SUBDIR).is_dir():
        return None
    manager = _manager(run_dir, read_only=True)
    step = manager.latest_step()
    manager.close()
    return step


def _require_step(run_dir: str | os.PathLike, step: int | None) -> int:
    newest = latest_step(run_dir)
    if newest is None:
        raise CheckpointError(f"no checkpoint in {str(run_dir)!r} (expected {SUBDIR}/<update>/ from "
                              f"'blokus-jax train --out DIR'); check the path or start a new run without --resume")
    return newest if step is None else int(step)


def load_config(run_dir: str | os.PathLike, step: int | None = None) -> PPOConfig:
    """The :class:`PPOConfig` stored with checkpoint ``step`` (default: the newest) of ``run_dir``; raises
    ``CheckpointError`` when it is missing, unreadable or from an incompatible version."""
    step = _require_step(run_dir, step)
    manager = _manager(run_dir, read_only=True)
    try:
        meta = manager.restore(step, args=ocp.args.Composite(meta=ocp.args.JsonRestore()))["meta"]
    except Exception as exc:  # orbax raises many types (FileNotFoundError, ValueError, json errors, ...)
        raise CheckpointError(f"checkpoint {step} in {str(run_dir)!r} is corrupt or incomplete (metadata "
                              f"unreadable: {exc}); delete it or resume from another") from exc
    finally:
        manager.close()
    if not isinstance(meta, dict) or meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"checkpoint {step} in {str(run_dir)!r} has format "
                              f"{meta.get('format_version') if isinstance(meta, dict) else meta!r}, this version "
                              f"reads format {FORMAT_VERSION}; retrain or use a matching blokus-jax version")
    if meta.get("obs_version") != OBS_VERSION:
        raise CheckpointError(f"checkpoint {step} in {str(run_dir)!r} was trained on observation layout "
                              f"{meta.get('obs_version')}, this version produces layout {OBS_VERSION}; retrain")
    return PPOConfig.from_dict(meta["config"])


def _target(trainer: PPOTrainer) -> Runner:
    """Abstract arrays (shape, dtype, sharding) of a runner for ``trainer``, the restore target."""
    abstract = jax.eval_shape(trainer._init, jax.random.PRNGKey(0))
    if trainer.mesh is None:
        device = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
        shardings = jax.tree.map(lambda _: device, abstract)
    else:
        shardings = runner_shardings(abstract, trainer.mesh)
    return jax.tree.map(lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s), abstract, shardings)


def _restore_items(run_dir: str | os.PathLike, step: int, items: dict[str, Any]) -> dict[str, Any]:
    manager = _manager(run_dir, read_only=True)
    try:
        return manager.restore(step, args=ocp.args.Composite(
            **{name: ocp.args.StandardRestore(target) for name, target in items.items()}))
    except Exception as exc:  # shape mismatches and corrupt files surface as many exception types
        raise CheckpointError(f"cannot restore checkpoint {step} from {str(run_dir)!r}: it is corrupt or does not "
                              f"match the network/batch of its config ({type(exc).__name__}: {exc})") from exc
    finally:
        manager.close()


def restore(run_dir: str | os.PathLike, trainer: PPOTrainer, step: int | None = None) -> Runner:
    """The :class:`Runner` of checkpoint ``step`` (default: the newest) of ``run_dir``, placed like
    ``trainer.init`` would place it (sharded over ``trainer.mesh`` if any). Raises ``CheckpointError`` when the
    checkpoint is missing or corrupt or its config differs from ``trainer.config`` (listing the differences) in
    anything but ``total_steps``, which may change to extend a run (the learning-rate horizon stays as saved)."""
    step = _require_step(run_dir, step)
    saved = load_config(run_dir, step)
    if saved.replace(total_steps=trainer.config.total_steps) != trainer.config:
        diff = {k: (v, getattr(trainer.config, k)) for k, v in saved.to_dict().items()
                if getattr(trainer.config, k) != v}
        raise CheckpointError(f"checkpoint {step} in {str(run_dir)!r} was made with a different config "
                              f"(field: (saved, requested)) {diff}; resume with the saved settings")
    target = _target(trainer)
    state = {"opt_state": target.opt_state, "env_state": target.env_state, "key": target.key,
             "update": target.update, "lr_horizon": target.lr_horizon}
    items = _restore_items(run_dir, step, {"params": target.params, "state": state})
    return Runner(params=items["params"], **items["state"])


def load_params(run_dir: str | os.PathLike, step: int | None = None) -> tuple[PPOConfig, Any]:
    """``(config, params)`` of checkpoint ``step`` (default: the newest) of ``run_dir``, on the default device, for
    playing or evaluating a trained agent; raises ``CheckpointError`` as :func:`restore` does."""
    step = _require_step(run_dir, step)
    config = load_config(run_dir, step)
    params = _restore_items(run_dir, step, {"params": _target(PPOTrainer(config)).params})["params"]
    return config, params
