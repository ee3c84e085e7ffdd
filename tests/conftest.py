"""Shared fixtures of the core test suite: the Pentobi reference data and a mask-to-placements helper."""

from __future__ import annotations

import functools
import gzip
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

DATA_DIR = Path(__file__).parent / "data"

#: Pentobi variant ids of the reference files and the registered blokus_jax names they correspond to.
ORACLE_VARIANTS = {
    "classic": "classic",
    "classic_2": "classic_2p",
    "classic_3": "classic_3p",
    "duo": "duo",
    "junior": "junior",
}


@functools.cache
def load_oracle(file_name: str) -> dict:
    """The parsed reference file ``tests/data/<file_name>`` (e.g. ``"duo_dev.json.gz"``), read once per session."""
    with gzip.open(DATA_DIR / file_name, "rt") as handle:
        return json.load(handle)


@pytest.fixture(scope="session")
def oracle() -> Callable[[str], dict]:
    """A loader ``oracle(file_name) -> dict`` for the reference files, cached for the whole session."""
    return load_oracle


def mask_placements(env, mask) -> set[frozenset]:
    """The placements (frozensets of ``(row, col)``) whose bits are set in a legal mask, decoded with
    ``env.action_cells``; the pass bit is ignored."""
    mask = np.asarray(mask)
    return {frozenset(map(tuple, env.action_cells(int(a)).tolist())) for a in np.flatnonzero(mask[:-1])}


@pytest.fixture(scope="session")
def placements_of() -> Callable:
    """The helper :func:`mask_placements` as a fixture: ``placements_of(env, mask) -> set[frozenset]``."""
    return mask_placements
