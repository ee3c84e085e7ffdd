"""Supervised start-up (`blokus_agents.training.pretrain`) and PPO's KL term toward the starting policy.

The learning target is hand-made and exact: a teacher network (another initialisation of the same architecture)
labels random positions of `simple` with its argmax move; the student, fitted on some games, must rank the
teacher's move first in held-out games far more often than it did before fitting. The run-directory test
pretrains on three Duo games of Pentobi level-6 self-play (`tests/data/duo_level6_3games.blksgf`) and continues
the run with PPO through `--init-from`."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import ROOT

import blokus_jax
from blokus_agents.core.masking import masked_logits
from blokus_agents.players import checkpoint_read
from blokus_agents.players.configs import PPOConfig, PretrainSettings
from blokus_agents.players.networks import config_network
from blokus_agents.search.positions import Positions
from blokus_agents.training.ppo import make_train
from blokus_agents.training.pretrain import pretrain, pretrain_run, record_paths, split_by_games
from blokus_jax.errors import ConfigError

SMALL = PPOConfig(variant="simple", channels=8, blocks=1, value_hidden=16)
GAMES = ROOT / "tests" / "data" / "duo_level6_3games.blksgf"


def _teacher_positions(games: int, seed: int) -> tuple[Positions, object, object]:
    """Positions with a choice from `games` random games of `simple`, labelled by a fixed random network's argmax;
    outcome +1 for the first player's positions and -1 for the second's (a learnable value target)."""
    env = blokus_jax.make("simple")
    network = config_network(SMALL, env)
    obs = jax.tree.map(lambda x: x[None], env.observe(env.init()))
    teacher = jax.jit(network.init)(jax.random.key(1000), obs)

    @jax.jit
    def play(key):
        def one(state, key):
            return env.step(state, env.sample_action(key, state)), state

        return jax.lax.scan(one, env.init(), jax.random.split(key, 20))[1]

    states = jax.jit(jax.vmap(play))(jax.random.split(jax.random.key(seed), games))  # [G, 20]
    flat = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), states)
    mask = flat.legal_action_mask
    keep = np.asarray((mask.sum(-1) > 1) & ~flat.terminated)
    logits, _ = jax.jit(network.apply)(teacher, jax.jit(jax.vmap(env.observe))(flat))
    chosen = np.asarray(jnp.argmax(masked_logits(logits, mask), -1), np.int32)
    game = np.repeat(np.arange(games), 20).astype(np.int32)
    move = np.tile(np.arange(20), games).astype(np.int32)
    outcome = np.where(np.asarray(flat.current_player) == 0, 1.0, -1.0).astype(np.float32)
    positions = Positions(jax.tree.map(np.asarray, flat), chosen, game, move, outcome)
    return positions.take(np.flatnonzero(keep)), network, teacher


@pytest.mark.slow
def test_pretraining_learns_a_teachers_moves_on_held_out_games():
    positions, network, _ = _teacher_positions(100, seed=0)
    train, held_out = split_by_games(positions, set(range(80, 100)))
    assert len(train) > 600 and len(held_out) > 100
    assert not set(train.game) & set(held_out.game)
    env = blokus_jax.make("simple")
    held_states = jax.tree.map(jnp.asarray, held_out.states)
    held_mask = held_states.legal_action_mask

    def top1(params):
        logits, _ = jax.jit(network.apply)(params, jax.jit(jax.vmap(env.observe))(held_states))
        return float(np.mean(np.asarray(jnp.argmax(masked_logits(logits, held_mask), -1)) == held_out.chosen))

    settings = PretrainSettings(epochs=5, batch_size=64, learning_rate=3e-3, reflect=0.0, seed=3)
    obs = jax.tree.map(lambda x: x[None], env.observe(env.init()))
    untrained = top1(jax.jit(network.init)(jax.random.key(settings.seed), obs))
    params, report = pretrain(SMALL, train, held_out, settings, progress=False, verbose=False)
    after = report[-1]
    assert after["held_out_top1"] == pytest.approx(top1(params), abs=1e-6)
    assert after["held_out_top1"] > max(0.25, 2 * untrained), (untrained, report)
    assert after["held_out_top8"] >= after["held_out_top1"]
    assert report[-1]["cross_entropy"] < report[0]["cross_entropy"]


def test_pretraining_reflects_positions_and_their_moves_consistently():
    """On Duo the reflected position's legal set holds the reflected teacher move, for every sampled position."""
    from blokus_agents.search.positions import labelled_positions
    from blokus_jax import symmetry

    env = blokus_jax.make("duo")
    positions = labelled_positions(env, [GAMES])
    mirror = symmetry.reflected_actions(env.variant)
    bits = symmetry.reflect_legal_bits(env.variant, jnp.asarray(positions.states.legal_bits))
    masks = np.asarray(positions.states.replace(legal_bits=bits).legal_action_mask)
    assert masks[np.arange(len(positions)), mirror[positions.chosen]].all()
    # and the outcomes: one winner a game (or a tie), the mover's result at each position
    assert set(np.unique(positions.outcome)) <= {-1.0, 0.0, 1.0}


def test_pretrain_run_writes_a_run_that_ppo_continues_with_a_kl_term(tmp_path):
    config = PPOConfig(variant="duo", channels=4, blocks=1, value_hidden=8, num_envs=2, num_steps=4)
    settings = PretrainSettings(epochs=1, batch_size=16)
    summary = pretrain_run(config, [str(GAMES)], tmp_path / "pre", settings=settings, progress=False, verbose=False)
    assert summary["train_positions"] > 50 and summary["epochs"][0]["steps"] == summary["train_positions"] // 16
    assert (tmp_path / "pre" / "pretrain.json").is_file()
    saved_config, params = checkpoint_read.load_params(tmp_path / "pre")
    assert saved_config == config
    # a second pretraining never writes over a run
    with pytest.raises(ConfigError, match="already holds a run"):
        pretrain_run(config, [str(GAMES)], tmp_path / "pre", settings=settings, progress=False, verbose=False)
    # PPO from it: the KL term starts at 0 (the policy is its own reference) and the reference stays fixed
    from blokus_agents.training.train import warm_start

    trainer = make_train(config.replace(kl_coef=0.5, total_steps=16))
    runner = warm_start(trainer, trainer.init(jax.random.PRNGKey(0)), tmp_path / "pre")
    reference = jax.tree.map(np.asarray, runner.ref_params)
    for a, b in zip(jax.tree.leaves(reference), jax.tree.leaves(params)):
        np.testing.assert_array_equal(a, np.asarray(b))
    runner, metrics = trainer.update(runner)
    assert abs(float(metrics["kl_ref"])) < 1e-2
    for a, b in zip(jax.tree.leaves(runner.ref_params), jax.tree.leaves(reference)):
        np.testing.assert_array_equal(np.asarray(a), b)


def test_record_paths_and_settings_refuse_bad_input(tmp_path):
    with pytest.raises(ConfigError, match="names no .blksgf file"):
        record_paths([str(tmp_path / "missing*.blksgf")])
    assert record_paths([str(GAMES.parent / "duo_level6_*.blksgf"), str(GAMES)]) == [GAMES]
    for bad in (dict(epochs=0), dict(batch_size=1.5), dict(learning_rate=0.0), dict(reflect=2.0)):
        with pytest.raises(ConfigError, match="PretrainSettings"):
            PretrainSettings(**bad)


def test_the_kl_term_holds_ppo_near_its_starting_policy():
    """The same run with a large `kl_coef` ends closer (in KL over the legal moves of its own positions) to the
    policy it started from than without the term; the reported `kl_ref` is that divergence's estimate."""
    base = PPOConfig(
        variant="simple", num_envs=8, num_steps=8, total_steps=8 * 8 * 6, update_epochs=2, num_minibatches=2,
        channels=8, blocks=1, value_hidden=16, learning_rate=3e-3, ent_coef=0.0,
    )  # fmt: skip
    divergence = {}
    for coef in (0.0, 5.0):
        trainer = make_train(base.replace(kl_coef=coef))
        runner = trainer.init(jax.random.PRNGKey(0))
        start = jax.tree.map(jnp.copy, runner.params)
        assert (runner.ref_params is None) == (coef == 0.0)
        for _ in range(base.num_updates):
            runner, metrics = trainer.update(runner)
        obs = jax.jit(jax.vmap(trainer.env.observe))(runner.env_state)
        mask = runner.env_state.legal_action_mask
        logp, ref = (
            jax.nn.log_softmax(masked_logits(trainer.network.apply(p, obs)[0], mask), -1)
            for p in (runner.params, start)
        )
        divergence[coef] = float(jnp.mean(jnp.sum(jnp.exp(logp) * (logp - ref), -1)))
        if coef:
            assert np.isfinite(float(metrics["kl_ref"])) and float(metrics["kl_ref"]) >= -1e-6
    assert divergence[5.0] < 0.5 * divergence[0.0], divergence
