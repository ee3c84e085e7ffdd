"""Calibrated time budgets are kept per machine (beside the compilation cache in the CLI): a second resolution with
the same key loads the stored numbers without calibrating, another machine or JAX version does not, and a corrupt
store is ignored with one warning (JSON with a schema check; nothing is ever unpickled)."""

from __future__ import annotations

import json

import jax.numpy as jnp
import pytest

import blokus_jax
from blokus_agents.search import calibration_store
from blokus_agents.search import mcts as search
from blokus_agents.search.calibration_store import CALIBRATION_SCHEMA, CalibrationCacheWarning
from blokus_agents.search.mcts import Budget, calibrate_budget


@pytest.fixture(scope="module")
def simple():
    return blokus_jax.make("simple")


def _constant_search(n: int):
    return lambda key, state: jnp.float32(n)


@pytest.fixture
def store(tmp_path, monkeypatch):
    """A fresh store and an empty in-process cache; calibrating is counted and costs nothing (stubbed)."""
    path = tmp_path / "cache" / calibration_store.CALIBRATION_FILE
    monkeypatch.setattr(calibration_store, "_STORE", [path])
    monkeypatch.setattr(search, "_CALIBRATED", {})
    monkeypatch.setattr(calibration_store, "_WARNED", set())
    calls = []

    def calibrate(env, build, seconds, *args):
        calls.append(seconds)
        return Budget((0, 4), (17, 33))

    monkeypatch.setattr(search, "_calibrate", calibrate)
    return path, calls


def test_a_second_process_loads_the_stored_calibration_without_calibrating(simple, store, monkeypatch):
    path, calls = store
    first = calibrate_budget(simple, _constant_search, 0.5, ("mcts", 32))
    assert calls == [0.5] and first == Budget((0, 4), (17, 33))
    data = json.loads(path.read_text())
    assert data["schema"] == CALIBRATION_SCHEMA and data["entries"][0]["sims"] == [17, 33]
    monkeypatch.setattr(search, "_CALIBRATED", {})  # a new process: only the file remains
    assert calibrate_budget(simple, _constant_search, 0.5, ("mcts", 32)) == first and calls == [0.5]
    calibrate_budget(simple, _constant_search, 0.5, ("mcts", 64))  # other agent settings: calibrated
    assert calls == [0.5, 0.5] and len(json.loads(path.read_text())["entries"]) == 2
    monkeypatch.setattr(search, "_CALIBRATED", {})
    monkeypatch.setattr(calibration_store, "_machine", lambda: {"jax": "0.0.1", "cpu": "another"})  # another machine
    calibrate_budget(simple, _constant_search, 0.5, ("mcts", 32))
    assert calls == [0.5, 0.5, 0.5]


@pytest.mark.parametrize(
    "content",
    [
        b"\x80\x04not json",  # e.g. a pickle: never decoded
        b'{"schema": "something else", "entries": []}',
        json.dumps(
            {"schema": CALIBRATION_SCHEMA, "entries": [{"key": "0" * 64, "starts": [0], "sims": [-5]}]}
        ).encode(),
        b"[" * 100_000,
    ],
)
def test_a_corrupt_store_is_ignored_with_one_warning_and_rewritten(simple, store, content):
    path, calls = store
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    with pytest.warns(CalibrationCacheWarning, match="ignored") as caught:
        budget = calibrate_budget(simple, _constant_search, 0.5, ("mcts", 32))
    assert calls == [0.5] and budget == Budget((0, 4), (17, 33))
    assert len([w for w in caught if issubclass(w.category, CalibrationCacheWarning)]) == 1
    assert json.loads(path.read_text())["schema"] == CALIBRATION_SCHEMA  # rewritten with the new calibration


def test_the_remaining_time_is_estimated_from_the_last_calibration_here(simple, store, monkeypatch):
    path, calls = store
    seen = []

    def calibrate(env, build, seconds, probe, max_sims, phases, step):
        seen.append(calibration_store.calibration_remaining())
        return Budget((0,), (9,))

    calibrate_budget(simple, _constant_search, 0.5, ("mcts", 1))
    entries = json.loads(path.read_text())["entries"]
    entries[-1]["took_s"] = 120.0
    path.write_text(json.dumps({"schema": CALIBRATION_SCHEMA, "entries": entries}))
    monkeypatch.setattr(search, "_calibrate", calibrate)
    calibrate_budget(simple, _constant_search, 0.5, ("mcts", 2))
    assert seen and 100 < seen[0] <= 120  # about the 120 s the last calibration of simple took
    assert calibration_store.calibration_remaining() is None  # none under way


def test_without_a_store_nothing_is_written(simple, store, monkeypatch, tmp_path):
    monkeypatch.setattr(calibration_store, "_STORE", [None])
    calibrate_budget(simple, _constant_search, 0.5, ("mcts", 3))
    assert not (tmp_path / "cache").exists()
