"""A checkpoint of another network or batch is refused from its metadata, naming the array, before orbax reads any
array: a restore that failed part-way left TensorStore reads pending on a closed event loop, which printed pages of
``PytestUnraisableExceptionWarning`` ("Event loop is closed", "Exception ignored in: <coroutine ...>")."""

from __future__ import annotations

import gc
import json
import sys

import jax
import jax.numpy as jnp
import pytest

from blokus_agents.players.configs import PPOConfig
from blokus_agents.training import checkpoint
from blokus_agents.training.ppo import make_train
from blokus_jax.errors import CheckpointError

TINY = PPOConfig(variant="simple", num_envs=4, num_steps=4, total_steps=64, channels=4, blocks=1, value_hidden=8)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A run directory with one checkpoint (update 1) of :data:`TINY`, never trained (only its start is compiled)."""
    run = tmp_path_factory.mktemp("run")
    runner = jax.jit(make_train(TINY).init_pure)(jax.random.PRNGKey(0)).replace(update=jnp.int32(1))
    assert checkpoint.save(run, runner, TINY) == 1
    return run


@pytest.mark.slow
@pytest.mark.parametrize(
    "change, message",
    [
        (dict(channels=8), r"\(params/params/Conv3x3_0/Dense_0/bias: saved float32\[4\], expected float32\[8\]\)"),
        (dict(num_envs=8), r"\(state/env_state/board: saved int8\[4, 7, 7\], expected int8\[8, 7, 7\]\)"),
    ],
)
def test_a_checkpoint_of_another_network_or_batch_is_refused_naming_the_array(saved, change, message):
    other = TINY.replace(**change)
    meta = saved / "checkpoints" / "1" / "meta" / "metadata"
    original = meta.read_text()
    gc.collect()  # what earlier tests left pending is reported to pytest now, not counted against this restore
    pending, hook = [], sys.unraisablehook
    try:
        meta.write_text(json.dumps({**json.loads(original), "config": other.to_dict()}))  # as a run of it would save
        sys.unraisablehook = pending.append
        with pytest.raises(CheckpointError, match="does not match the network/batch of its config " + message):
            checkpoint.restore(saved, make_train(other))
        gc.collect()  # anything the refused restore left pending (an unclosed reader, a thread) is reported now
    finally:
        sys.unraisablehook = hook
        meta.write_text(original)
    assert not pending, [str(p.exc_value) for p in pending]
    assert int(checkpoint.restore(saved, make_train(TINY)).update) == 1  # the real config still restores
