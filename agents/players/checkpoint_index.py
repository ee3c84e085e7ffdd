"""Which checkpoints a run directory holds, read without orbax: the update folders under `checkpoints/` (each
named after the update its metadata records), the newest one, and what to say when there is none. Reading checkpoints
is `blokus_agents.players.checkpoint_read`, writing them `blokus_agents.training.checkpoint`.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import numpy as np

from blokus_agents.core.messages import brief
from blokus_agents.core.policies import AgentSpecError
from blokus_jax.errors import BlokusError, CheckpointError
from blokus_jax.io import fileio

SUBDIR = "checkpoints"
#: The largest metadata file read (a checkpoint's metadata takes about a kilobyte).
MAX_META_BYTES = 1 << 20
#: How a checkpoint folder is named: its update number in plain ASCII digits, without leading zeros.
_STEP_NAME = re.compile(r"0|[1-9][0-9]{0,17}")

#: `repr(value)` cut to 40 characters.
_brief = functools.partial(brief, limit=40)


def saved_steps(run_dir: str | os.PathLike) -> list[int]:
    """Saved update numbers under `run_dir` (finished checkpoints only), ascending; no orbax needed. Only folders
    named as `save` names them count (`7`, not `0007`, `²` or `7.orbax-checkpoint-tmp`). A folder whose
    metadata records another update than its name (a copy or a renamed checkpoint, which would otherwise pass for
    the newest) is a `CheckpointError` naming it."""
    root = Path(run_dir) / SUBDIR
    try:
        names = [p.name for p in root.iterdir() if _STEP_NAME.fullmatch(p.name) and p.is_dir()]
    except (NotADirectoryError, FileNotFoundError):
        return []
    except OSError as exc:
        raise CheckpointError(f"cannot list the checkpoints of {str(run_dir)!r}: {exc.strerror}") from exc
    steps = sorted(int(name) for name in names)
    for step in steps:
        recorded = _recorded_update(run_dir, step)
        if recorded is not None and recorded != step:
            raise _misnamed(run_dir, step, recorded)
    return steps


def _recorded_update(run_dir: str | os.PathLike, step: int) -> int | None:
    """The update recorded in the metadata of checkpoint folder `step` (`None` when the metadata has none, as
    before format 3 recorded it, or cannot be read: reading the checkpoint reports that)."""
    try:
        text = fileio.read_bytes(_meta_path(run_dir, step), MAX_META_BYTES, what="metadata", error=CheckpointError)
        meta = fileio.load_json(text, max_depth=8, what="metadata", error=CheckpointError)
    except (CheckpointError, OSError):
        return None
    recorded = meta.get("update") if isinstance(meta, dict) else None
    return recorded if type(recorded) is int else None


def _misnamed(run_dir: str | os.PathLike, step: int, recorded: int) -> CheckpointError:
    """The error for checkpoint folder `step` that holds update `recorded`."""
    folder = f"{SUBDIR}/{step}"
    return CheckpointError(
        f"checkpoint folder {folder!r} of {str(run_dir)!r} holds update {recorded}, not {step} (a copied or renamed "
        f"checkpoint); a checkpoint folder must be named after its update: delete that folder, or rename it to "
        f"{SUBDIR}/{recorded} if no folder has that name"
    )


def check_run_dir(run_dir: str | os.PathLike) -> None:
    """Refuse (`CheckpointError`) a run directory whose checkpoints could not be listed or written: its
    `checkpoints` is not a folder (a file, a broken link), or a checkpoint folder is misnamed (`saved_steps`).
    Training calls this before any work, so that nothing is compiled or trained for a run that cannot be saved."""
    root = Path(run_dir) / SUBDIR
    if os.path.lexists(root) and not root.is_dir():
        raise CheckpointError(
            f"{str(root)!r} is not a folder, so no checkpoint can be saved there; move or delete it, or choose "
            f"another output directory (--out)"
        )
    saved_steps(run_dir)


def latest_step(run_dir: str | os.PathLike) -> int | None:
    """The newest saved update number under `run_dir`, or `None` when there is no checkpoint."""
    steps = saved_steps(run_dir)
    return steps[-1] if steps else None


def _missing(run_dir: str | os.PathLike) -> str:
    """Why `run_dir` holds no checkpoint, in words (the shared part of every "no checkpoint" message)."""
    shown = str(run_dir)
    if not os.path.exists(run_dir):
        return f"no checkpoint in {shown!r}: there is no such directory"
    if not os.path.isdir(run_dir):
        return f"no checkpoint in {shown!r}: it is a file, not a run directory"
    return (
        f"no checkpoint in {shown!r}: it has no {SUBDIR}/<update>/ folder (a run directory is the --out of "
        f"'blokus-jax train', which saves one every --checkpoint-every updates and at the end)"
    )


def require_run(run_dir: str | os.PathLike, needed: str, fix: str, error: type[BlokusError] = CheckpointError) -> int:
    """The newest update number of `run_dir`. Each caller states its own context with `needed` and `fix`.

    Args:
        run_dir: The run directory.
        needed: What needed the run, e.g. `"--init-from needs a trained run"`.
        fix: What to do about it.
        error: The exception class raised (e.g. an `AgentSpecError` for an agent spec).

    Returns:
        The newest update number.

    Raises:
        error: The run has no checkpoint; the message says what needed the run, why there is none, and what
            to do about it.
    """
    steps = saved_steps(run_dir)
    if not steps:
        raise error(f"{needed}, but {_missing(run_dir)}; {fix}")
    return steps[-1]


def require_resumable(run_dir: str | os.PathLike) -> int:
    """The newest update of `run_dir` for `--resume`; `CheckpointError` saying how to start instead."""
    return require_run(
        run_dir,
        "--resume (resume=True) needs a checkpoint to continue from",
        "start a new run without --resume, or give the --out of the run to continue",
    )


def require_init_source(run_dir: str | os.PathLike) -> int:
    """The newest update of the `--init-from` run `run_dir`; `CheckpointError` saying what it is for."""
    return require_run(
        run_dir,
        f"--init-from {str(run_dir)!r} needs a trained run to copy its network from",
        "give the --out of a 'blokus-jax train' run that saved a checkpoint, or drop --init-from",
    )


def require_agent_run(run_dir: str | os.PathLike, spec: str | None = None) -> int:
    """The newest update of `run_dir` given as an agent (`spec`, e.g. `"az:runs/duo"`; default the path):
    an `AgentSpecError` (the error of every bad agent spec) when it has none."""
    shown = spec if spec is not None else str(run_dir)
    return require_run(
        run_dir,
        f"agent {shown!r} needs a trained run directory",
        "give the --out of a 'blokus-jax train' run that saved a checkpoint, or a built-in agent "
        "('blokus-jax eval --help' lists them)",
        AgentSpecError,
    )


def _require_step(run_dir: str | os.PathLike, step: int | None) -> int:
    steps = saved_steps(run_dir)
    if not steps:
        raise CheckpointError(f"{_missing(run_dir)}; check the path")
    if step is None:
        return steps[-1]
    if isinstance(step, (bool, np.bool_)) or not isinstance(step, (int, np.integer)) or int(step) not in steps:
        raise CheckpointError(f"no checkpoint {_brief(step)} in {str(run_dir)!r}; saved updates are {steps}")
    return int(step)


def _meta_path(run_dir: str | os.PathLike, step: int) -> Path:
    return Path(run_dir) / SUBDIR / str(step) / "meta" / "metadata"
