"""Writing and resuming training checkpoints with orbax (never pickle): saving a runner with content hashes, resuming
a run from its newest checkpoint, cleaning up half-written saves, upgrading old formats. Reading them (the format,
the metadata, the parameters a trained agent plays with) is `blokus_agents.players.checkpoint_read`.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import jax
import numpy as np

from blokus_agents.players.checkpoint_index import SUBDIR, _misnamed, _require_step, require_resumable, saved_steps
from blokus_agents.players.checkpoint_read import (
    FORMAT_VERSION,
    NEWEST_ONLY,
    _manager,
    _quiet,
    _read_meta,
    _restore_items,
    content_hash,
    read_meta,
)
from blokus_agents.players.configs import PPOConfig, RunConfig
from blokus_jax.errors import CheckpointError
from blokus_jax.io import fileio
from blokus_jax.observe import OBS_VERSION

#: Formats that `restore` resumes (format 2: the replay buffer inside `state`).
RESUMABLE_FORMATS = (2, 3)


#: What a `NEWEST_ONLY` item folder is renamed to before it is deleted (a kill mid-delete leaves no half item).
_DROPPED = ".dropped"


_log = logging.getLogger(__name__)


def _state_item(runner: Any, legacy: bool = False) -> dict[str, Any]:
    """Every field of a runner but `params` and the `NEWEST_ONLY` ones, by name (the checkpoint's `state`
    item); `legacy`: with those too, as format 2 saved it."""
    skip = ("params",) if legacy else ("params", *NEWEST_ONLY)
    # a field that is None (PPO's ref_params without a KL term) is not stored: runs saved before it existed match
    return {
        name: getattr(runner, name)
        for name in runner.__dataclass_fields__
        if name not in skip and getattr(runner, name) is not None
    }


def _newest_items(runner: Any) -> dict[str, Any]:
    """The `NEWEST_ONLY` fields that `runner` has (an AlphaZero runner's `buffer`; none for PPO)."""
    return {name: getattr(runner, name) for name in NEWEST_ONLY if name in runner.__dataclass_fields__}


def save(run_dir: str | os.PathLike, runner: Any, config: RunConfig, keep: int | None = 3) -> int:
    """Write `runner` and `config` as checkpoint `runner.update` under `run_dir`, with content hashes, then delete
    the replay buffer of every older checkpoint (see the module doc). Saving the same update twice is a no-op.

    Args:
        run_dir: The run's folder (created if missing).
        runner: The training state (`Runner` or `AZRunner`); its `update` numbers the checkpoint.
        config: The run's config, stored with the checkpoint.
        keep: The checkpoints kept, the newest; `None` keeps all.

    Returns:
        The update number saved.
    """
    import orbax.checkpoint as ocp

    from blokus_agents.training.distributed import is_primary

    step = int(runner.update)
    items = {"params": runner.params, "state": _state_item(runner), **_newest_items(runner)}
    meta = {
        "format_version": FORMAT_VERSION,
        "obs_version": OBS_VERSION,
        "update": step,
        "algorithm": config.algorithm,
        "config": config.to_dict(),
        "sha256": {name: content_hash(config, tree) for name, tree in items.items()},
    }
    with _signals_held():  # a stop signal during the save takes effect once the checkpoint is complete
        with _manager(run_dir, keep, create=True) as manager:
            if step in manager.all_steps():
                return step
            with _quiet():
                manager.save(
                    step,
                    args=ocp.args.Composite(
                        **{name: ocp.args.StandardSave(tree) for name, tree in items.items()},
                        meta=ocp.args.JsonSave(meta),
                    ),
                )
                manager.wait_until_finished()
        if is_primary():  # every process saves together (orbax); one of them deletes
            _drop_older_buffers(run_dir)
    return step


#: The signals whose handlers `_signals_held` holds back during a save.
_HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM are only noted; on leaving it their previous handlers run (in the main
    thread, once each signal received), so that a Ctrl-C that lands while orbax writes a checkpoint (with its own
    threads) stops the program after the checkpoint is complete, never half-way. Elsewhere than in the main thread
    (where Python cannot install handlers) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = {sig: signal.signal(sig, lambda signum, frame: pending.append(signum)) for sig in _HELD_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for signum in dict.fromkeys(pending):
            handler = previous[signum]
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                if signum == signal.SIGINT:
                    raise KeyboardInterrupt
                os.kill(os.getpid(), signum)  # the default action (SIGTERM ends the process), now that it is saved


#: A checkpoint folder that orbax had not finished writing (`7.orbax-checkpoint-tmp-1712`): a save cut short by
#: a kill or a crash.
_PARTIAL = re.compile(r"\d+\.orbax-checkpoint-tmp.*")


def remove_partial(run_dir: str | os.PathLike) -> list[str]:
    """Delete the half-written checkpoint folders under `run_dir` (those orbax names `N.orbax-checkpoint-tmp*`
    while it writes, left by a save that a kill or a crash cut short; finished checkpoints are never touched).
    Returns the names deleted; a folder that cannot be deleted is left with a warning (it costs disk space only)."""
    root = Path(run_dir) / SUBDIR
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return []
    removed = []
    for path in entries:
        if not _PARTIAL.fullmatch(path.name) or path.is_symlink() or not path.is_dir():
            continue
        try:
            shutil.rmtree(path)
        except OSError as exc:
            _log.warning("could not delete the half-written checkpoint %r: %s", str(path), exc.strerror)
            continue
        removed.append(path.name)
    return removed


def _drop_older_buffers(run_dir: str | os.PathLike) -> None:
    """Delete the `NEWEST_ONLY` items of every checkpoint but the newest (each folder is renamed first, so that
    a kill part-way leaves a checkpoint without the item rather than with half of it; leftovers of such a kill are
    deleted too). A folder that cannot be deleted is left with a warning: it costs disk space, not the run."""
    steps = saved_steps(run_dir)
    for step in steps[:-1]:
        folder = Path(run_dir) / SUBDIR / str(step)
        for name in NEWEST_ONLY:
            item, dropped = folder / name, folder / (name + _DROPPED)
            try:
                if dropped.is_dir() and not dropped.is_symlink():
                    shutil.rmtree(dropped)
                if item.is_dir() and not item.is_symlink():
                    os.replace(item, dropped)
                    shutil.rmtree(dropped)
            except OSError as exc:
                _log.warning("could not delete the %s of older checkpoint %s in %r: %s", name, step, str(run_dir), exc)


def _target(trainer: Any) -> Any:
    """Abstract arrays (shape, dtype, sharding) of a runner for `trainer` (either algorithm's), the restore
    target."""
    abstract = jax.eval_shape(trainer.init_pure, jax.random.PRNGKey(0))
    if trainer.shardings is None:
        device = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
        shardings = jax.tree.map(lambda _: device, abstract)
    else:
        shardings = trainer.shardings
    return jax.tree.map(lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=s), abstract, shardings)


def restore(run_dir: str | os.PathLike, trainer: Any, step: int | None = None) -> Any:
    """The verified runner (`Runner` or `AZRunner`) of a checkpoint of `run_dir`, placed like `trainer.init` would place
    it (sharded over `trainer.mesh` if any).

    Args:
        run_dir: The run's folder.
        trainer: The trainer to resume with; its config must match the saved one in everything but `total_steps`,
            which may change to extend a run (the learning-rate horizon stays as saved), and `precision` (the
            parameters are float32 under every precision).
        step: The checkpoint's update number; default the newest.

    Returns:
        The runner, of the trainer's type.

    Raises:
        CheckpointError: The checkpoint is missing, corrupt, of format 1 or without its replay buffer (an AlphaZero
            checkpoint older than the newest, see the module doc), of another algorithm, or its config differs
            from `trainer.config` (listing the differences).
    """
    step = require_resumable(run_dir) if step is None else _require_step(run_dir, step)
    with _manager(run_dir) as manager:
        meta = _read_meta(run_dir, step)
        if meta["format_version"] not in RESUMABLE_FORMATS:
            raise CheckpointError(
                f"checkpoint {step} in {str(run_dir)!r} has the old format "
                f"{meta['format_version']} (no content hash, another optimiser state): it can be "
                f"played but not resumed; run blokus_agents.training.checkpoint.upgrade({str(run_dir)!r}) first"
            )
        saved = meta["config"]
        if type(saved) is not type(trainer.config):
            raise CheckpointError(
                f"{str(run_dir)!r} was trained with {meta['algorithm']!r}, not {trainer.config.algorithm!r}; "
                f"resume it with --algo {meta['algorithm']}"
            )
        same = dict(total_steps=trainer.config.total_steps, precision=trainer.config.precision)
        if saved.replace(**same) != trainer.config:
            diff = {
                k: (v, getattr(trainer.config, k))
                for k, v in saved.to_dict().items()
                if getattr(trainer.config, k) != v
            }
            raise CheckpointError(
                f"checkpoint {step} in {str(run_dir)!r} was made with a different config "
                f"(field: (saved, requested)) {diff}; resume with the saved settings"
            )
        target = _target(trainer)
        items = _restore_items(manager, run_dir, step, meta, _resume_targets(run_dir, step, meta, target))
    newest = {name: items[name] for name in NEWEST_ONLY if name in items}
    runner = type(target)(params=items["params"], **items["state"], **newest)
    if int(runner.update) != step:  # a checkpoint saved before its metadata recorded the update
        raise _misnamed(run_dir, step, int(runner.update))
    if trainer.mesh is None:
        # As `trainer.init` leaves them: on the default device but not committed to it, so that the update compiled
        # for a fresh runner takes the resumed one as it is (a committed argument is another program to compile).
        runner = jax.tree.map(_uncommitted, runner)
    return runner


def _uncommitted(x: Any) -> Any:
    """`x` on the default device, not committed to it (as a jitted `init` returns it); a typed PRNG key as it is."""
    if isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
        return x
    return jax.device_put(np.asarray(x))


def _resume_targets(run_dir: str | os.PathLike, step: int, meta: dict, target: Any) -> dict[str, Any]:
    """The items (name -> restore target) that resuming checkpoint `step` reads for the runner `target`: params,
    state and the `NEWEST_ONLY` items (inside `state` in format 2). Raises `CheckpointError` when one of
    those is gone (an older checkpoint, whose replay buffer was deleted when a newer one was saved)."""
    if meta["format_version"] == 2:
        return {"params": target.params, "state": _state_item(target, legacy=True)}
    where = f"checkpoint {step} in {str(run_dir)!r}"
    items = {"params": target.params, "state": _state_item(target)}
    for name, tree in _newest_items(target).items():
        if name not in meta["sha256"]:
            raise CheckpointError(f"{where} is corrupt or incomplete: its metadata has no 'sha256' hash of {name!r}")
        if not (Path(run_dir) / SUBDIR / str(step) / name).is_dir():
            newest = saved_steps(run_dir)[-1]
            if newest != step:
                raise CheckpointError(
                    f"{where} cannot be resumed: it no longer holds its replay buffer ({name!r}), which only the "
                    f"newest checkpoint of a run keeps (update {newest}); resume from that one, or play this one"
                )
            raise CheckpointError(
                f"{where} cannot be resumed: its replay buffer ({name}/) is missing; it can still be played, or "
                f"start a new run from its network with --init-from {str(run_dir)!r}"
            )
        items[name] = tree
    return items


def upgrade(run_dir: str | os.PathLike) -> list[int]:
    """Rewrite every format 1 checkpoint of `run_dir` in the current format, so that the run can be resumed: the
    optimiser state moves into the optax schedule (step count `update * optimizer_steps_per_update`, the saved
    learning-rate horizon) and content hashes are added. The old checkpoints are moved to `checkpoints_format1/`.
    Returns the upgraded update numbers (empty when there was nothing to do)."""
    import optax

    from blokus_agents.training.optim import LinearDecayState
    from blokus_agents.training.ppo import Runner, make_train

    done = []
    for step in saved_steps(run_dir):
        meta = read_meta(run_dir, step)
        if meta["format_version"] in RESUMABLE_FORMATS:
            continue
        config: PPOConfig = meta["config"]
        trainer = make_train(config)
        target = _target(trainer)
        device = jax.tree.leaves(target.params)[0].sharding
        old_adam = optax.chain(optax.clip_by_global_norm(config.max_grad_norm), optax.scale_by_adam(eps=1e-5))
        old_opt = jax.tree.map(
            lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=device),
            jax.eval_shape(old_adam.init, target.params),
        )
        old_state = {
            "opt_state": old_opt,
            "env_state": target.env_state,
            "key": target.key,
            "update": target.update,
            "lr_horizon": jax.ShapeDtypeStruct((), np.int32, sharding=device),
        }
        with _manager(run_dir) as manager:
            items = _restore_items(manager, run_dir, step, meta, {"params": target.params, "state": old_state})
        params, state = items["params"], items["state"]
        update = jax.numpy.asarray(state["update"], jax.numpy.int32)
        count = update * config.optimizer_steps_per_update
        fresh = trainer.optimizer.init(params)
        schedule = LinearDecayState(count=count, horizon=jax.numpy.asarray(state["lr_horizon"], jax.numpy.int32))
        opt_state = fresh._replace(
            count=count,  # the rate of the last optimiser step taken, i.e. of the previous update, as optax keeps it
            hyperparams={
                "learning_rate": jax.numpy.asarray(
                    trainer.learning_rate(jax.numpy.maximum(update - 1, 0), schedule.horizon), jax.numpy.float32
                )
            },
            hyperparams_states={"learning_rate": schedule},
            inner_state=(*state["opt_state"], *fresh.inner_state[len(state["opt_state"]) :]),
        )
        runner = Runner(
            params=params, opt_state=opt_state, env_state=state["env_state"], key=state["key"], update=update
        )
        old_dir = Path(run_dir) / "checkpoints_format1"
        fileio.make_dir(old_dir, what="folder of old checkpoints", error=CheckpointError)
        shutil.move(str(Path(run_dir) / SUBDIR / str(step)), str(old_dir / str(step)))
        save(run_dir, runner, config, keep=None)
        done.append(step)
    return done
