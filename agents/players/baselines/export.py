"""Writing baselines: a network and its metadata as `NAME.msgpack` + `NAME.json` (`write_baseline`), or a training
run's checkpoint exported as one (`export_baseline`); both load the result back to check it."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import jax
from flax import serialization

import blokus_jax
from blokus_agents.players.baselines import shipped
from blokus_agents.players.baselines.shipped import (
    _NAME,
    ALGORITHMS,
    FORMAT_VERSION,
    _check_params,
    _network_for,
    check_meta,
    load_baseline,
)
from blokus_agents.players.checkpoint_index import require_run
from blokus_jax.errors import CheckpointError
from blokus_jax.io import fileio
from blokus_jax.observe import OBS_VERSION

#: `export_baseline` refuses to write a network larger than this (baselines ship inside the package).
MAX_EXPORT_BYTES = 2 * 1024 * 1024


def write_baseline(
    params: Any,
    name: str,
    out_dir: str | os.PathLike | None = None,
    *,
    variant: str,
    algorithm: str,
    network: dict[str, Any],
    sims: int,
    command: str,
    source_run: str,
    step: int = 0,
    train_config: dict | None = None,
    notes: str = "",
    mix: float = 0.0,
    overwrite: bool = False,
) -> Path:
    """Write `params` of a `make_network` network as baseline `name` (`NAME.msgpack` and `NAME.json`, fields as in
    `shipped._FIELDS`; docs/design.md) into `out_dir`, then load it back and check that it is bit-exact. Both files
    are written in full before either replaces an old one.

    Args:
        params: The network's parameters.
        name: The baseline's name: lowercase letters, digits, `_` or `-`.
        out_dir: The folder to write into; default the package directory.
        variant: The variant the network plays.
        algorithm: The training algorithm, one of `ALGORITHMS`.
        network: The network's sizes: `channels`, `blocks`, `value_hidden` and, where it has one, `prior`.
        sims: The default search budget (0: no search).
        command: The exact training command of the run (published with the baseline).
        source_run: The run the network comes from.
        step: The checkpoint's update number.
        train_config: The run's config as a dict.
        notes: Free text kept with the baseline.
        mix: The default weight of playout results in its leaf values (only with a search).
        overwrite: Replace an existing baseline of that name.

    Returns:
        The path of the `.json`.

    Raises:
        ValueError: A bad name, command or metadata value.
        FileExistsError: The baseline exists and not `overwrite`.
        CheckpointError: A network over `MAX_EXPORT_BYTES`, parameters that are not the network the metadata
            describes, a folder or file that cannot be written (or is a symbolic link), or a baseline that does not
            load back bit-exactly.
    """
    if not _NAME.fullmatch(name):
        raise ValueError(f"baseline name {name!r} must be lowercase letters, digits, '_' or '-' (e.g. 'duo')")
    if not command.strip():
        raise ValueError("command must be the exact training command of the run (it is published with the baseline)")
    root = Path(out_dir) if out_dir is not None else shipped.PACKAGE_DIR
    paths = {suffix: root / f"{name}{suffix}" for suffix in (".msgpack", ".json")}
    if not overwrite and any(p.exists() for p in paths.values()):
        raise FileExistsError(f"baseline {name!r} already exists in {str(root)!r}; pass overwrite=True (--force)")
    data = serialization.to_bytes(jax.device_get(params))
    if len(data) > MAX_EXPORT_BYTES:
        raise CheckpointError(
            f"the network for baseline {name!r} is {len(data):,} bytes, over the {MAX_EXPORT_BYTES:,}-byte limit "
            f"for a shipped baseline; train a smaller network (--channels/--blocks)"
        )
    record = {
        "format_version": FORMAT_VERSION,
        "name": name,
        "variant": variant,
        "obs_version": OBS_VERSION,
        "algorithm": algorithm,
        "network": dict(network),
        "sims": sims,
        "sha256": hashlib.sha256(data).hexdigest(),
        "command": command,
        "source_run": source_run,
        "step": step,
        "train_config": dict(train_config or {}),
        "date": datetime.date.today().isoformat(),
        "notes": notes,
        "mix": mix,
    }
    try:
        check_meta(record, name)
    except CheckpointError as exc:
        raise ValueError(str(exc)) from None
    env = blokus_jax.make(variant)
    _, abstract = _network_for(env, record)
    _check_params(name, serialization.msgpack_restore(data), abstract)  # the network the metadata describes
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        if not os.path.islink(root):  # a link (dangling or not) is refused by name below
            raise CheckpointError(
                f"cannot write baseline {name!r} into {str(root)!r}: {exc.strerror or exc}; choose a writable "
                f"directory (--out)"
            ) from exc
    if out_dir is not None:  # the folder named, never a symbolic link (the package's own folder is trusted)
        fileio.make_dir(root, what=f"folder for baseline {name!r} (--out)", error=CheckpointError)
    meta_text = (json.dumps(record, indent=2) + "\n").encode()
    # both files are written in full (and synced) before either replaces an old one: a failure leaves the old pair
    writers = [
        fileio.atomic_writer(paths[suffix], overwrite=overwrite, what="baseline file", error=CheckpointError)
        for suffix in (".msgpack", ".json")
    ]
    with writers[0] as params_file, writers[1] as meta_file:
        params_file.write(data)
        meta_file.write(meta_text)
        for f in (params_file, meta_file):  # both on disk before the first rename (the .json, then the .msgpack)
            f.flush()
            os.fsync(f.fileno())
    _, loaded, _ = load_baseline(name, env, root)
    if serialization.to_bytes(jax.device_get(loaded)) != data:
        raise CheckpointError(f"baseline {name!r} did not load back bit-exactly from {str(root)!r}")
    return paths[".json"]


def export_baseline(
    run_dir: str | os.PathLike,
    name: str,
    out_dir: str | os.PathLike | None = None,
    *,
    command: str,
    sims: int | None = None,
    step: int | None = None,
    source_run: str | None = None,
    notes: str = "",
    mix: float = 0.0,
    overwrite: bool = False,
) -> Path:
    """Export a checkpoint of training run `run_dir` as baseline `name` with `write_baseline`.

    Args:
        run_dir: The training run's directory.
        name: The baseline's name: lowercase letters, digits, `_` or `-`.
        out_dir: The folder to write into; default the package directory.
        command: The exact training command of the run.
        sims: The default search budget; default the run's self-play `sims` for an `alphazero` run (usually far
            below what it should play at, so give it) and 0, no search, for `ppo`.
        step: The checkpoint's update number; default the newest.
        source_run: The run named in the metadata; default `run_dir`.
        notes: Free text kept with the baseline.
        mix: The default weight of playout results in its leaf values (only with a search).
        overwrite: Replace an existing baseline of that name.

    Returns:
        The path of the `.json`.

    Raises:
        CheckpointError: A run without a usable checkpoint, of an algorithm baselines do not come from, or as
            `write_baseline` raises it.
        ValueError: As `write_baseline`.
        FileExistsError: As `write_baseline`.
    """
    from blokus_agents.players import checkpoint_index, checkpoint_read

    require_run(
        run_dir,
        f"exporting {str(run_dir)!r} as baseline {name!r} needs a trained run",
        "give the --out of a 'blokus-jax train' run that saved a checkpoint",
    )
    meta = checkpoint_read.read_meta(run_dir, step)
    algorithm = meta["algorithm"]
    if algorithm not in ALGORITHMS:
        raise CheckpointError(f"run {str(run_dir)!r} is a {algorithm!r} run; baselines are one of {list(ALGORITHMS)}")
    if sims is None:
        sims = int(getattr(meta["config"], "sims", 0) or 0)
    config, params = checkpoint_read.load_params(run_dir, step)
    return write_baseline(
        params,
        name,
        out_dir,
        variant=config.variant,
        algorithm=algorithm,
        network={
            "channels": config.channels,
            "blocks": config.blocks,
            "value_hidden": config.value_hidden,
            **({"prior": config.prior} if config.prior != "none" else {}),
        },
        sims=sims,
        command=command,
        source_run=source_run if source_run is not None else str(run_dir),
        step=int(checkpoint_index.latest_step(run_dir) if step is None else step),
        train_config=config.to_dict(),
        notes=notes,
        mix=mix,
        overwrite=overwrite,
    )
