"""Mixed precision: bf16 compute with float32 parameters in the network, both trainers, checkpoints and the CLI flag;
and the policy head's two equivalent forms."""

from __future__ import annotations

import argparse

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import TINY_AZ

import blokus_jax
from blokus_agents.players import checkpoint_read, networks
from blokus_agents.players.configs import AZConfig, PPOConfig
from blokus_agents.players.networks import make_network, orientation_centres, place_logits, resolve_precision
from blokus_agents.training import alphazero, checkpoint, ppo
from blokus_jax.errors import ConfigError

TINY_PPO = PPOConfig(
    variant="simple",
    num_envs=4,
    num_steps=4,
    total_steps=4 * 4 * 2,
    update_epochs=1,
    num_minibatches=2,
    channels=8,
    blocks=1,
    value_hidden=16,
)


def _observations(env, batch: int = 16):
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(0), batch))
    step = jax.jit(jax.vmap(env.step_autoreset))
    for i in range(4):
        logits = jnp.where(states.legal_action_mask, 0.0, -jnp.inf)
        states, _, _ = step(states, jax.random.categorical(jax.random.key(i + 1), logits))
    return jax.jit(jax.vmap(env.observe))(states)


def _leaf_specs(tree):
    return jax.tree_util.tree_map_with_path(lambda path, x: (jax.tree_util.keystr(path), x.shape, x.dtype), tree)


def test_auto_is_bf16_on_accelerators_and_f32_on_cpu_and_a_bad_value_is_refused():
    assert resolve_precision("auto", "cpu") == "f32"
    assert all(resolve_precision("auto", b) == "bf16" for b in ("gpu", "cuda", "rocm", "tpu"))
    assert resolve_precision("bf16", "cpu") == "bf16" and resolve_precision("f32", "gpu") == "f32"
    assert make_network(blokus_jax.make("simple")).precision == resolve_precision("auto")
    with pytest.raises(ConfigError, match="unknown precision 'fp16'"):
        resolve_precision("fp16")
    with pytest.raises(ConfigError, match="precision 'half' is not a precision"):
        PPOConfig(precision="half")
    with pytest.raises(ConfigError, match="precision"):
        AZConfig(precision="bfloat16")


def test_bf16_network_has_the_f32_parameters_and_gives_the_same_outputs_within_tolerance():
    env = blokus_jax.make("simple")
    obs = _observations(env)
    f32 = make_network(env, channels=8, blocks=1, value_hidden=16, precision="f32")
    bf16 = make_network(env, channels=8, blocks=1, value_hidden=16, precision="bf16")
    params = jax.jit(f32.init)(jax.random.key(0), obs)
    bf16_params = jax.jit(bf16.init)(jax.random.key(0), obs)
    assert _leaf_specs(bf16_params) == _leaf_specs(params)  # same tree, shapes and float32 dtypes
    assert all(x.dtype == jnp.float32 for x in jax.tree.leaves(params))
    logits, value = jax.jit(f32.apply)(params, obs)
    logits16, value16 = jax.jit(bf16.apply)(params, obs)
    assert logits16.dtype == value16.dtype == jnp.float32  # cast before the masked softmax and the losses
    scale = float(jnp.max(jnp.abs(logits)))
    np.testing.assert_allclose(logits16, logits, atol=0.03 * scale + 1e-3)
    np.testing.assert_allclose(value16, value, atol=0.03 * float(jnp.max(jnp.abs(value))) + 1e-3)
    assert not np.array_equal(np.asarray(logits16), np.asarray(logits))  # it does compute in bf16


@pytest.mark.parametrize("variant", ["simple", "duo"])
def test_both_policy_head_forms_read_the_same_logits_and_gradients(variant):
    env = blokus_jax.make(variant)
    centres = orientation_centres(env)
    planes = jax.random.normal(jax.random.key(0), (3, *env.board_shape, len(centres)))
    cotangent = jax.random.normal(jax.random.key(1), (3, env.num_actions - 1))
    out = {form: jax.jit(lambda p, form=form: place_logits(p, centres, form))(planes) for form in networks.HEAD_FORMS}
    np.testing.assert_array_equal(out["gather"], out["slices"])
    grads = {
        form: jax.jit(jax.grad(lambda p, form=form: jnp.sum(place_logits(p, centres, form) * cotangent)))(planes)
        for form in networks.HEAD_FORMS
    }
    np.testing.assert_array_equal(grads["gather"], grads["slices"])
    with pytest.raises(ConfigError, match="policy head form"):
        place_logits(planes, centres, "onehot")


def _all_f32(params) -> bool:
    return all(x.dtype == jnp.float32 for x in jax.tree.leaves(params))


def test_a_ppo_update_in_bf16_keeps_float32_parameters_and_optimiser_state():
    trainer = ppo.make_train(TINY_PPO.replace(precision="bf16"))
    assert trainer.network.precision == "bf16"
    runner, metrics = trainer.update(trainer.init(jax.random.PRNGKey(0)))
    assert _all_f32(runner.params)
    assert all(x.dtype != jnp.bfloat16 for x in jax.tree.leaves(runner.opt_state))
    assert all(np.isfinite(float(v)) for v in jax.device_get(metrics).values())


def test_an_alphazero_update_in_bf16_keeps_float32_parameters_and_a_bf16_checkpoint_resumes_in_f32(tmp_path):
    trainer = alphazero.make_train(TINY_AZ.replace(precision="bf16"))
    assert trainer.network.precision == "bf16"
    runner, metrics = trainer.update(trainer.init(jax.random.PRNGKey(0)))
    assert _all_f32(runner.params)
    assert all(x.dtype != jnp.bfloat16 for x in jax.tree.leaves(runner.opt_state))
    assert all(np.isfinite(float(v)) for v in jax.device_get(metrics).values())

    saved = jax.device_get(runner.params)
    checkpoint.save(tmp_path, runner, trainer.config)
    network, params = checkpoint_read.load_network(tmp_path, trainer.env)
    assert network.precision == "bf16"  # the run's own precision
    assert _leaf_specs(params) == _leaf_specs(saved)
    jax.tree.map(np.testing.assert_array_equal, params, saved)
    f32 = alphazero.make_train(TINY_AZ.replace(precision="f32"))
    restored = checkpoint.restore(tmp_path, f32)  # a resumed run may change its precision
    jax.tree.map(np.testing.assert_array_equal, restored.params, saved)
    logits, _ = jax.jit(f32.network.apply)(restored.params, _observations(f32.env, 2))
    assert logits.dtype == jnp.float32 and bool(jnp.all(jnp.isfinite(logits)))
    with pytest.raises(Exception, match="different config"):
        checkpoint.restore(tmp_path, alphazero.make_train(TINY_AZ.replace(precision="f32", seed=1)))


def test_configs_without_precision_read_back_as_auto():
    data = TINY_PPO.to_dict()
    assert data.pop("precision") == "auto"
    assert PPOConfig.from_dict(data).precision == "auto"
    assert PPOConfig.from_dict({**data, "precision": "bf16"}).precision == "bf16"


def test_the_precision_flag_parses_and_a_bad_value_is_refused_with_the_choices(capsys):
    from blokus_agents import cli
    from blokus_agents.cli.train import _new_config

    parser = argparse.ArgumentParser()
    cli.train.setup(parser)
    # one declaration: the flag's choices are the config field's, which the network checks against
    flag = next(action for action in parser._actions if action.dest == "precision")
    assert tuple(flag.choices) == PPOConfig.options()["precision"].choices == AZConfig.options()["precision"].choices
    assert PPOConfig.options()["precision"].choices is networks.PRECISION_CHOICES
    assert _new_config(parser.parse_args(["--precision", "bf16"])).precision == "bf16"
    assert _new_config(parser.parse_args(["--algo", "alphazero", "--precision", "f32"])).precision == "f32"
    assert _new_config(parser.parse_args([])).precision == "auto"
    with pytest.raises(SystemExit) as exc:
        cli.main(["train", "--precision", "fp16"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "argument --precision: invalid choice: 'fp16'" in err and "bf16" in err and "Traceback" not in err
