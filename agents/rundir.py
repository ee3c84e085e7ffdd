"""The files of a training run directory besides its checkpoints: the run lock and ``metrics.jsonl``.

``train.lock`` is held with an exclusive ``fcntl.flock`` (:func:`blokus_jax.fileio.exclusive_lock`) for as long as a
trainer runs: taking it is atomic among processes and the kernel drops it when its holder dies, so a second trainer is
refused (:class:`~blokus_jax.errors.CheckpointError` naming the holder's pid, which is recorded in the file for
messages only) and a file left by a killed trainer is simply taken over.

``metrics.jsonl`` holds one JSON object per update, each with an int ``update`` and ``env_steps``. It is read as a
stream with a cap on each line (:data:`MAX_LINE_BYTES`), so a run of any length resumes in bounded memory: a malformed
line (not UTF-8, not JSON, nested too deeply, without ``update``/``env_steps``) is a ``CheckpointError`` naming the file
and the line; only a last line cut short by a killed process (no newline) is skipped. Rewrites (dropping the records
after the checkpoint a run resumes from) are atomic: a fresh temporary file renamed over the old one.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from blokus_jax import fileio
from blokus_jax.errors import CheckpointError

METRICS_FILE = "metrics.jsonl"
LOCK_FILE = "train.lock"
#: The longest line of ``metrics.jsonl`` that is read (a record takes well under a kilobyte).
MAX_LINE_BYTES = 1 << 20
#: How deeply a metrics record may nest (records are flat objects of numbers).
MAX_RECORD_DEPTH = 4


@contextlib.contextmanager
def run_lock(out: str | os.PathLike) -> Iterator[None]:
    """Hold ``out/train.lock`` while training, so that a second trainer on the same run directory is refused
    (``CheckpointError``); atomic among processes, and a lock file whose holder died is taken over."""
    path = Path(out) / LOCK_FILE
    busy = (
        f"{str(out)!r} is in use by another trainer ({{owner}}); wait for it to finish or choose another output "
        f"directory"
    )
    with fileio.exclusive_lock(path, what="run lock", error=CheckpointError, busy=busy):
        yield


@contextlib.contextmanager
def claim(out: str | os.PathLike) -> Iterator[Path]:
    """Make run directory ``out`` (if missing) and hold its :func:`run_lock` for the ``with`` block; a run that is
    refused (any exception) leaves no directory it created behind. Raises ``CheckpointError`` when ``out`` is a
    file or cannot be created."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise CheckpointError(f"output directory {str(out)!r} is a file; choose a directory for the run")
    created = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CheckpointError(f"cannot create the output directory {str(out)!r}: {exc.strerror}") from exc
    try:
        with run_lock(out):
            yield out
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()  # only if still empty: a refused run leaves no trace
        raise


def append_metrics(out: str | os.PathLike, record: dict[str, Any]) -> None:
    """Append ``record`` (one update's metrics) as a line of ``out/metrics.jsonl``; a symbolic link or a file that is
    not regular in its place is refused."""
    fileio.append_text(Path(out) / METRICS_FILE, json.dumps(record) + "\n", what="metrics file", error=CheckpointError)


def _parse(path: Path, number: int, body: bytes, keep_after: int | None = None) -> dict[str, Any]:
    """The record of line ``number`` of ``path``, checked: a JSON object with non-negative int ``update`` and
    ``env_steps``; ``CheckpointError`` naming the file and line otherwise. A record whose ``update`` is above
    ``keep_after`` (about to be dropped by a resume) needs only its ``update``."""
    where = f"metrics file {str(path)!r}, line {number}"
    record = fileio.load_json(body, max_depth=MAX_RECORD_DEPTH, what=where, error=CheckpointError)
    if not isinstance(record, dict):
        raise CheckpointError(f"{where} is a JSON {type(record).__name__}, not an object; the file is corrupt")
    for key in ("update", "env_steps"):
        value = record.get(key)
        if type(value) is not int or value < 0:
            shown = "no value" if key not in record else repr(value)
            raise CheckpointError(
                f"{where} has {key}={shown if len(shown) < 40 else shown[:37] + '...'}, not a non-negative int; "
                f"the file is corrupt (remove that line, or the file to start the log afresh)"
            )
        if keep_after is not None and record["update"] > keep_after:
            break
    return record


def _lines(out: str | os.PathLike, keep_after: int | None = None) -> Iterator[tuple[int, bytes, dict | None]]:
    """``(number, bytes, record)`` of every line of ``out/metrics.jsonl`` (``keep_after`` as in :func:`_parse`);
    ``record`` is ``None`` for a blank line or a last line cut short that does not parse (written by a killed
    process)."""
    path = Path(out) / METRICS_FILE
    if not os.path.lexists(path):
        return
    lines = fileio.iter_lines(path, MAX_LINE_BYTES, what="metrics file", error=CheckpointError, follow=False)
    for number, body, ended in lines:
        if not body.strip():
            yield number, body, None
            continue
        try:
            record = _parse(path, number, body, keep_after)
        except CheckpointError:
            if ended:
                raise
            record = None  # cut short by a killed process
        yield number, body, record


def iter_metrics(out: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """Stream the records of ``out/metrics.jsonl`` (checked as the module doc says), in bounded memory."""
    for _, _, record in _lines(out):
        if record is not None:
            yield record


def read_metrics(out: str | os.PathLike) -> list[dict[str, Any]]:
    """Every record of ``out/metrics.jsonl`` (each update of the run, resumed parts included); empty when there is
    none. Raises ``CheckpointError`` naming the line of a malformed record."""
    return list(iter_metrics(out))


def read_evaluations(out: str | os.PathLike) -> list[dict[str, Any]]:
    """The evaluated records of ``out/metrics.jsonl`` reduced to ``update``, ``env_steps`` and the
    ``win_rate_vs_<bot>`` fields: what the learning-curve plot and the run's summary need, in memory proportional to
    the evaluations only."""
    rows = []
    for record in iter_metrics(out):
        rates = {k: v for k, v in record.items() if k.startswith("win_rate_vs_")}
        if rates:
            rows.append({"update": record["update"], "env_steps": record["env_steps"], **rates})
    return rows


def check_metrics(out: str | os.PathLike) -> None:
    """Read all of ``out/metrics.jsonl`` once (streaming) and raise ``CheckpointError`` for a malformed line: the
    check a run does before it is accepted, so that nothing fails at its end."""
    for _ in _lines(out):
        pass


def truncate_metrics(out: str | os.PathLike, update: int) -> None:
    """Drop the records after update ``update`` (and a last line cut short) from ``out/metrics.jsonl``, so that a
    resumed run (or a new one, with ``update=-1``) logs each update once. Streams the file; rewrites it atomically
    only when something is dropped. Raises ``CheckpointError`` for a malformed line, leaving the file unchanged (a
    record to be dropped needs only a valid ``update``)."""
    path = Path(out) / METRICS_FILE
    if update < 0:  # a new run: whatever a run killed before its first checkpoint logged goes
        if not os.path.lexists(path):
            return
        with fileio.open_regular(path, what="metrics file", error=CheckpointError, follow=False) as f:
            empty = not f.read(1)
        if not empty:
            fileio.write_atomic(path, b"", what="metrics file", error=CheckpointError)
        return
    if not any(record is None or record["update"] > update for _, _, record in _lines(out, update)):
        return
    with fileio.atomic_writer(path, what="metrics file", error=CheckpointError) as f:
        for _, body, record in _lines(out, update):
            if record is not None and record["update"] <= update:
                f.write(body + b"\n")


__all__ = [
    "LOCK_FILE",
    "MAX_LINE_BYTES",
    "METRICS_FILE",
    "append_metrics",
    "claim",
    "check_metrics",
    "iter_metrics",
    "read_evaluations",
    "read_metrics",
    "run_lock",
    "truncate_metrics",
]
