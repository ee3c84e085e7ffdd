"""Calibrated time budgets kept between runs: the simulations a `seconds=` search (`strong`) affords on this
machine, stored as JSON (never pickled, checked against a schema on load) in a file that `blokus-jax` commands
keep inside the compilation cache's folder, keyed by the agent's settings, the JAX version, the device and the CPU;
and the progress of the calibration under way, for a remaining-time estimate.

The calibration itself is `blokus_agents.search.mcts.calibrate_budget`.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import threading
import time
import warnings
from pathlib import Path
from typing import Any

import jax

from blokus_jax.errors import BlokusError, RecordError
from blokus_jax.io import fileio

#: The file name of the calibration store inside the compilation cache's folder (`blokus-jax` commands).
CALIBRATION_FILE = "blokus-calibration.json"
#: The schema tag of that file; a file with another one is ignored (with a warning) and rewritten.
CALIBRATION_SCHEMA = "blokus-jax calibration 1"
#: Bounds on the store: entries kept (the oldest are dropped) and bytes read.
MAX_STORED_CALIBRATIONS = 256
MAX_CALIBRATION_BYTES = 1 << 20
#: The most simulations a stored phase may have (a sanity bound on what is read back).
MAX_STORED_SIMS = 1 << 20


class CalibrationCacheWarning(UserWarning):
    """The calibration store could not be read (corrupt, foreign or unreadable: it is ignored) or written."""


#: The store's path (`None`: calibrations are kept in this process only); see `use_calibration_store`.
_STORE: list[Path | None] = [None]
_STORE_LOCK = threading.Lock()
#: Stores already warned about in this process.
_WARNED: set[str] = set()


def use_calibration_store(path: str | os.PathLike | None) -> None:
    """Keep calibrated `seconds=` budgets in the JSON file `path` (`None`: in this process only), so that a
    later process on the same machine with the same agent settings, JAX version and CPU loads them instead of
    calibrating again (`blokus-jax` commands put it beside the compilation cache). Never pickled: JSON with a
    schema check, a corrupt or foreign file is ignored with a `CalibrationCacheWarning`."""
    _STORE[0] = None if path is None else Path(path)


def _cpu_model() -> str:
    """The CPU's model name (`/proc/cpuinfo` on Linux, else `platform.processor()`)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _machine() -> dict[str, Any]:
    """What a calibration depends on besides the agent: JAX's version, the device, the CPU and its usable cores."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    device = jax.devices()[0]
    return {
        "jax": jax.__version__,
        "backend": jax.default_backend(),
        "device": f"{jax.device_count()}x {device.device_kind}",
        "cpu": _cpu_model(),
        "cores": cores,
    }


def _store_key(key: tuple) -> str:
    """The store's key of a calibration cache key (the variant, the agent's options, the budget) on this machine."""
    text = json.dumps([repr(part) for part in key] + [_machine()], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _valid_entry(entry: Any) -> bool:
    """Whether `entry` of the store has the fields a stored `Budget` needs, in range."""
    if not isinstance(entry, dict) or not isinstance(entry.get("key"), str) or len(entry["key"]) != 64:
        return False
    starts, sims, took = entry.get("starts"), entry.get("sims"), entry.get("took_s")
    if not (isinstance(starts, list) and isinstance(sims, list) and 1 <= len(starts) == len(sims) <= 16):
        return False
    if not all(type(v) is int for v in starts + sims) or starts[0] != 0 or starts != sorted(starts):
        return False
    return all(1 <= n <= MAX_STORED_SIMS for n in sims) and isinstance(took, (int, float)) and 0 <= took < 1e6


def _read_store() -> list[dict]:
    """The entries of the calibration store (empty without one; a corrupt or foreign file warns and counts as
    empty)."""
    path = _STORE[0]
    if path is None or not os.path.lexists(path):
        return []
    try:
        data = fileio.load_json(
            fileio.read_bytes(path, MAX_CALIBRATION_BYTES, what="calibration cache", error=RecordError),
            max_depth=8,
            what=f"calibration cache {str(path)!r}",
            error=RecordError,
        )
        if not (isinstance(data, dict) and data.get("schema") == CALIBRATION_SCHEMA):
            raise RecordError(f"calibration cache {str(path)!r} does not have the schema {CALIBRATION_SCHEMA!r}")
        entries = data.get("entries")
        if not (isinstance(entries, list) and all(_valid_entry(e) for e in entries)):
            raise RecordError(f"calibration cache {str(path)!r} holds an entry that is not a calibration")
    except BlokusError as exc:
        if str(path) not in _WARNED:  # once a process, however often the store is read
            _WARNED.add(str(path))
            warnings.warn(
                f"{exc}; it is ignored (calibrating again) and rewritten with the next calibration",
                CalibrationCacheWarning,
                stacklevel=3,
            )
        return []
    return entries


def stored(key: tuple) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The stored calibration `(starts, sims)` of `key` on this machine, or `None` (also without a store)."""
    if _STORE[0] is None:
        return None
    wanted = _store_key(key)
    for entry in _read_store():
        if entry["key"] == wanted:
            return tuple(entry["starts"]), tuple(entry["sims"])
    return None


def typical_seconds(variant_name: str) -> float | None:
    """How long the newest stored calibration of `variant_name` (else of any variant) took, for an estimate."""
    entries = _read_store() if _STORE[0] is not None else []
    same = [e for e in entries if e.get("variant") == variant_name]
    chosen = (same or entries)[-1:]
    return float(chosen[0]["took_s"]) if chosen else None


def store(key: tuple, starts: tuple[int, ...], sims: tuple[int, ...], took: float, variant_name: str) -> None:
    """Add (or replace) the calibration `(starts, sims)` of `key` in the store (nothing without one), keeping the
    newest entries; a failure to write is one `CalibrationCacheWarning`, never an error.

    Args:
        key: The calibration's cache key (the variant, the agent's options, the budget); the store adds this
            machine to it.
        starts: The pieces on the board at which each phase starts (`Budget.starts`).
        sims: The simulations of each phase (`Budget.sims`).
        took: The seconds the calibration took (a later one's time estimate).
        variant_name: The variant's name, stored with the entry.
    """
    path = _STORE[0]
    if path is None:
        return
    wanted = _store_key(key)
    with _STORE_LOCK:
        entries = [e for e in _read_store() if e["key"] != wanted]
        entries.append(
            {
                "key": wanted,
                "variant": variant_name,
                "starts": list(starts),
                "sims": list(sims),
                "took_s": round(float(took), 1),
                "machine": _machine(),
                "saved": time.strftime("%Y-%m-%d %H:%M:%S"),
            }
        )
        text = json.dumps({"schema": CALIBRATION_SCHEMA, "entries": entries[-MAX_STORED_CALIBRATIONS:]}, indent=1)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fileio.write_atomic(path, text, what="calibration cache", error=RecordError)
        except (BlokusError, OSError) as exc:
            warnings.warn(
                f"the calibration could not be kept for later runs ({exc}); it is used in this run only",
                CalibrationCacheWarning,
                stacklevel=3,
            )


#: The calibration under way (`started`: its clock; `expected`: seconds it should take in all, or `None`).
_PROGRESS: dict[str, float | None] = {"started": None, "expected": None}


def calibration_remaining() -> float | None:
    """Seconds the calibration under way (in any thread) should still take, estimated from the last calibration
    stored on this machine and, once the probe search is timed, from its own progress; `None` when none runs or
    there is nothing to estimate from yet."""
    started, expected = _PROGRESS["started"], _PROGRESS["expected"]
    if started is None or expected is None:
        return None
    return max(0.0, expected - (time.perf_counter() - started))
