"""Training checkpoints with orbax (never pickle), verified on load.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from blokus_agents.core.messages import brief
from blokus_agents.core.messages import short as _short
from blokus_agents.players.networks import config_network
from blokus_agents.training.checkpoint_index import (
    MAX_META_BYTES,
    SUBDIR,
    _meta_path,
    _misnamed,
    _require_step,
    require_resumable,
    saved_steps,
)
from blokus_agents.training.configs import PPOConfig, RunConfig, config_class
from blokus_jax.env import make
from blokus_jax.errors import CheckpointError
from blokus_jax.io import fileio
from blokus_jax.observe import OBS_VERSION

if TYPE_CHECKING:
    import orbax.checkpoint as ocp

#: Version of the checkpoint layout described above; bump it when the layout changes.
FORMAT_VERSION = 3
#: Older formats that `load_params` still reads (format 1 for play only).
PLAYABLE_FORMATS = (1, 2, 3)
#: Formats that `restore` resumes (format 2: the replay buffer inside `state`).
RESUMABLE_FORMATS = (2, 3)
#: Runner fields saved as their own item and kept only in the newest checkpoint (resuming needs them, playing not).
NEWEST_ONLY = ("buffer",)
#: What a `NEWEST_ONLY` item folder is renamed to before it is deleted (a kill mid-delete leaves no half item).
_DROPPED = ".dropped"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_log = logging.getLogger(__name__)


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence absl's INFO/WARNING chatter from orbax (e.g. about read-only options) for the enclosed calls."""
    logger = logging.getLogger("absl")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextmanager
def _manager(run_dir: str | os.PathLike, keep: int | None = 3, create: bool = False):
    import orbax.checkpoint as ocp  # orbax loads only when a checkpoint is read or written

    if create:  # never write checkpoints through a symbolic link (as the run directory or its checkpoint folder)
        fileio.make_dir(run_dir, what="run directory", error=CheckpointError)
        fileio.make_dir(Path(run_dir) / SUBDIR, what="checkpoint folder", error=CheckpointError)
    with _quiet():
        options = ocp.CheckpointManagerOptions(max_to_keep=keep, create=create, enable_async_checkpointing=False)
        manager = ocp.CheckpointManager(
            Path(run_dir).absolute() / SUBDIR, options=options, item_names=("params", "state", "meta", *NEWEST_ONLY)
        )
        try:
            yield manager
        finally:
            manager.close()


#: `repr(value)` cut to 40 characters (for messages about edited metadata).
_brief = functools.partial(brief, limit=40)


def content_hash(config: RunConfig, tree: Any) -> str:
    """sha256 (hex) of `config` (as sorted JSON) and every array of `tree` (dtype, shape and bytes, in leaf
    order): the fingerprint stored with a checkpoint item and compared when it is loaded."""
    from blokus_agents.training.scaffold import host_array  # the trainer's scaffold (and optax) load only here

    data = config if isinstance(config, dict) else config.to_dict()
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode())
    for leaf in jax.tree.leaves(tree):
        array = np.ascontiguousarray(host_array(leaf))  # the whole array, also when split over several processes
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


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
    """Write `runner` and `config` as checkpoint `runner.update` under `run_dir` (keeping the newest
    `keep`), with content hashes, then delete the replay buffer of every older checkpoint (see the module doc);
    returns the update number saved. Saving the same update twice is a no-op."""
    import orbax.checkpoint as ocp

    from blokus_agents.training.scaffold import is_primary

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


def _read_meta(run_dir: str | os.PathLike, step: int, shown: str | None = None) -> dict:
    """The checked metadata of checkpoint `step`: a dict with a known format, this observation layout, a valid
    config and (format 2) both hashes; raises `CheckpointError` otherwise. The file is read directly (a regular
    file of at most `MAX_META_BYTES`, JSON nested at most a few levels), not through orbax. Messages name
    the run as `shown` (default `run_dir`)."""
    where = f"checkpoint {step} in {shown or str(run_dir)!r}"
    try:
        text = fileio.read_bytes(_meta_path(run_dir, step), MAX_META_BYTES, what="metadata", error=CheckpointError)
        meta = fileio.load_json(text, max_depth=8, what="its metadata", error=CheckpointError)
    except CheckpointError as exc:
        raise CheckpointError(f"{where} is corrupt or incomplete ({exc}); delete it or use another checkpoint") from exc
    if not isinstance(meta, dict):
        raise CheckpointError(f"{where} is corrupt or incomplete (metadata is {type(meta).__name__}, not an object)")
    version = meta.get("format_version")
    if type(version) is not int or version not in PLAYABLE_FORMATS:
        raise CheckpointError(
            f"{where} has format {_brief(version)}, this version reads format {FORMAT_VERSION}; retrain "
            f"or use a matching blokus-jax version"
        )
    if meta.get("obs_version") != OBS_VERSION:
        raise CheckpointError(
            f"{where} was trained on observation layout {_brief(meta.get('obs_version'))}, this version "
            f"produces layout {OBS_VERSION}; retrain"
        )
    if "config" not in meta:
        raise CheckpointError(f"{where} is corrupt or incomplete: its metadata has no 'config'")
    algorithm = meta.setdefault("algorithm", PPOConfig.algorithm)
    if not isinstance(algorithm, str):
        raise CheckpointError(f"{where} has an ill-typed 'algorithm' {_brief(algorithm)} in its metadata")
    try:
        # the hashes cover the config exactly as saved: keep that dict, since a field added to the config class
        # later (read back with its legacy default) must not change the hash of an older checkpoint
        meta["saved_config"] = meta["config"]
        meta["config"] = config_class(algorithm).from_dict(meta["config"])
    except CheckpointError as exc:
        raise CheckpointError(f"{where} has an invalid config: {exc}") from exc
    if version >= 2:
        hashes = meta.get("sha256")
        valid = lambda k: isinstance(hashes.get(k), str) and _SHA256.fullmatch(hashes[k])  # noqa: E731
        if not (
            isinstance(hashes, dict)
            and valid("params")
            and valid("state")
            and all(valid(k) for k in NEWEST_ONLY if k in hashes)
        ):
            raise CheckpointError(f"{where} is corrupt or incomplete: its metadata has no valid 'sha256' hashes")
    return meta


def read_meta(run_dir: str | os.PathLike, step: int | None = None) -> dict:
    """The checked metadata of checkpoint `step` (default: the newest) of `run_dir`: `format_version`,
    `obs_version`, `algorithm`, `config` (that algorithm's config) and, from format 2, `sha256`. Read once per
    file version (the CLI asks for a run's variant, kind and config before loading its params)."""
    step = _require_step(run_dir, step)
    try:
        info = os.stat(_meta_path(run_dir, step))
        stamp = (info.st_mtime_ns, info.st_size, info.st_ino)
    except OSError:
        stamp = None
    return dict(_cached_meta(str(Path(run_dir).absolute()), str(run_dir), step, stamp))


@functools.lru_cache(maxsize=32)
def _cached_meta(path: str, shown: str, step: int, stamp: Any) -> dict:
    return _read_meta(path, step, shown)


def load_config(run_dir: str | os.PathLike, step: int | None = None) -> RunConfig:
    """The config (`PPOConfig` or `AZConfig`) stored with checkpoint `step` (default: the newest) of `run_dir`; raises
    `CheckpointError` when it is missing, unreadable or from an incompatible version."""
    return read_meta(run_dir, step)["config"]


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


def _params_target(config: RunConfig) -> Any:
    """Abstract arrays (shape, dtype, default device) of the network parameters of `config` (either algorithm),
    the restore target of `load_params`; no trainer is built."""
    env = make(config.variant)
    network = config_network(config, env)
    obs = jax.tree.map(lambda x: x[None], env.observe(env.init()))
    abstract = jax.eval_shape(network.init, jax.random.PRNGKey(0), obs)
    device = jax.sharding.SingleDeviceSharding(jax.local_devices()[0])
    return jax.tree.map(lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=device), abstract)


def _check_stored_shapes(run_dir: str | os.PathLike, step: int, items: dict[str, Any], where: str) -> None:
    """Raise `CheckpointError` naming the first array whose stored shape or dtype differs from the targets in
    `items` (a checkpoint of another network or batch), from orbax's metadata alone, before any array is read: a
    restore that fails part-way leaves orbax's other TensorStore reads pending on a closed event loop, which then
    print pages of "Exception ignored" tracebacks. Unreadable metadata is left for the restore to report."""
    import orbax.checkpoint as ocp

    def arrays(tree: Any) -> dict[str, str]:
        leaves = jax.tree_util.tree_flatten_with_path(tree)[0]
        return {
            jax.tree_util.keystr(k, simple=True, separator="/"): f"{np.dtype(a.dtype)}{list(a.shape)}"
            for k, a in leaves
        }

    step_dir = Path(run_dir).absolute() / SUBDIR / str(step)
    for name, target in items.items():
        try:
            with _quiet():
                stored = arrays(ocp.StandardCheckpointHandler().metadata(step_dir / name).tree)
        except Exception:  # the restore reports what is wrong with it
            return
        wanted = arrays(target)
        for key in sorted(wanted.keys() | stored.keys()):
            if stored.get(key) != wanted.get(key):
                raise CheckpointError(
                    f"cannot restore {where}: it does not match the network/batch of its config ({name}/{key}: "
                    f"saved {stored.get(key, 'nothing')}, expected {wanted.get(key, 'nothing')}); delete it or use "
                    f"another checkpoint"
                )


def _restore_items(
    manager: ocp.CheckpointManager, run_dir: str | os.PathLike, step: int, meta: dict, items: dict[str, Any]
) -> dict[str, Any]:
    """Restore `items` (name -> target) of checkpoint `step` and verify their hashes (format 2)."""
    import orbax.checkpoint as ocp

    where = f"checkpoint {step} in {str(run_dir)!r}"
    _check_stored_shapes(run_dir, step, items, where)
    try:
        with _quiet():
            restored = manager.restore(
                step,
                args=ocp.args.Composite(**{name: ocp.args.StandardRestore(target) for name, target in items.items()}),
            )
    except Exception as exc:  # shape mismatches and corrupt files surface as many exception types
        folder = Path(run_dir) / SUBDIR / str(step)
        raise CheckpointError(
            f"cannot restore {where}: it is corrupt or does not match the network/batch of its "
            f"config ({_cause(exc)}); delete its folder {str(folder)!r} to fall back on the run's previous "
            f"checkpoint, or use another checkpoint"
        ) from exc
    if meta["format_version"] >= 2:
        for name in items:
            if content_hash(meta["saved_config"], restored[name]) != meta["sha256"][name]:
                raise CheckpointError(
                    f"{where} is corrupt: the content hash of its {name!r} does not match the one "
                    f"saved with it; delete it or use another checkpoint"
                )
    if "params" in restored:
        check_finite(restored["params"], where)
    return dict(restored)


def _cause(exc: BaseException) -> str:
    """What went wrong inside orbax or TensorStore, without their internal file names: the exception type, its
    status code (`DATA_LOSS`) when it has one, and its first line only when that names no file."""
    text = _short(exc)
    if "/" not in text and "\\" not in text:
        return text
    code = re.search(r"\b([A-Z][A-Z_]{3,}):", str(exc))
    return f"{type(exc).__name__}{': ' + code.group(1) if code else ''}, in the checkpoint's array files"


def check_finite(params: Any, where: str) -> None:
    """Raise `CheckpointError` when any floating-point array of `params` holds a NaN or an infinity (a diverged
    run, or an edited file whose hash was recomputed): such a network plays nonsense. `where` names the source."""
    for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]:
        array = np.asarray(jax.device_get(leaf))
        if np.issubdtype(array.dtype, np.floating) and not np.isfinite(array).all():
            raise CheckpointError(
                f"{where} has non-finite parameters (NaN or infinity in {jax.tree_util.keystr(path)}): the run "
                f"diverged; use an earlier checkpoint or retrain with a lower learning rate"
            )


def restore(run_dir: str | os.PathLike, trainer: Any, step: int | None = None) -> Any:
    """The verified runner (`Runner` or `AZRunner`) of checkpoint `step` (default: the newest) of `run_dir`, placed like
    `trainer.init` would place it (sharded over `trainer.mesh` if any). Raises `CheckpointError` when the checkpoint is
    missing, corrupt, of format 1 or without its replay buffer (an AlphaZero checkpoint older than the newest, see the
    module doc), or its config differs from `trainer.config` (listing the differences) in anything but `total_steps`,
    which may change to extend a run (the learning-rate horizon stays as saved), and `precision` (the parameters are
    float32 under every precision)."""
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
    return runner


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


def load_params(run_dir: str | os.PathLike, step: int | None = None) -> tuple[Any, Any]:
    """`(config, params)` of checkpoint `step` (default: the newest) of `run_dir`, on the default device, for
    playing or evaluating a trained agent. Opens the checkpoint once; raises `CheckpointError` as `restore`
    does. A format 1 checkpoint loads unverified, with a one-line warning."""
    step = _require_step(run_dir, step)
    meta = read_meta(run_dir, step)
    config = meta["config"]
    with _manager(run_dir) as manager:
        if meta["format_version"] < 2:
            _log.warning(
                "checkpoint %s in %r has the old format %s without a content hash: loaded unverified",
                step,
                str(run_dir),
                meta["format_version"],
            )
        params = _restore_items(manager, run_dir, step, meta, {"params": _params_target(config)})
    return config, params["params"]


def load_network(run_dir: str | os.PathLike, env: Any) -> tuple[Any, Any]:
    """`(network, params)` of the newest checkpoint of `run_dir`, built for `env`: what a run directory given as
    an agent plays. Raises `CheckpointError` as `load_params` does, and when the run was trained on another
    variant."""
    config, params = load_params(run_dir)
    if config.variant != env.variant.name:
        raise CheckpointError(
            f"checkpoint {str(run_dir)!r} was trained on variant {config.variant!r}, not "
            f"{env.variant.name!r}; use --variant {config.variant}"
        )
    return config_network(config, env), params


def upgrade(run_dir: str | os.PathLike) -> list[int]:
    """Rewrite every format 1 checkpoint of `run_dir` in the current format, so that the run can be resumed: the
    optimiser state moves into the optax schedule (step count `update * optimizer_steps_per_update`, the saved
    learning-rate horizon) and content hashes are added. The old checkpoints are moved to `checkpoints_format1/`.
    Returns the upgraded update numbers (empty when there was nothing to do)."""
    import optax

    from blokus_agents.training.ppo import Runner, make_train
    from blokus_agents.training.scaffold import LinearDecayState

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
