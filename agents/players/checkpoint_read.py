"""Reading training checkpoints (orbax, never pickle), verified on load: the checkpoint format, the checked metadata,
a run's config, and the network parameters that a trained agent plays with. The shipped baselines, the agents that
run directories resolve to, and the trainer (`blokus_agents.training.checkpoint`, which writes and resumes them) all
read checkpoints here.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jax
import numpy as np

from blokus_agents.core.messages import brief
from blokus_agents.core.messages import short as _short
from blokus_agents.players.checkpoint_index import MAX_META_BYTES, SUBDIR, _meta_path, _require_step
from blokus_agents.players.configs import PPOConfig, RunConfig, config_class
from blokus_agents.players.networks import config_network
from blokus_jax.env import make
from blokus_jax.errors import CheckpointError
from blokus_jax.io import fileio
from blokus_jax.observe import OBS_VERSION

if TYPE_CHECKING:
    import orbax.checkpoint as ocp

FORMAT_VERSION = 3
#: Older formats that `load_params` still reads (format 1 for play only).
PLAYABLE_FORMATS = (1, 2, 3)


NEWEST_ONLY = ("buffer",)


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


def host_array(x: Any) -> np.ndarray:
    """The whole value of array `x` as a NumPy array on this host, also when it is split over the devices of
    several processes (then gathered from all of them: every process must call this for the same arrays, in the
    same order)."""
    if isinstance(x, jax.Array) and not (x.is_fully_addressable or x.is_fully_replicated):
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(x, tiled=True))
    return np.asarray(jax.device_get(x))


def content_hash(config: RunConfig, tree: Any) -> str:
    """sha256 (hex) of `config` (as sorted JSON) and every array of `tree` (dtype, shape and bytes, in leaf
    order): the fingerprint stored with a checkpoint item and compared when it is loaded."""
    data = config if isinstance(config, dict) else config.to_dict()
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode())
    for leaf in jax.tree.leaves(tree):
        array = np.ascontiguousarray(host_array(leaf))  # the whole array, also when split over several processes
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


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
