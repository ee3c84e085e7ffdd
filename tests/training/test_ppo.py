"""PPO self-play: per-seat credit assignment, one jitted update, make_train, resume, and data-parallel sharding."""

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
from helpers import ROOT

from blokus_agents.players import checkpoint_index, checkpoint_read
from blokus_agents.players.configs import PPOConfig
from blokus_agents.training import checkpoint
from blokus_agents.training.algorithms import make_trainer
from blokus_agents.training.ppo import make_train, seat_gae
from blokus_agents.training.rundir import Settings, read_metrics
from blokus_agents.training.train import run
from blokus_jax.errors import CheckpointError

TINY = PPOConfig(
    variant="simple",
    num_envs=8,
    num_steps=8,
    total_steps=8 * 8 * 3,
    update_epochs=2,
    num_minibatches=2,
    channels=8,
    blocks=1,
    value_hidden=16,
)


@pytest.fixture(scope="module")
def trainer():
    return make_trainer(TINY)


# ------------------------------------------------------------------------------------------ credit assignment
# A hand-made two-player stream: seat 1's reward (-1) arrives on seat 0's winning move at t=4, seat 1's move at t=3 is
# a forced pass, a new game starts at t=5, and the rollout ends with seat 0 to move (value 0.8) while seat 1's move at
# t=6 has no later decision of its own inside the rollout.
PLAYERS = jnp.asarray([0, 1, 0, 1, 0, 0, 1])
REWARDS = jnp.zeros((7, 2)).at[4].set(jnp.asarray([1.0, -1.0]))
DONES = jnp.asarray([False, False, False, False, True, False, False])
VALUES = jnp.asarray([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7])


def test_seat_gae_monte_carlo_case_routes_each_seats_own_final_reward():
    adv, valid = seat_gae(PLAYERS, REWARDS, DONES, VALUES, jnp.int32(0), jnp.float32(0.8), 1.0, 1.0)
    # lambda = 1: advantage = own return - own value; returns are +1 for seat 0, -1 for seat 1 in the first game,
    # and seat 0's bootstrap 0.8 in the second.
    np.testing.assert_allclose(adv, [1 - 0.1, -1 - 0.2, 1 - 0.3, -1 - 0.4, 1 - 0.5, 0.8 - 0.6, 0.0], atol=1e-6)
    assert valid.tolist() == [True, True, True, True, True, True, False]


def test_seat_gae_td_case_bootstraps_from_the_same_seats_next_decision():
    adv, valid = seat_gae(PLAYERS, REWARDS, DONES, VALUES, jnp.int32(0), jnp.float32(0.8), 1.0, 0.0)
    # lambda = 0: one-step TD over the seat's own chain (t0 -> t2 -> t4 for seat 0, t1 -> t3 -> end for seat 1)
    np.testing.assert_allclose(adv, [0.3 - 0.1, 0.4 - 0.2, 0.5 - 0.3, -1 - 0.4, 1 - 0.5, 0.8 - 0.6, 0.0], atol=1e-6)
    assert valid.tolist() == [True] * 6 + [False]


def test_seat_gae_three_seats_with_a_skipped_seat_and_discounting():
    # seats 0, 1, 2 then seat 1 has passed out and is skipped: 0, 2, 0 ends the game with rewards [1, -1, -1]
    players = jnp.asarray([0, 1, 2, 0, 2, 0])
    rewards = jnp.zeros((6, 3)).at[5].set(jnp.asarray([1.0, -1.0, -1.0]))
    dones = jnp.asarray([False] * 5 + [True])
    values = jnp.zeros(6)
    gamma, lam = 0.9, 0.5
    adv, valid = seat_gae(players, rewards, dones, values, jnp.int32(0), jnp.float32(0.0), gamma, lam)
    # seat 0: decisions t0, t3, t5 -> discounts count own decisions, not table moves
    a5 = 1.0
    a3 = 0 + gamma * 0 - 0 + gamma * lam * a5
    a0 = gamma * lam * a3
    # seat 1: single decision at t1, reward -1 at the end; seat 2: t2 -> t4 -> end
    a4 = -1.0
    a2 = gamma * lam * a4
    np.testing.assert_allclose(adv, [a0, -1.0, a2, a3, a4, a5], atol=1e-6)
    assert bool(valid.all())


def test_real_rollout_targets_equal_each_movers_final_reward(trainer):
    """lambda = gamma = 1: in every game that finished inside the rollout, advantage + value of each decision is
    exactly the mover's own terminal reward."""
    runner = trainer.init(jax.random.PRNGKey(1))
    config = TINY.replace(num_steps=48, num_minibatches=1)
    long = make_train(config)
    env_state, traj = jax.jit(long.rollout)(runner.params, runner.env_state, jax.random.PRNGKey(2))
    _, last_value = long.network.apply(runner.params, jax.jit(jax.vmap(long.env.observe))(env_state))
    adv, valid = jax.vmap(seat_gae, in_axes=(1, 1, 1, 1, 0, 0, None, None), out_axes=1)(
        traj.player, traj.rewards, traj.done, traj.value, env_state.current_player, last_value, 1.0, 1.0
    )
    done = np.asarray(traj.done)
    assert done.any(0).all()  # every game finished at least once
    checked = 0
    for e in range(config.num_envs):
        end = int(np.flatnonzero(done[:, e])[0])  # the first game of stream e covers steps 0..end
        final = np.asarray(traj.rewards[end, e])
        for t in range(end + 1):
            mover = int(traj.player[t, e])
            assert bool(valid[t, e])
            assert float(adv[t, e] + traj.value[t, e]) == pytest.approx(float(final[mover]), abs=1e-5)
            checked += 1
    assert checked > 8 * 10


# ------------------------------------------------------------------------------------------------- training
def test_one_jitted_update_changes_params_and_reports_metrics(trainer):
    runner = trainer.init(jax.random.PRNGKey(0))
    before = jax.tree.map(jnp.copy, runner)  # a device copy (a host view of a CPU buffer would keep it from donation)
    new, metrics = trainer.update(runner)
    changed = jax.tree.map(lambda a, b: bool(jnp.any(a != b)), before.params, new.params)
    assert all(jax.tree.leaves(changed))
    assert int(new.update) == 1 and not bool(jnp.all(new.key == before.key))
    # the runner is donated: its buffers were reused for the new one instead of copied
    assert all(x.is_deleted() for x in jax.tree.leaves(runner))
    for name in (
        "policy_loss",
        "value_loss",
        "entropy",
        "approx_kl",
        "clip_fraction",
        "explained_variance",
        "learning_rate",
        "param_norm",
    ):
        assert np.isfinite(float(metrics[name])), name
    assert float(metrics["entropy"]) > 0 and float(metrics["approx_kl"]) >= 0
    assert float(metrics["learning_rate"]) == pytest.approx(TINY.learning_rate)


@pytest.mark.slow
def test_make_train_runs_every_update_in_one_call_like_the_host_loop(trainer):
    train = make_trainer(TINY)
    runner, metrics = train(jax.random.PRNGKey(0))
    assert int(runner.update) == TINY.num_updates and metrics["policy_loss"].shape == (TINY.num_updates,)
    host = trainer.init(jax.random.PRNGKey(0))
    for _ in range(TINY.num_updates):
        host, _ = trainer.update(host)
    for a, b in zip(jax.tree.leaves(runner.params), jax.tree.leaves(host.params)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_learning_rate_decays_linearly_to_the_final_fraction(trainer):
    lr = [float(trainer.learning_rate(u, 10)) for u in (0, 5, 10, 20)]
    base = TINY.learning_rate
    assert lr == pytest.approx([base, base * 0.55, base * 0.1, base * 0.1])


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="multiple of num_minibatches"):
        PPOConfig(num_steps=10, num_minibatches=4)
    with pytest.raises(ValueError, match="num_envs"):
        PPOConfig(num_envs=0)
    with pytest.raises(CheckpointError, match="unknown PPOConfig fields"):
        PPOConfig.from_dict({**TINY.to_dict(), "gamma_typo": 1})


@pytest.mark.slow
def test_resume_continues_exactly_like_an_uninterrupted_run(tmp_path):
    whole, split = tmp_path / "whole", tmp_path / "split"
    run(TINY, whole, eval_every=0, progress=False, mesh=None)
    compiled = []

    def count(event, duration, fun_name=None, **_):
        if event == "/jax/core/compile/backend_compile_duration" and fun_name == "jit(update)":
            compiled.append(duration)

    jax.monitoring.register_event_duration_secs_listener(count)
    try:  # the same config in the same process: the runs share one trainer and its compiled update
        run(TINY, split, eval_every=0, progress=False, mesh=None, until_update=1)
        assert checkpoint_index.latest_step(split) == 1
        summary = run(TINY, split, eval_every=0, progress=False, mesh=None, resume=True)
    finally:
        jax.monitoring.unregister_event_duration_listener(count)
    assert compiled == []
    assert summary["updates"] == TINY.num_updates
    a, b = checkpoint_read.load_params(whole)[1], checkpoint_read.load_params(split)[1]
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        np.testing.assert_array_equal(x, y)
    losses = lambda d: [(r["update"], r["policy_loss"], r["value_loss"]) for r in read_metrics(d)]  # noqa: E731
    assert losses(whole) == losses(split)
    with pytest.raises(CheckpointError, match="already holds checkpoints"):
        run(TINY, whole, eval_every=0, progress=False, mesh=None)


def test_a_config_that_reads_no_files_shares_its_trainer_and_one_with_an_opponent_is_built_again():
    assert make_trainer(TINY) is make_trainer(TINY.replace())  # equal configs, one trainer
    assert make_trainer(TINY.replace(seed=TINY.seed + 1)) is not make_trainer(TINY)
    with_opponent = TINY.replace(opponent="greedy")  # an agent spec may name a run directory: built each time
    assert make_trainer(with_opponent) is not make_trainer(with_opponent)


SHARDED = textwrap.dedent("""
    import json, jax, numpy as np
    from blokus_agents.players.configs import PPOConfig
    from blokus_agents.training.ppo import make_train
    from blokus_agents.training.mesh import make_mesh
    assert jax.local_device_count() == 4, jax.devices()
    config = PPOConfig.from_dict(json.loads({config!r}))
    single, sharded = make_train(config), make_train(config, make_mesh())
    a, b = single.init(jax.random.PRNGKey(0)), sharded.init(jax.random.PRNGKey(0))
    assert len(b.env_state.board.sharding.device_set) == 4
    assert b.env_state.board.addressable_shards[0].data.shape[0] == config.num_envs // 4
    for _ in range(2):
        (a, ma), (b, mb) = single.update(a), sharded.update(b)
    assert len(b.env_state.board.sharding.device_set) == 4
    assert all(x.sharding.is_fully_replicated for x in jax.tree.leaves(b.params))
    np.testing.assert_array_equal(np.asarray(a.env_state.board), np.asarray(b.env_state.board))
    for x, y in zip(jax.tree.leaves(a.params), jax.tree.leaves(b.params)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=2e-4, atol=2e-6)
    for k in ma:
        np.testing.assert_allclose(float(ma[k]), float(mb[k]), rtol=1e-3, atol=1e-5, err_msg=k)
    print("SHARDED-OK")
""")


@pytest.mark.slow
def test_sharded_training_on_four_host_devices_matches_one_device():
    config = TINY.replace(num_envs=8)
    flags = f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count=4"  # the suite's, and 4 devices
    env = {**os.environ, "XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu"}
    code = SHARDED.format(config=json.dumps(config.to_dict()))
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0 and "SHARDED-OK" in proc.stdout, proc.stderr[-3000:]


@pytest.mark.slow
def test_cli_train_writes_metrics_plot_and_a_checkpoint_the_arena_can_load(tmp_path, capsys):
    from blokus_agents import cli

    out = tmp_path / "run"
    args = [
        "train",
        "--variant",
        "simple",
        "--total-steps",
        "32",
        "--num-envs",
        "4",
        "--num-steps",
        "4",
        "--channels",
        "4",
        "--blocks",
        "1",
        "--out",
        str(out),
        "--eval-every",
        "2",
        "--eval-games",
        "2",
        "--no-progress",
        "--cpu-devices",
        "1",
        "--json",
        str(tmp_path / "summary.json"),
    ]
    assert cli.main(args) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["updates"] == 2 and 0.0 <= summary["win_rate_vs_greedy"] <= 1.0
    lo, hi = summary["win_rate_ci_vs_greedy"]
    assert lo <= summary["win_rate_vs_greedy"] <= hi and summary["eval_games"] == 2
    printed = capsys.readouterr()
    table = printed.out  # a short table, not raw JSON
    assert "vs greedy" in table and "env steps" in table and not table.lstrip().startswith("{")
    assert "initial network: vs_random=" in printed.err and "n=2" in printed.err  # shown even without the bar
    records = read_metrics(out)
    assert [r["update"] for r in records] == [0, 1, 2] and "win_rate_vs_random" in records[-1]
    assert (out / "win_rate.png").stat().st_size > 1000 and checkpoint_index.latest_step(out) == 2
    # resuming with a larger budget continues the same run
    resume = [a if a != "32" else "48" for a in args] + ["--resume"]
    assert cli.main(resume) == 0 and checkpoint_index.latest_step(out) == 3
    # the longer run's learning rate decays over its new length, and training says so
    assert "learning-rate horizon 3 updates (was 2)" in capsys.readouterr().err
    from blokus_agents.training.optim import lr_horizon

    assert lr_horizon(checkpoint.restore(out, make_train(checkpoint_read.load_config(out)))) == 3
    assert (
        cli.main(["eval", "--variant", "simple", "--agents", str(out), "random", "--games", "2", "--no-progress"]) == 0
    )
    assert "random" in capsys.readouterr().out
    assert cli.main(["eval", "--variant", "duo", "--agents", str(out), "random", "--no-progress"]) == 2
    assert "trained on variant 'simple'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------ host loop
@pytest.mark.slow
def test_resume_after_a_kill_logs_every_update_once_and_says_it_compiles(tmp_path, capsys):
    out = tmp_path / "killed"
    run(TINY, out, eval_every=0, checkpoint_every=1, progress=False, mesh=None, until_update=1)
    with open(out / "metrics.jsonl", "a") as f:  # a kill after logging updates 2 and 3, before their checkpoint
        f.write(json.dumps({"update": 2, "env_steps": 128}) + "\n" + json.dumps({"update": 3}) + '\n{"upd')
    capsys.readouterr()
    summary = run(TINY, out, eval_every=2, eval_games=2, progress=True, mesh=None, resume=True)
    updates = [r["update"] for r in read_metrics(out)]
    assert updates == sorted(set(updates)) == [1, 2, 3]
    err = capsys.readouterr().err
    # the resumed run kept checkpoint_every=1 (not the default 50: update 2 was checkpointed too) and said what changed
    assert sorted(int(p.name) for p in (out / "checkpoints").iterdir()) == [1, 2, 3]
    was = Settings().eval_games  # the run started with the declared default
    assert "resumed with --eval-every 2 (was 0)" in err and f"resumed with --eval-games 2 (was {was})" in err
    assert "--checkpoint-every" not in err
    assert "compiling the PPO update" in err and "compiled in" in err and "s/s" not in err
    assert summary["compile_s"] > 0
    last = read_metrics(out)[-1]  # the last update is evaluated, and the summary says so
    assert summary["win_rate_vs_greedy"] == last["win_rate_vs_greedy"]
    assert "vs_greedy=" + f"{last['win_rate_vs_greedy']:.2f}" in err


def test_a_second_trainer_on_the_same_directory_refuses_and_stale_locks_are_taken_over(tmp_path):
    from blokus_agents.training.rundir import LOCK_FILE, run_lock

    out = tmp_path / "locked"
    out.mkdir()
    with run_lock(out):  # a live trainer holds the directory (an flock, not just a file with a pid)
        with pytest.raises(CheckpointError, match=f"in use by another trainer \\(pid {os.getpid()}\\)"):
            run(TINY, out, eval_every=0, progress=False, mesh=None)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (out / LOCK_FILE).write_text(f"{dead.pid} {__import__('socket').gethostname()}\n")
    run(TINY, out, eval_every=0, progress=False, mesh=None, until_update=1)
    assert checkpoint_index.latest_step(out) == 1 and not (out / LOCK_FILE).exists()
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(CheckpointError, match="is a file"):
        run(TINY, file, eval_every=0, progress=False, mesh=None)


def test_learning_rate_schedule_lives_in_the_optimiser_state(trainer):
    runner = trainer.init(jax.random.PRNGKey(0))
    assert int(runner.lr_horizon) == TINY.num_updates
    from blokus_agents.training.optim import with_lr_horizon

    shorter = with_lr_horizon(jax.tree.map(jnp.copy, runner), 1)  # a copy: update donates its runner
    (_, m0), (after, m1) = trainer.update(runner), trainer.update(shorter)
    assert float(m0["learning_rate"]) == float(m1["learning_rate"]) == pytest.approx(TINY.learning_rate)
    steps = int(after.opt_state.hyperparams_states["learning_rate"].count)  # read before update donates `after`
    assert steps == TINY.update_epochs * TINY.num_minibatches
    _, m2 = trainer.update(after)  # past its horizon of 1 update: the final fraction
    assert float(m2["learning_rate"]) == pytest.approx(TINY.learning_rate * TINY.final_lr_fraction)


@pytest.mark.slow
def test_a_diverging_run_stops_with_a_clear_error_and_keeps_its_finite_checkpoints(tmp_path, monkeypatch):
    from blokus_agents.training import scaffold, train
    from blokus_jax.errors import ConfigError

    # a real divergence: the first update's loss or parameter norm is already non-finite; nothing is saved
    wild = tmp_path / "wild"
    with pytest.raises(ConfigError, match=r"training diverged at update 1: .*not finite.*no checkpoint was written"):
        run(TINY.replace(learning_rate=1e9, max_grad_norm=1e9), wild, eval_every=0, progress=False, mesh=None)
    assert (
        checkpoint_index.latest_step(wild) is None and read_metrics(wild) == [] and not (wild / "train.lock").exists()
    )

    # a run whose parameters turn NaN in update 2 (as a diverging update reports it: in param_norm) stops there
    real_compile = train._Session.compile

    def poisoned(self, runner):
        real = real_compile(self, runner)

        def update(runner):
            runner, metrics = real(runner)
            if int(runner.update) == 2:
                runner = runner.replace(params=jax.tree.map(lambda x: x * jnp.nan, runner.params))
                metrics = {**metrics, "param_norm": scaffold.param_norm(runner.params)}
            return runner, metrics

        return update

    monkeypatch.setattr(train._Session, "compile", poisoned)
    out = tmp_path / "diverged"
    with pytest.raises(ConfigError, match=r"update 2: param_norm not finite.*last checkpoint \(update 1\) is kept"):
        run(TINY, out, eval_every=0, checkpoint_every=1, progress=False, mesh=None)
    assert checkpoint_index.latest_step(out) == 1 and [r["update"] for r in read_metrics(out)] == [1]
    params = checkpoint_read.load_params(out)[1]
    assert all(np.isfinite(np.asarray(x)).all() for x in jax.tree.leaves(params))


def test_run_settings_resolve_over_the_saved_ones_and_bad_settings_files_are_refused(tmp_path):
    from blokus_agents.training.rundir import SETTINGS_FILE, Settings, read_settings, resolve_settings

    saved = Settings(checkpoint_every=1, minutes=5.0)
    assert resolve_settings(saved, {}) == (saved, [])
    settings, changed = resolve_settings(saved, {"checkpoint_every": 5, "minutes": float("inf")})
    assert settings.checkpoint_every == 5 and settings.minutes is None and settings.eval_games == saved.eval_games
    assert changed == ["--checkpoint-every 5 (was 1)", "--minutes no limit (was 5.0)"]
    assert resolve_settings(None, {"eval_every": 3}) == (Settings(eval_every=3), [])  # a new run: nothing "changed"
    assert read_settings(tmp_path) is None
    path = tmp_path / SETTINGS_FILE
    bad = (b"[1]", b'{"eval_every": -1}', b'{"nosuch": 1}', b"{", b"\xff\xfe", b'{"minutes": true}')
    for body in (*bad, b"[" * 50_000, b" " * 70_000):  # deeply nested; larger than the 64 KiB a settings file may be
        path.write_bytes(body)
        with pytest.raises(CheckpointError, match="settings.json"):
            read_settings(tmp_path)
    path.unlink()
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    path.symlink_to(outside)
    with pytest.raises(CheckpointError, match="settings.json"):
        read_settings(tmp_path)
