"""`prior="model"`: a run whose network carries the fitted move model (PPO and AlphaZero on Duo), through an update,
a checkpoint, a run-directory agent, an exported baseline and the `train` flag."""

from __future__ import annotations

import argparse

import jax
import numpy as np
import pytest

from blokus_agents import resolve_agent
from blokus_agents.players import baselines, checkpoint_read
from blokus_agents.players.configs import PPOConfig
from blokus_agents.players.networks import observation_model
from blokus_agents.training import checkpoint, ppo
from blokus_jax.errors import ConfigError

TINY = PPOConfig(
    variant="duo",
    num_envs=2,
    num_steps=4,
    total_steps=2 * 4 * 2,
    update_epochs=1,
    num_minibatches=2,
    channels=4,
    blocks=1,
    value_hidden=8,
    prior="model",
)


@pytest.fixture(scope="module")
def trained():
    trainer = ppo.make_train(TINY)
    first = trainer.init(jax.random.PRNGKey(0))  # runners keep raw uint32 keys
    before = jax.device_get(first.params)
    runner, metrics = trainer.update(first)
    return trainer, before, runner, jax.device_get(metrics)


def test_a_ppo_update_learns_the_head_and_keeps_the_model(trained):
    trainer, before, runner, metrics = trained
    after = jax.device_get(runner.params)["params"]
    assert all(np.isfinite(float(v)) for v in metrics.values())
    np.testing.assert_array_equal(after["move_model"], np.asarray(observation_model("duo").weights, np.float32))
    np.testing.assert_array_equal(after["move_model"], before["params"]["move_model"])
    changed = [
        k
        for k in after
        if k != "move_model"
        and any(np.any(a != b) for a, b in zip(jax.tree.leaves(after[k]), jax.tree.leaves(before["params"][k])))
    ]
    assert changed  # the rest of the network learned


def test_the_prior_travels_with_checkpoints_run_agents_and_baselines(trained, tmp_path):
    trainer, _, runner, _ = trained
    env = trainer.env
    checkpoint.save(tmp_path / "run", runner, trainer.config)
    network, params = checkpoint_read.load_network(tmp_path / "run", env)
    assert network.prior == "model" and checkpoint_read.load_config(tmp_path / "run").prior == "model"
    state = env.init()
    expected, _ = jax.jit(trainer.network.apply)(runner.params, env.observe(state))
    got, _ = jax.jit(network.apply)(params, env.observe(state))
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-6)
    agent = resolve_agent(str(tmp_path / "run"), env)  # a PPO run directory plays its network's argmax
    assert bool(env.is_legal(state, agent(jax.random.key(0), state)))

    baselines.export_baseline(
        tmp_path / "run", "tiny_prior", tmp_path / "out", command="blokus-jax train --prior model"
    )
    net, loaded, meta = baselines.load_baseline("tiny_prior", env, tmp_path / "out")
    assert meta["network"]["prior"] == "model" and net.prior == "model"
    jax.tree.map(np.testing.assert_array_equal, jax.device_get(loaded), jax.device_get(params))


def test_a_baseline_with_a_bad_prior_is_refused(tmp_path):
    meta = {"network": {"channels": 4, "blocks": 0, "value_hidden": 8, "prior": "magic"}}
    with pytest.raises(Exception, match="prior"):
        baselines.check_meta({**_valid_meta(), **meta}, "x")


def _valid_meta() -> dict:
    return {
        "format_version": baselines.FORMAT_VERSION,
        "name": "x",
        "variant": "duo",
        "obs_version": 1,
        "algorithm": "ppo",
        "network": {"channels": 4, "blocks": 0, "value_hidden": 8},
        "sims": 0,
        "sha256": "0" * 64,
        "command": "train",
        "source_run": "runs/x",
        "step": 1,
        "train_config": {},
        "date": "2026-12-04",
        "notes": "",
    }


def test_the_prior_flag_parses_and_a_variant_without_a_model_is_refused():
    from blokus_agents import cli
    from blokus_agents.cli.train import _new_config

    parser = argparse.ArgumentParser()
    cli.train.setup(parser)
    assert _new_config(parser.parse_args(["--variant", "duo", "--prior", "model"])).prior == "model"
    assert _new_config(parser.parse_args([])).prior == "none"
    assert PPOConfig.from_dict({k: v for k, v in TINY.to_dict().items() if k != "prior"}).prior == "none"
    with pytest.raises(ConfigError, match="no move model over observation planes"):
        ppo.make_train(TINY.replace(variant="simple"))
