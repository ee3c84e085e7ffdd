"""AlphaZero self-play: search targets, per-seat value targets, the replay ring, the loss, resume, sharding and the
CLI surface shared with PPO."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import ROOT, TINY_AZ, write_old_checkpoint

from blokus_agents.core.policies import ParamPolicy, resolve_agent
from blokus_agents.players import checkpoint_index, checkpoint_read
from blokus_agents.players.configs import AZConfig, PPOConfig
from blokus_agents.search.gumbel import full_action_weights
from blokus_agents.search.settings import SearchSettings
from blokus_agents.training import checkpoint
from blokus_agents.training.algorithms import make_trainer
from blokus_agents.training.alphazero import make_train
from blokus_agents.training.replay import Buffer, buffer_finish, buffer_sample, buffer_write, empty_buffer
from blokus_agents.training.rundir import read_metrics
from blokus_agents.training.train import run, warm_start
from blokus_jax import make, rules
from blokus_jax.errors import CheckpointError, ConfigError
from blokus_jax.observe import Observation

TINY = TINY_AZ


@pytest.fixture(scope="module")
def trainer():
    return make_trainer(TINY)


@pytest.fixture(scope="module")
def played(trainer):
    """The runner after enough updates that every env has finished at least one game (simple games are ~12
    moves), and the metrics of the last update."""
    runner = trainer.init(jax.random.PRNGKey(0))
    for _ in range(4):
        runner, metrics = trainer.update(runner)
    return runner, jax.device_get(metrics)


# --------------------------------------------------------------------------------------------- search targets
@pytest.mark.slow
def test_search_targets_are_legal_candidate_ids_whose_weights_map_back_to_the_full_policy(trainer):
    env = trainer.env
    runner = trainer.init(jax.random.PRNGKey(1))
    states = runner.env_state
    for _ in range(3):  # a few moves in, so positions have many legal placements
        states = jax.jit(jax.vmap(env.step))(
            states, jax.jit(jax.vmap(env.sample_action))(jax.random.split(jax.random.key(3), 4), states)
        )
    out = jax.jit(trainer.search)(runner.params, jax.random.PRNGKey(2), states)
    mask = np.asarray(states.legal_action_mask)
    cands, weights = np.asarray(out.candidates), np.asarray(out.candidate_weights)
    for i in range(cands.shape[0]):
        live = weights[i] > 0
        assert live.any() and np.isclose(weights[i].sum(), 1.0, atol=1e-5)
        assert mask[i, cands[i][live]].all(), "a target weight sits on an illegal action"
        assert len(set(cands[i][live])) == live.sum(), "a candidate id appears twice"
        assert weights[i][cands[i] == int(out.action[i])].sum() > 0, "the move played has no target weight"
    full = full_action_weights(out.candidates, out.candidate_weights > 0, out.candidate_weights, env.num_actions)
    np.testing.assert_allclose(np.asarray(full), np.asarray(out.action_weights), atol=1e-6)


def test_stored_positions_hold_the_movers_observation_and_legal_moves(trainer, played):
    runner, _ = played
    env, buf = trainer.env, jax.device_get(runner.buffer)
    n, slot = np.argwhere(buf.length > 0)[0]
    length = int(buf.length[n, slot])
    width = env.board_shape[1]
    for t in range(length):
        mask = np.asarray(rules.legal_mask(jnp.asarray(buf.legal_bits[n, slot, t]), width))
        live = buf.weights[n, slot, t] > 0
        assert mask[buf.candidates[n, slot, t][live]].all()
    # a game's first stored position is the initial position
    first = env.observe(env.init(jax.random.key(0)))
    np.testing.assert_array_equal(buf.planes[n, slot, 0], np.asarray(first.planes).astype(bool))


# ------------------------------------------------------------------------------------------------ value targets
def _tiny_buffer(slots: int = 2, length: int = 8) -> Buffer:
    env = make("simple")
    buf = jax.jit(lambda: empty_buffer(env, 1, slots, 3))()
    return jax.tree.map(lambda x: x[0, :, :length] if x.ndim > 2 else x[0], buf)


# The ring's two writes, each one compiled program (called outside `jit` they would run operation by operation).
_write, _finish = jax.jit(buffer_write), jax.jit(buffer_finish)


def _play(buf: Buffer, movers: list[int], rewards: list[float], env=None) -> Buffer:
    """Write one position per mover into ``buf`` and end the game on the last one with ``rewards``."""
    env = env or make("simple")
    obs = env.observe(env.init())
    bits = jnp.zeros(buf.legal_bits.shape[-2:], jnp.uint32)
    for i, p in enumerate(movers):
        buf = _write(buf, obs, bits, jnp.asarray([0, 1, 2]), jnp.asarray([1.0, 0, 0]), jnp.int32(p))
        last = i == len(movers) - 1
        step_rewards = jnp.asarray(rewards if last else [0.0] * len(rewards))
        buf = _finish(buf, step_rewards, jnp.asarray(last))
    return buf


def test_value_targets_are_each_movers_own_final_result():
    # Duo-like: seat 1 moves twice in a row once seat 0 is out of moves; seat 0 wins.
    buf = _play(_tiny_buffer(), [0, 1, 0, 1, 1, 0], [1.0, -1.0])
    np.testing.assert_array_equal(buf.value[0, :6], [1, -1, 1, -1, -1, 1])
    assert int(buf.length[0]) == 6 and int(buf.games) == 1 and int(buf.t) == 0
    # a two-player draw under winloss pays 0.5 each: the result, as the search scores it, is 0 for both
    buf = _play(_tiny_buffer(), [0, 1, 0, 1], [0.5, 0.5])
    np.testing.assert_array_equal(buf.value[0, :4], [0, 0, 0, 0])
    # three seats, seats 0 and 2 share first place: (r_p - best other) / 2 per mover, the paranoid result
    buf = _play(_tiny_buffer(), [0, 1, 2, 0, 2], [0.5, -1.0, 0.5])
    np.testing.assert_array_equal(buf.value[0, :5], [0.0, -0.75, 0.0, 0.0, 0.0])


def test_root_value_blend_mixes_each_positions_search_value_into_its_result():
    """``AZConfig.root_value``: a target is ``(1 - B) * the mover's result + B * the root value its search gave``;
    ``B = 0`` stores the result alone, and the root values of an earlier game in the slot do not leak."""
    env = make("simple")
    obs = env.observe(env.init())

    def play(movers, roots, rewards, blend, buf=None):
        buf = _tiny_buffer() if buf is None else buf
        bits = jnp.zeros(buf.legal_bits.shape[-2:], jnp.uint32)
        for i, (p, root) in enumerate(zip(movers, roots)):
            args = (buf, obs, bits, jnp.asarray([0, 1, 2]), jnp.asarray([1.0, 0, 0]), jnp.int32(p))
            buf = buffer_write(*args, jnp.float32(root) if blend else None)
            last = i == len(movers) - 1
            buf = buffer_finish(buf, jnp.asarray(rewards if last else [0.0, 0.0]), jnp.asarray(last), blend=blend)
        return buf

    movers, roots = [0, 1, 0, 1, 1], [0.2, -0.6, 1.0, 0.0, -1.0]
    buf = play(movers, roots, [-1.0, 1.0], 0.25)
    want = 0.75 * np.asarray([-1, 1, -1, 1, 1]) + 0.25 * np.asarray(roots)
    np.testing.assert_allclose(buf.value[0, :5], want, rtol=1e-6)
    assert int(buf.length[0]) == 5
    # the next game in the other slot gets its own root values
    buf = play([1, 0], [0.4, 0.8], [1.0, -1.0], 0.5, buf)
    np.testing.assert_allclose(buf.value[1, :2], 0.5 * np.asarray([-1, 1]) + 0.5 * np.asarray([0.4, 0.8]), rtol=1e-6)
    np.testing.assert_allclose(buf.value[0, :5], want, rtol=1e-6)
    # blend 0 is AlphaZero's target, the result alone, exactly
    np.testing.assert_array_equal(play(movers, roots, [-1.0, 1.0], 0.0).value[0, :5], [-1, 1, -1, 1, 1])
    per_seat = empty_buffer(make("classic"), 1, 2, 3)
    per_seat = jax.tree.map(lambda x: x[0], per_seat)
    with pytest.raises(ValueError, match="scalar"):
        buffer_finish(per_seat, jnp.zeros(4), jnp.asarray(True), blend=0.5)


def test_root_value_blend_is_refused_where_values_are_per_seat():
    with pytest.raises(ConfigError, match="root_value=0.5 .* 4 players"):
        make_train(AZConfig(variant="classic", num_envs=2, batch_size=8, root_value=0.5))
    with pytest.raises(ConfigError, match=r"root_value must be a finite number in \[0.0, 1.0\]"):
        AZConfig(root_value=1.5)


def test_positions_are_sampleable_only_once_their_game_has_ended():
    buf = _tiny_buffer()
    env = make("simple")
    obs, bits = env.observe(env.init()), jnp.zeros(buf.legal_bits.shape[-2:], jnp.uint32)
    buf = buffer_write(buf, obs, bits, jnp.asarray([0, 1, 2]), jnp.asarray([1.0, 0, 0]), jnp.int32(0))
    buf = buffer_finish(buf, jnp.zeros(2), jnp.asarray(False))
    sample = buffer_sample(jax.random.PRNGKey(0), buf, 16)
    assert not np.asarray(sample.valid).any()
    assert int(buf.length.sum()) == 0 and int(buf.t) == 1


def test_the_ring_drops_the_oldest_game_and_never_samples_a_slot_being_written():
    # G slots keep the G - 1 newest finished games: the slot after the last finished game is being written.
    buf = _tiny_buffer(slots=3)
    buf = _play(buf, [0, 1, 0], [1.0, -1.0])  # game 1 -> slot 0
    buf = _play(buf, [0, 1, 0, 1, 0], [-1.0, 1.0])  # game 2 -> slot 1
    np.testing.assert_array_equal(buf.length, [3, 5, 0])
    buf = _play(buf, [0, 1], [1.0, -1.0])  # game 3 -> slot 2; game 4 will go to slot 0: game 1 is dropped
    np.testing.assert_array_equal(buf.length, [0, 5, 2])
    buf = _play(buf, [1, 0, 1, 0], [1.0, -1.0])  # game 4 wraps around into slot 0; slot 1 (game 2) is cleared
    np.testing.assert_array_equal(buf.length, [4, 0, 2])
    np.testing.assert_array_equal(buf.value[0, :4], [-1, 1, -1, 1])  # seat 0 won game 4, seat 1 moved first
    np.testing.assert_array_equal(buf.value[2, :2], [1, -1])
    assert int(buf.games) == 4
    sample = buffer_sample(jax.random.PRNGKey(1), buf, 64)
    assert np.asarray(sample.valid).all()
    np.testing.assert_array_equal(np.unique(np.asarray(sample.value)), [-1.0, 1.0])
    # a game longer than the slot keeps its last cell overwritten instead of writing out of bounds
    long = _play(_tiny_buffer(length=4), [0, 1, 0, 1, 0, 1], [1.0, -1.0])
    assert int(long.length[0]) == 4


def test_real_games_fill_the_buffer_with_consistent_per_seat_targets(played):
    runner, metrics = played
    buf = jax.device_get(runner.buffer)
    finished = np.argwhere(buf.length > 0)
    assert len(finished) >= TINY.num_envs and metrics["buffer_positions"] == buf.length.sum()
    for n, slot in finished:
        length = buf.length[n, slot]
        players, values = buf.player[n, slot, :length], buf.value[n, slot, :length]
        assert set(players) == {0, 1}
        for p in (0, 1):  # one result per seat, opposite for the two seats (winloss, two players; 0 for a draw)
            assert len(set(values[players == p])) == 1
        assert values[players == 0][0] == -values[players == 1][0]
    assert float(metrics["valid_fraction"]) == 1.0


# ------------------------------------------------------------------------------------------------------- loss
def test_loss_is_the_cross_entropy_of_the_search_weights_plus_the_value_error(trainer, played):
    runner, _ = played
    batch = jax.vmap(buffer_sample, in_axes=(0, 0, None))(
        jax.random.split(jax.random.PRNGKey(5), TINY.num_envs), runner.buffer, 2
    )
    total, terms = trainer.loss(runner.params, batch)
    logits, value = jax.jit(trainer.network.apply)(runner.params, batch.obs)
    mask = np.asarray(rules.legal_mask(batch.legal_bits, trainer.env.board_shape[1]))
    logits, value, b = np.asarray(logits, np.float64), np.asarray(value), jax.device_get(batch)
    cross, choices = [], []
    for i in np.ndindex(mask.shape[:-1]):
        legal = np.flatnonzero(mask[i])
        z = logits[i][legal]
        logp = z - np.log(np.exp(z - z.max()).sum()) - z.max()
        logp_of = dict(zip(legal, logp))
        cross.append(-sum(w * logp_of[a] for a, w in zip(b.candidates[i], b.weights[i]) if w > 0))
        choices.append(len(legal) > 1)
    expected_policy = np.mean([c for c, m in zip(cross, choices) if m])
    expected_value = np.mean((value - b.value) ** 2)
    np.testing.assert_allclose(float(terms["policy_loss"]), expected_policy, rtol=1e-4)
    np.testing.assert_allclose(float(terms["value_loss"]), expected_value, rtol=1e-4)
    np.testing.assert_allclose(float(total), expected_policy + TINY.value_coef * expected_value, rtol=1e-4)


def test_one_update_changes_params_and_reports_metrics(trainer, played):
    runner, metrics = played
    assert int(runner.update) == 4
    for name in ("policy_loss", "value_loss", "policy_kl", "learning_rate", "root_value"):
        assert np.isfinite(float(metrics[name])), name
    assert float(metrics["policy_kl"]) >= -1e-5
    fresh = trainer.init(jax.random.PRNGKey(0))
    moved = [not np.array_equal(a, b) for a, b in zip(jax.tree.leaves(fresh.params), jax.tree.leaves(runner.params))]
    assert all(moved)


@pytest.mark.slow
def test_real_games_give_the_winner_plus_one_at_every_one_of_its_positions(trainer):
    """Self-play one move at a time, keep each finished game's final rewards, and check the stored targets against
    them: +1 at the winner's positions, -1 at the loser's, 0 for both after a draw."""
    c = TINY
    step = jax.jit(trainer.play_step)
    runner = trainer.init(jax.random.PRNGKey(7))
    states, buf = runner.env_state, runner.buffer
    finals = {}  # (env, slot) -> final rewards of the game last finished there
    for i in range(40):
        slots = np.asarray(buf.games) % c.games_per_env
        states, buf, rewards, done, _ = step(runner.params, jax.random.PRNGKey(100 + i), states, buf)
        for n in np.flatnonzero(np.asarray(done)):
            finals[n, slots[n]] = np.asarray(rewards[n])
    buf = jax.device_get(buf)
    checked = 0
    for (n, slot), final in finals.items():
        length = buf.length[n, slot]
        if length == 0:
            continue  # overwritten by a later game
        players, values = buf.player[n, slot, :length], buf.value[n, slot, :length]
        best = final.max()
        for p in (0, 1):
            expected = 0.0 if (final == best).all() else (1.0 if final[p] == best else -1.0)
            np.testing.assert_array_equal(values[players == p], expected)
        checked += 1
    assert checked >= c.num_envs


def test_an_open_ended_run_with_small_updates_does_not_overflow_the_schedule():
    config = TINY.replace(num_steps=2, total_steps=10**12)
    assert config.num_updates > np.iinfo(np.int32).max
    runner = make_train(config).init(jax.random.PRNGKey(0))
    assert int(runner.opt_state.hyperparams_states["learning_rate"].horizon) == np.iinfo(np.int32).max


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="multiple of num_envs"):
        AZConfig(num_envs=6, batch_size=8)
    with pytest.raises(ValueError, match="games_per_env must be at least 2"):
        AZConfig(games_per_env=1)
    with pytest.raises(ValueError, match="AZConfig.sims must be a positive int"):
        AZConfig(sims=0)
    with pytest.raises(CheckpointError, match="unknown AZConfig fields"):
        AZConfig.from_dict({**TINY.to_dict(), "simz": 3})


# ---------------------------------------------------------------------------------- runs, resume, sharding
@pytest.mark.slow
def test_resume_is_bit_exact_including_the_replay_buffer(tmp_path):
    whole, split = tmp_path / "whole", tmp_path / "split"
    run(TINY, whole, eval_every=0, progress=False, mesh=None)
    run(TINY, split, eval_every=0, progress=False, mesh=None, until_update=1)
    summary = run(TINY, split, eval_every=0, progress=False, mesh=None, resume=True)
    assert summary["updates"] == TINY.num_updates
    trainer = make_trainer(TINY)
    a, b = checkpoint.restore(whole, trainer), checkpoint.restore(split, trainer)
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert int(b.buffer.length.sum()) > 0
    losses = lambda d: [(r["update"], r["policy_loss"], r["value_loss"]) for r in read_metrics(d)]  # noqa: E731
    assert losses(whole) == losses(split)
    assert checkpoint_read.read_meta(whole)["algorithm"] == "alphazero"
    with pytest.raises(CheckpointError, match="was trained with 'alphazero', not 'ppo'"):
        checkpoint.restore(
            whole, __import__("blokus_agents.training.ppo", fromlist=["make_train"]).make_train(PPOConfig())
        )


SHARDED = textwrap.dedent("""
    import json, jax, numpy as np
    from blokus_agents.training.alphazero import make_train
    from blokus_agents.players.configs import AZConfig
    from blokus_agents.training.mesh import make_mesh
    assert jax.local_device_count() == 4, jax.devices()
    config = AZConfig.from_dict(json.loads({config!r}))
    single, sharded = make_train(config), make_train(config, make_mesh())
    a, b = single.init(jax.random.PRNGKey(0)), sharded.init(jax.random.PRNGKey(0))
    assert len(b.buffer.planes.sharding.device_set) == 4
    assert b.buffer.planes.addressable_shards[0].data.shape[0] == config.num_envs // 4
    for _ in range(3):
        (a, ma), (b, mb) = single.update(a), sharded.update(b)
    assert len(b.env_state.board.sharding.device_set) == 4
    assert all(x.sharding.is_fully_replicated for x in jax.tree.leaves(b.params))
    np.testing.assert_array_equal(np.asarray(a.env_state.board), np.asarray(b.env_state.board))
    np.testing.assert_array_equal(np.asarray(a.buffer.candidates), np.asarray(b.buffer.candidates))
    np.testing.assert_array_equal(np.asarray(a.buffer.length), np.asarray(b.buffer.length))
    for x, y in zip(jax.tree.leaves(a.params), jax.tree.leaves(b.params)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=2e-4, atol=2e-6)
    for k in ma:
        np.testing.assert_allclose(float(ma[k]), float(mb[k]), rtol=1e-3, atol=1e-5, err_msg=k)
    print("SHARDED-OK")
""")


@pytest.mark.slow
def test_sharded_training_on_four_host_devices_matches_one_device():
    config = TINY.replace(num_envs=8, batch_size=16)
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=4"  # the suite's, and 4 devices
    env = {**os.environ, "XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        [sys.executable, "-c", SHARDED.format(config=json.dumps(config.to_dict()))],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0 and "SHARDED-OK" in proc.stdout, proc.stderr[-3000:]


@pytest.mark.slow
def test_cli_trains_alphazero_and_the_run_directory_plays_with_its_search(tmp_path, capsys, monkeypatch):
    from blokus_agents import cli

    monkeypatch.chdir(tmp_path)
    ppo_run, az_run = tmp_path / "runs" / "simple", tmp_path / "runs" / "az_simple"  # the default --out of each
    small = ["--variant", "simple", "--num-envs", "4", "--num-steps", "4", "--channels", "4", "--blocks", "1"]
    quiet = ["--eval-every", "0", "--no-progress", "--cpu-devices", "1"]
    assert (
        cli.main(["train", *small, "--total-steps", "16", *quiet]) == 0 and checkpoint_index.latest_step(ppo_run) == 1
    )
    capsys.readouterr()
    # AlphaZero warm-started from the PPO run: its network size is taken from there
    args = ["train", "--algo", "alphazero", "--variant", "simple", "--num-envs", "4", "--num-steps", "4"]
    args += ["--sims", "4", "--total-steps", "32", "--init-from", str(ppo_run)]
    args += ["--eval-every", "2", "--eval-games", "2", "--no-progress", "--json", str(tmp_path / "summary.json")]
    assert cli.main(args) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert json.loads((tmp_path / "summary.json").read_text())["updates"] == 2
    # no collision with the PPO run's default directory; a second new run there is refused in the CLI's words
    assert checkpoint_index.latest_step(az_run) == 2 and checkpoint_index.latest_step(ppo_run) == 1
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert "'runs/az_simple' (the default --out of this --algo and --variant) already holds" in err
    assert "add --resume" in err and "resume=True" not in err
    meta = checkpoint_read.read_meta(az_run)
    assert meta["algorithm"] == "alphazero" and meta["config"].sims == 4 and meta["config"].channels == 4
    assert (az_run / "win_rate.png").exists() and "win_rate_vs_greedy" in read_metrics(az_run)[-1]
    # the warm start copies the PPO network exactly, with a fresh optimiser
    config = meta["config"]
    trainer = make_trainer(config)  # the run's own trainer, shared in this process
    warm = warm_start(trainer, trainer.init(jax.random.PRNGKey(0)), ppo_run)
    for x, y in zip(jax.tree.leaves(checkpoint_read.load_params(ppo_run)[1]), jax.tree.leaves(warm.params)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert int(warm.opt_state.count) == 0
    # and the run saved that network as its checkpoint 0, where its learning curve starts
    assert checkpoint_index.saved_steps(az_run) == [0, 2]
    for x, y in zip(jax.tree.leaves(checkpoint_read.load_params(az_run, 0)[1]), jax.tree.leaves(warm.params)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))

    env = make("simple")
    agent = resolve_agent(str(az_run), env)  # a run directory of AlphaZero plays with its search
    assert isinstance(agent, ParamPolicy) and agent.fn.__qualname__.startswith("_single")  # search.py's wrapper
    # (its `az:RUN,sims=N` budget override: the next test)
    assert cli.main(["eval", "--agents", str(az_run), "random", "--games", "2"]) == 0
    capsys.readouterr()

    # flags that do not fit, and resuming with the wrong algorithm, are clear errors
    assert cli.main(["train", *small, "--sims", "8", "--out", str(tmp_path / "x"), *quiet]) == 2
    assert "--sims does not apply to --algo ppo" in capsys.readouterr().err
    assert cli.main(["train", "--algo", "ppo", "--resume", "--out", str(az_run), *quiet]) == 2
    assert "resume it with --algo alphazero" in capsys.readouterr().err
    bigger = ["train", "--algo", "alphazero", *small[:-4], "--channels", "8", "--blocks", "1"]
    assert cli.main([*bigger, "--init-from", str(ppo_run), "--out", str(tmp_path / "y"), *quiet]) == 2
    assert "channels=4" in capsys.readouterr().err


@pytest.mark.slow
def test_run_directory_agent_uses_search_and_az_budget_overrides(tmp_path, monkeypatch):
    from blokus_agents.search import mcts as search

    budgets = []
    real = search.network_search_policy
    monkeypatch.setattr(search, "network_search_policy", lambda *a: budgets.append(a[3].sims) or real(*a))
    out = tmp_path / "az"
    run(TINY, out, eval_every=0, progress=False, mesh=None, until_update=1)
    env = make("simple")
    with_search = resolve_agent(str(out), env)
    assert isinstance(with_search, ParamPolicy)
    state = env.init()
    act = jax.jit(with_search.fn)
    action = act(with_search.params, jax.random.key(0), state)
    assert bool(env.is_legal(state, action))
    budget = resolve_agent(f"az:{out},sims=2", env)
    assert bool(env.is_legal(state, jax.jit(budget.fn)(budget.params, jax.random.key(0), state)))
    assert budgets == [64, 2]  # the run directory plays with the default budget, az: overrides it


def test_observations_in_samples_are_float_planes(played):
    runner, _ = played
    sample = buffer_sample(jax.random.PRNGKey(0), jax.tree.map(lambda x: x[0], runner.buffer), 3)
    assert isinstance(sample.obs, Observation) and sample.obs.planes.dtype == jnp.float32


def test_root_noise_mixes_a_dirichlet_into_the_prior_of_valid_candidates_only():
    from blokus_agents.search.gumbel import _mix_dirichlet

    logits = jnp.asarray([[30.0, 0.0, 0.0, -1e9], [0.0, 0.0, 0.0, 0.0]])
    valid = jnp.asarray([[True, True, True, False], [True, True, True, True]])
    mixed = _mix_dirichlet(jax.random.PRNGKey(0), logits, valid, 0.25, 0.3)
    probs = np.asarray(jax.nn.softmax(mixed, axis=-1))
    np.testing.assert_allclose(probs.sum(-1), 1.0, rtol=1e-5)
    assert probs[0, 3] == 0.0 and float(mixed[0, 3]) == -1e9
    # the dominant candidate keeps at least 75 % of the mass; without noise the others would have e^-30 each
    assert probs[0, 0] >= 0.75 - 1e-6 and probs[0, 1:3].sum() > 1e-6
    assert not np.allclose(probs[1], 0.25)  # a noisy prior, not the uniform one


def test_a_checkpoint_saved_before_a_config_field_existed_still_verifies_and_reads_its_legacy_value(tmp_path):
    out = tmp_path / "old"
    run(TINY, out, eval_every=0, progress=False, mesh=None, until_update=1)
    meta_file = next((out / "checkpoints").glob("*/meta/metadata"))
    meta = json.loads(meta_file.read_text())
    old_config = {k: v for k, v in meta["config"].items() if k not in ("root_noise", "root_alpha")}
    params = checkpoint_read.load_params(out)[1]
    # rewrite the metadata as a version without root noise would have saved it (hashes over that config)
    trainer = make_trainer(TINY)
    state = checkpoint._state_item(checkpoint.restore(out, trainer))
    meta["config"] = old_config
    meta["sha256"] = {
        "params": checkpoint_read.content_hash(old_config, params),
        "state": checkpoint_read.content_hash(old_config, state),
    }
    meta_file.write_text(json.dumps(meta))
    checkpoint_read._cached_meta.cache_clear()
    config, loaded = checkpoint_read.load_params(out)
    assert config.root_noise == 0.0 and config.root_alpha == TINY.root_alpha  # trained without noise
    for x, y in zip(jax.tree.leaves(params), jax.tree.leaves(loaded)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


# ------------------------------------------------------------------------- small checkpoints
def _stored_bytes(step_dir) -> dict[str, int]:
    """Item name -> bytes of the arrays a checkpoint directory holds, from orbax's metadata (shapes and dtypes).
    File sizes are no measure here: OCDBT's data files of identical arrays differ by kilobytes between two saves
    (how its writer threads split them), more than this tiny run's whole buffer."""
    import orbax.checkpoint as ocp

    sizes = {}
    for item in sorted(p for p in step_dir.iterdir() if (p / "_METADATA").is_file()):
        tree = ocp.StandardCheckpointHandler().metadata(item).tree
        sizes[item.name] = sum(int(np.prod(a.shape)) * np.dtype(a.dtype).itemsize for a in jax.tree.leaves(tree))
    return sizes


def _nbytes(tree) -> int:
    return sum(int(np.asarray(a).nbytes) for a in jax.tree.leaves(tree))


def _at(runner, update: int):
    """A copy of ``runner`` with its update counter set to ``update`` (saving it makes checkpoint ``update``)."""
    return jax.tree.map(jnp.copy, runner.replace(update=jnp.asarray(update, runner.update.dtype)))


@pytest.mark.slow
def test_only_the_newest_checkpoint_keeps_the_replay_buffer_and_resumes_exactly(tmp_path, trainer, played):
    runner, _ = played
    for update in (5, 6, 7):
        checkpoint.save(tmp_path, _at(runner, update), TINY)
    root = tmp_path / "checkpoints"
    assert [int(p.name) for p in sorted(root.iterdir())] == [5, 6, 7]
    assert [(root / str(u) / "buffer").is_dir() for u in (5, 6, 7)] == [False, False, True]
    # what is stored, array by array: the whole runner in the newest, all of it but the buffer in the older ones
    buffer = _nbytes(runner.buffer)
    assert buffer > _nbytes(runner) // 4  # the buffer is a real share of a checkpoint, so dropping it matters
    assert _stored_bytes(root / "7") == {
        "params": _nbytes(runner.params),
        "state": _nbytes(runner) - _nbytes(runner.params) - buffer,
        "buffer": buffer,
    }
    assert all(
        _stored_bytes(root / str(u)) == {k: v for k, v in _stored_bytes(root / "7").items() if k != "buffer"}
        for u in (5, 6)
    )
    assert set(checkpoint_read.read_meta(tmp_path)["sha256"]) == {"params", "state", "buffer"}

    # resume from the newest: every field, the buffer included, and the next update are exact
    restored = checkpoint.restore(tmp_path, trainer)
    saved = _at(runner, 7)
    same = jax.tree.map(lambda a, b: a.dtype == b.dtype and bool(np.array_equal(a, b)), saved, restored)
    assert all(jax.tree.leaves(same)) and int(restored.buffer.length.sum()) > 0
    (a, _), (b, _) = trainer.update(saved), trainer.update(restored)  # update donates its runner
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))

    # an older checkpoint plays (its params are intact) but is not resumed
    config, params = checkpoint_read.load_params(tmp_path, 5)
    for x, y in zip(jax.tree.leaves(params), jax.tree.leaves(runner.params)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    from blokus_agents.search.mcts import network_search_policy

    env = trainer.env
    policy = network_search_policy(env, trainer.network.apply, params, SearchSettings(sims=2, k=4))
    state = env.init()
    assert bool(env.is_legal(state, jax.jit(policy.fn)(policy.params, jax.random.key(0), state)))
    with pytest.raises(CheckpointError, match=r"checkpoint 5 .*no longer holds its replay buffer .*update 7"):
        checkpoint.restore(tmp_path, trainer, step=5)
    # what a kill in the middle of a deletion leaves behind goes with the next save
    leftover = root / "6" / "buffer.dropped"
    leftover.mkdir()
    (leftover / "part").write_bytes(b"x")
    checkpoint.save(tmp_path, _at(runner, 8), TINY)
    assert not leftover.exists() and [(root / str(u) / "buffer").is_dir() for u in (6, 7, 8)] == [False, False, True]


def test_a_missing_or_tampered_buffer_is_refused_for_resume_but_not_for_play(tmp_path, trainer, played):
    runner, _ = played
    checkpoint.save(tmp_path, _at(runner, 5), TINY)
    meta_file = tmp_path / "checkpoints" / "5" / "meta" / "metadata"
    original = json.loads(meta_file.read_text())
    meta_file.write_text(json.dumps({**original, "sha256": {**original["sha256"], "buffer": "0" * 64}}))
    with pytest.raises(CheckpointError, match="content hash of its 'buffer' does not match"):
        checkpoint.restore(tmp_path, trainer)
    hashes = {k: v for k, v in original["sha256"].items() if k != "buffer"}
    meta_file.write_text(json.dumps({**original, "sha256": hashes}))
    with pytest.raises(CheckpointError, match="no 'sha256' hash of 'buffer'"):
        checkpoint.restore(tmp_path, trainer)
    meta_file.write_text(json.dumps(original))
    import shutil

    shutil.rmtree(tmp_path / "checkpoints" / "5" / "buffer")
    with pytest.raises(CheckpointError, match=r"cannot be resumed: its replay buffer \(buffer/\) is missing"):
        checkpoint.restore(tmp_path, trainer)
    checkpoint_read._cached_meta.cache_clear()
    assert checkpoint_read.load_params(tmp_path)[0] == TINY  # playing needs only the params


def _save_format_2(run_dir, runner, config):
    """A checkpoint as written before the buffer had its own item (format 2): the buffer inside ``state``, in every
    kept checkpoint, and the hash of ``state`` over it."""
    from blokus_jax.observe import OBS_VERSION

    state = {name: getattr(runner, name) for name in runner.__dataclass_fields__ if name != "params"}
    meta = {
        "format_version": 2,
        "obs_version": OBS_VERSION,
        "algorithm": "alphazero",
        "config": config.to_dict(),
        "sha256": {
            "params": checkpoint_read.content_hash(config, runner.params),
            "state": checkpoint_read.content_hash(config, state),
        },
    }
    write_old_checkpoint(run_dir, int(runner.update), runner.params, state, meta)


def test_format_2_checkpoints_with_the_buffer_inside_the_state_still_play_and_resume(tmp_path, trainer, played):
    runner, _ = played
    _save_format_2(tmp_path, _at(runner, 4), TINY)
    restored = checkpoint.restore(tmp_path, trainer)
    same = jax.tree.map(lambda a, b: bool(np.array_equal(a, b)), _at(runner, 4), restored)
    assert all(jax.tree.leaves(same))
    assert checkpoint_read.load_params(tmp_path)[0] == TINY
    # the resumed run saves the new format: its newest checkpoint carries the buffer as its own item
    checkpoint.save(tmp_path, _at(runner, 5), TINY)
    assert (tmp_path / "checkpoints" / "5" / "buffer").is_dir()
    assert int(checkpoint.restore(tmp_path, trainer).update) == 5
