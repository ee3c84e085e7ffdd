"""Checkpoints are ordered by the update recorded inside them: a copied or renamed checkpoint folder is refused
by name, and a corrupt array file is reported by checkpoint and what to do, never by orbax's internal file names."""

from __future__ import annotations

import json
import shutil

import jax
import pytest

from blokus_agents.players import checkpoint_index, checkpoint_read
from blokus_agents.players.configs import PPOConfig
from blokus_agents.training import checkpoint
from blokus_agents.training.ppo import make_train
from blokus_agents.training.train import run
from blokus_jax.errors import CheckpointError

TINY = PPOConfig(
    variant="simple",
    num_envs=4,
    num_steps=4,
    total_steps=64,
    update_epochs=1,
    num_minibatches=2,
    channels=4,
    blocks=1,
    value_hidden=8,
)


@pytest.fixture(scope="module")
def trainer():
    return make_train(TINY)


@pytest.fixture()
def two(tmp_path, trainer):
    """A run directory with checkpoints 1 and 2."""
    runner, _ = trainer.update(trainer.init(jax.random.PRNGKey(0)))
    checkpoint.save(tmp_path, runner, TINY)
    runner, _ = trainer.update(runner)
    checkpoint.save(tmp_path, runner, TINY)
    return tmp_path


def test_a_checkpoint_records_its_update_and_a_stale_copy_under_a_larger_number_is_refused(two, trainer):
    assert checkpoint_read.read_meta(two, 1)["update"] == 1 and checkpoint_index.latest_step(two) == 2
    shutil.copytree(two / "checkpoints" / "1", two / "checkpoints" / "1000")
    message = r"'checkpoints/1000' of .* holds update 1, not 1000 .*delete that folder"
    with pytest.raises(CheckpointError, match=message):
        checkpoint_index.latest_step(two)
    with pytest.raises(CheckpointError, match=message):
        checkpoint.restore(two, trainer)
    with pytest.raises(CheckpointError, match=message):  # before any work: nothing is compiled or trained
        run(TINY, two, resume=True, progress=False, mesh=None)


def test_a_copy_from_before_checkpoints_recorded_their_update_is_refused_when_restored(two, trainer):
    meta_path = two / "checkpoints" / "1" / "meta" / "metadata"
    meta = json.loads(meta_path.read_text())
    del meta["update"]  # as saved before the update was recorded in the metadata
    meta_path.write_text(json.dumps(meta))
    shutil.copytree(two / "checkpoints" / "1", two / "checkpoints" / "7")
    assert checkpoint_index.latest_step(two) == 7  # only the arrays say which update it is
    with pytest.raises(CheckpointError, match="'checkpoints/7' of .* holds update 1, not 7"):
        checkpoint.restore(two, trainer)


def test_a_zeroed_array_file_names_the_checkpoint_and_what_to_do_not_orbax_internals(two, trainer):
    data = [p for p in (two / "checkpoints" / "2" / "state").rglob("*") if p.is_file() and p.parent.name == "d"]
    assert data
    for p in data:
        p.write_bytes(b"\0" * p.stat().st_size)
    with pytest.raises(CheckpointError) as caught:
        checkpoint.restore(two, trainer)
    message = str(caught.value)
    assert "cannot restore checkpoint 2" in message and "delete its folder" in message
    assert "ocdbt" not in message.lower() and ".zarray" not in message and "driver" not in message
