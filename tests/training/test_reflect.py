"""AlphaZero's reflection augmentation (``AZConfig.reflect``, ``--reflect``): a replayed position trained as its
mirror image in the board's diagonal keeps its targets consistent (the reflected candidates are legal in the
reflected position, the observation is the reflected one, the value is the same), training with it runs, and a
variant where the reflection is not a symmetry is refused before anything is compiled."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from helpers import TINY_AZ

from blokus_agents.players.configs import AZConfig
from blokus_agents.training.alphazero import make_reflect, make_train
from blokus_agents.training.replay import buffer_sample
from blokus_jax import make, rules
from blokus_jax.errors import ConfigError
from blokus_jax.symmetry import reflected_actions

SMALL = TINY_AZ.replace(reflect=0.5)


@pytest.fixture(scope="module")
def played():
    """A run of ``SMALL`` (half the replayed positions reflected) after four updates, and its last metrics."""
    trainer = make_train(SMALL)
    runner = trainer.init(jax.random.key(0))
    for _ in range(4):
        runner, metrics = trainer.update(runner)
    return trainer, runner, jax.device_get(metrics)


def test_training_with_reflection_runs(played):
    _, runner, metrics = played
    assert int(runner.update) == 4
    for name in ("policy_loss", "value_loss", "policy_kl"):
        assert np.isfinite(float(metrics[name])), name


def test_a_reflected_batch_is_the_mirror_image_of_the_positions(played):
    trainer, runner, _ = played
    env = trainer.env
    batch = jax.vmap(buffer_sample, in_axes=(0, 0, None))(jax.random.split(jax.random.key(5), 4), runner.buffer, 2)
    mirrored = make_reflect(SMALL.replace(reflect=1.0), env)(jax.random.key(6), batch)
    table = reflected_actions(env.variant)
    b, m = jax.device_get(batch), jax.device_get(mirrored)
    assert b.valid.any()
    np.testing.assert_array_equal(m.candidates, table[b.candidates])
    np.testing.assert_array_equal(m.obs.planes, np.swapaxes(b.obs.planes, -3, -2))
    for field in ("weights", "value", "valid"):
        np.testing.assert_array_equal(getattr(m, field), getattr(b, field))
    mask = np.asarray(rules.legal_mask(mirrored.legal_bits, env.board_shape[1]))
    original = np.asarray(rules.legal_mask(batch.legal_bits, env.board_shape[1]))
    for i in zip(*np.nonzero(b.valid)):
        np.testing.assert_array_equal(mask[i][table], original[i])
        chosen = b.weights[i] > 0
        assert mask[i][m.candidates[i][chosen]].all()
    # reflect=0.5 mirrors some positions and keeps others
    half = jax.device_get(make_reflect(SMALL, env)(jax.random.key(7), batch))
    flipped = (half.candidates != b.candidates).any(-1) & b.valid
    kept = (half.candidates == b.candidates).all(-1) & b.valid
    assert flipped.any() and kept.any()


def test_no_reflection_is_no_augmentation():
    assert make_reflect(SMALL.replace(reflect=0.0), make("simple")) is None


def test_reflection_is_refused_where_it_is_not_a_symmetry():
    with pytest.raises(ConfigError, match="not a symmetry"):
        make_train(AZConfig(variant="classic", num_envs=2, batch_size=8, reflect=0.5))
    with pytest.raises(ConfigError, match="reflect"):
        AZConfig(reflect=1.5)
