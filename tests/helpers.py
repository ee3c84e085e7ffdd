"""Helpers shared by the test files: the repository's paths, the Pentobi reference data, a mask-to-placements
decoder, an old-format checkpoint writer and the smallest AlphaZero config the training tests run. Test files import
them with ``from helpers import ...`` (``tests/`` is on ``sys.path`` through ``tests/conftest.py``)."""

from __future__ import annotations

import functools
import gzip
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

import blokus_jax
from blokus_agents.players.configs import AZConfig

#: The repository's root folder and the tests' reference data.
ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = ROOT / "tests" / "data"


def load_script(path: Path, name: str | None = None) -> ModuleType:
    """A Python file that is not in a package (a benchmark or example script) as a module named ``name`` (default:
    the file's stem), registered in ``sys.modules`` first, as dataclasses look their module up there."""
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def write_old_checkpoint(run_dir: Path, step: int, params, state: dict, meta: dict) -> None:
    """Write checkpoint ``step`` under ``run_dir`` with orbax directly, as older formats of
    ``blokus_agents.training.checkpoint`` laid it out (items ``params``, ``state`` and ``meta``; no buffer item), for
    the tests that old checkpoints still load."""
    import orbax.checkpoint as ocp

    manager = ocp.CheckpointManager(
        run_dir.absolute() / "checkpoints",
        item_names=("params", "state", "meta"),
        options=ocp.CheckpointManagerOptions(enable_async_checkpointing=False),
    )
    manager.save(
        step,
        args=ocp.args.Composite(
            params=ocp.args.StandardSave(params), state=ocp.args.StandardSave(state), meta=ocp.args.JsonSave(meta)
        ),
    )
    manager.wait_until_finished()
    manager.close()


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


def mask_placements(env, mask) -> set[frozenset]:
    """The placements (frozensets of ``(row, col)``) whose bits are set in a legal mask, decoded with
    ``env.action_cells``; the pass bit is ignored."""
    mask = np.asarray(mask)
    return {frozenset(map(tuple, env.action_cells(int(a)).tolist())) for a in np.flatnonzero(mask[:-1])}


#: The smallest AlphaZero run the training tests play: ``simple``, 4 games of 6 moves an update, 4 simulations over 4
#: candidates, a one-block network of 8 channels.
TINY_AZ = AZConfig(
    variant="simple",
    num_envs=4,
    num_steps=6,
    total_steps=4 * 6 * 3,
    sims=4,
    k=4,
    considered=2,
    games_per_env=2,
    batch_size=8,
    train_steps=2,
    channels=8,
    blocks=1,
    value_hidden=16,
)


#: The registered variants on the 20x20 board: parametrizations over them are marked ``slow`` (tests/conftest.py).
FULL_BOARDS = frozenset({"classic", "classic_2p", "classic_3p"})

#: The colour and player structures of the 20x20 Classic variants, each on an 8x8 board with ``simple``'s nine
#: pieces (start cells in the corners): what depends on players, colours and a shared colour is tested on these in
#: seconds; what depends on the board's size keeps the full boards.
SMALL_BOARD_VARIANTS = ("classic_8x8", "classic_2p_8x8", "classic_3p_8x8")


def small_board(name: str):
    """The `Env` of one of :data:`SMALL_BOARD_VARIANTS` (the registered variant it names, on an 8x8 board)."""
    assert name in SMALL_BOARD_VARIANTS, name
    corners = (((0, 0),), ((0, 7),), ((7, 7),), ((7, 0),))
    return blokus_jax.make(
        name.removesuffix("_8x8"),
        name=name,
        board_shape=(8, 8),
        start_cells=corners,
        pieces=blokus_jax.get_variant("simple").pieces,
    )


def make_env(name: str):
    """`blokus_jax.make(name)`, or :func:`small_board` for a name of :data:`SMALL_BOARD_VARIANTS`."""
    return small_board(name) if name in SMALL_BOARD_VARIANTS else blokus_jax.make(name)
