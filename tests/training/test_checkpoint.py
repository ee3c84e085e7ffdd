"""Orbax checkpoints of training runs: exact round trip, clear errors for missing, corrupt or mismatched ones, and
loading a trained policy for the arena and the CLI."""

from __future__ import annotations

import json

import jax
import numpy as np
import pytest
from helpers import write_old_checkpoint

import blokus_jax
from blokus_agents.core.policies import load_policy
from blokus_agents.players import checkpoint_index, checkpoint_read
from blokus_agents.players.configs import PPOConfig
from blokus_agents.training import checkpoint
from blokus_agents.training.algorithms import make_trainer
from blokus_agents.training.ppo import make_train
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
def trained():
    """A trainer and its runner after one update."""
    trainer = make_trainer(TINY)
    runner, _ = trainer.update(trainer.init(jax.random.PRNGKey(0)))
    return trainer, runner


@pytest.fixture()
def saved(tmp_path, trained):
    trainer, runner = trained
    assert checkpoint.save(tmp_path, runner, TINY) == 1
    return tmp_path


@pytest.mark.slow
def test_round_trip_restores_every_field_exactly(saved, trained):
    trainer, runner = trained
    restored = checkpoint.restore(saved, trainer)
    assert isinstance(restored.env_state, blokus_jax.State)
    same = jax.tree.map(lambda a, b: a.dtype == b.dtype and bool(np.array_equal(a, b)), runner, restored)
    assert all(jax.tree.leaves(same))
    assert checkpoint_read.load_config(saved) == TINY and checkpoint_index.latest_step(saved) == 1
    # the restored runner trains on identically
    (a, _), (b, _) = trainer.update(jax.tree.map(jax.numpy.copy, runner)), trainer.update(restored)  # update donates
    for x, y in zip(jax.tree.leaves(a.params), jax.tree.leaves(b.params)):
        np.testing.assert_array_equal(x, y)


def test_missing_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint in"):
        checkpoint.restore(tmp_path / "nowhere", make_trainer(TINY))
    assert checkpoint_index.latest_step(tmp_path) is None


def test_mismatched_config_names_the_differing_fields(saved, trained):
    with pytest.raises(CheckpointError, match=r"'channels': \(4, 8\)"):
        checkpoint.restore(saved, make_train(TINY.replace(channels=8)))
    # total_steps may change: it only extends (or shortens) the run
    longer = checkpoint.restore(saved, make_train(TINY.replace(total_steps=10 * TINY.total_steps)))
    assert int(longer.update) == 1 and int(longer.lr_horizon) == int(trained[1].lr_horizon)


def test_corrupt_array_data_is_a_clear_error(saved, trained):
    data = [p for p in (saved / "checkpoints" / "1" / "params").rglob("*") if p.is_file() and p.parent.name == "d"]
    assert data
    for p in data:
        p.write_bytes(b"not an array" * 3)
    with pytest.raises(CheckpointError, match="corrupt"):
        checkpoint.restore(saved, trained[0])


def test_corrupt_or_foreign_metadata_is_a_clear_error(saved, trained):
    meta = saved / "checkpoints" / "1" / "meta" / "metadata"
    original = json.loads(meta.read_text())
    meta.write_text(json.dumps({**original, "obs_version": 0}))
    with pytest.raises(CheckpointError, match="observation layout 0"):
        checkpoint.restore(saved, trained[0])
    meta.write_text(json.dumps({**original, "format_version": 99}))
    with pytest.raises(CheckpointError, match="format 99"):
        checkpoint_read.load_config(saved)
    meta.write_text("{truncated")
    with pytest.raises(CheckpointError, match="corrupt or incomplete"):
        checkpoint_read.load_config(saved)


def test_array_shapes_that_disagree_with_the_config_are_a_clear_error(saved, trained):
    meta = saved / "checkpoints" / "1" / "meta" / "metadata"
    original = json.loads(meta.read_text())
    wrong = TINY.replace(channels=8)
    meta.write_text(json.dumps({**original, "config": wrong.to_dict()}))
    with pytest.raises(CheckpointError, match="does not match"):
        checkpoint.restore(saved, make_train(wrong))


def test_load_policy_plays_legal_moves_and_checks_the_variant(saved):
    env = blokus_jax.make("simple")
    policy = jax.jit(load_policy(str(saved), env))
    state = env.init()
    for i in range(6):
        action = policy(jax.random.key(i), state)
        assert bool(env.is_legal(state, action))
        state = env.step(state, action)
    with pytest.raises(CheckpointError, match="trained on variant 'simple'"):
        load_policy(str(saved), blokus_jax.make("duo"))


def test_cli_agent_spec_accepts_a_checkpoint_directory(saved):
    from blokus_agents import resolve_agent

    env = blokus_jax.make("simple")
    action = resolve_agent(str(saved), env)(jax.random.key(0), env.init())
    assert bool(env.is_legal(env.init(), action)) and int(action) != env.pass_action


# ------------------------------------------------------------------------------------------ integrity
def _flip_parameter_bytes(run_dir, step=1, count=6):
    """Flip ``count`` bytes in the middle of every array-data file of checkpoint ``step``'s params (orbax keeps a
    per-process copy beside the merged one; the loader reads only one of them)."""
    for path in (run_dir / "checkpoints" / str(step) / "params").rglob("*"):
        if path.is_file() and path.parent.name == "d":
            data = bytearray(path.read_bytes())
            middle = len(data) // 2
            for i in range(middle, min(middle + count, len(data))):
                data[i] ^= 0xFF
            path.write_bytes(bytes(data))


def test_flipped_parameter_bytes_are_caught_by_load_eval_and_resume(saved, trained, capsys):
    _flip_parameter_bytes(saved)
    with pytest.raises(CheckpointError, match="corrupt"):
        checkpoint_read.load_params(saved)
    with pytest.raises(CheckpointError, match="corrupt"):
        checkpoint.restore(saved, trained[0])
    from blokus_agents import cli

    assert cli.main(["eval", "--variant", "simple", "--agents", str(saved), "random", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "CheckpointError" not in err and "corrupt" in err and len(err.splitlines()) == 1


def test_changed_hash_or_ill_typed_meta_is_a_checkpoint_error(saved, trained):
    meta = saved / "checkpoints" / "1" / "meta" / "metadata"
    original = json.loads(meta.read_text())
    assert (
        set(original["sha256"]) == {"params", "state"} and original["format_version"] == checkpoint_read.FORMAT_VERSION
    )
    meta.write_text(json.dumps({**original, "sha256": {**original["sha256"], "state": "0" * 64}}))
    with pytest.raises(CheckpointError, match="content hash of its 'state'"):
        checkpoint.restore(saved, trained[0])
    checkpoint_read.load_params(saved)  # playing needs only the params, which are intact
    bad_metas = [
        {k: v for k, v in original.items() if k != "config"},
        {**original, "sha256": None},
        {**original, "format_version": "2"},
        {**original, "config": [1, 2]},
        {**original, "config": {**original["config"], "channels": "4"}},
        {**original, "config": {**original["config"], "num_envs": -3}},
        {**original, "config": {**original["config"], "learning_rate": None}},
        [1, 2, 3],
    ]
    for bad in bad_metas:
        meta.write_text(json.dumps(bad))
        with pytest.raises(CheckpointError):
            checkpoint_read.load_params(saved)
        with pytest.raises(CheckpointError):
            checkpoint.restore(saved, trained[0])


def _save_format_1(run_dir, runner):
    """A checkpoint as written before content hashes (format 1, commit 340b448): params, an old-style state and
    meta without hashes."""
    from blokus_jax.observe import OBS_VERSION

    meta = {"format_version": 1, "obs_version": OBS_VERSION, "config": TINY.to_dict()}
    state = {
        "opt_state": runner.opt_state.inner_state[:2],
        "env_state": runner.env_state,
        "key": runner.key,
        "update": runner.update,
        "lr_horizon": runner.lr_horizon,
    }  # optax.chain(clip, adam) and the horizon
    write_old_checkpoint(run_dir, 1, runner.params, state, meta)


def test_format_1_checkpoints_still_play_with_a_warning_but_do_not_resume(tmp_path, trained, caplog):
    trainer, runner = trained
    _save_format_1(tmp_path, runner)
    with caplog.at_level("WARNING", logger="blokus_agents.players.checkpoint_read"):
        config, params = checkpoint_read.load_params(tmp_path)
    assert config == TINY and [r.getMessage() for r in caplog.records if "old format 1" in r.getMessage()]
    for x, y in zip(jax.tree.leaves(params), jax.tree.leaves(runner.params)):
        np.testing.assert_array_equal(x, y)
    env = blokus_jax.make("simple")
    assert bool(env.is_legal(env.init(), load_policy(str(tmp_path), env)(jax.random.key(0), env.init())))
    with pytest.raises(CheckpointError, match="not resumed"):
        checkpoint.restore(tmp_path, trainer)


def test_loading_a_run_directory_is_quiet(saved, capfd):
    capfd.readouterr()
    load_policy(str(saved), blokus_jax.make("simple"))
    out, err = capfd.readouterr()
    assert "absl" not in err and "WARNING" not in err and out == ""


def test_eval_and_play_default_to_the_variant_of_a_run_directory(saved, capsys, monkeypatch):
    import io
    import sys

    from blokus_agents import cli

    assert cli.main(["eval", "--agents", str(saved), "random", "--games", "2", "--no-progress"]) == 0
    captured = capsys.readouterr()
    assert "simple: 2 games per pairing" in captured.out and "variant simple" in captured.err
    monkeypatch.setattr(sys, "stdin", io.StringIO("quit\n"))
    assert cli.main(["play", "--opponent", str(saved), "--hint-bot", "corners"]) == 0
    assert "  a b c d e f g\n" in capsys.readouterr().out  # the 7x7 board of `simple`


def test_upgrade_rewrites_format_1_checkpoints_so_that_they_resume(tmp_path, trained):
    trainer, runner = trained
    _save_format_1(tmp_path, runner)
    assert checkpoint.upgrade(tmp_path) == [1] and checkpoint.upgrade(tmp_path) == []
    restored = checkpoint.restore(tmp_path, trainer)
    same = jax.tree.map(lambda a, b: a.dtype == b.dtype and bool(np.array_equal(a, b)), runner, restored)
    assert all(jax.tree.leaves(same))
    assert (tmp_path / "checkpoints_format1" / "1").is_dir()


# ------------------------------------------------------------------------------- run directories under stress
def test_odd_checkpoint_folder_names_do_not_confuse_step_listing(saved):
    root = saved / "checkpoints"
    for name in ("²", "0007", "٣", "7.orbax-checkpoint-tmp-1", "-1", "1e3", " 5"):
        (root / name).mkdir()
    (root / "9").write_text("a file, not a checkpoint")
    assert checkpoint_index.latest_step(saved) == 1 and checkpoint.saved_steps(saved) == [1]
    assert checkpoint_read.load_config(saved) == TINY
    with pytest.raises(CheckpointError, match="no checkpoint 7 in"):
        checkpoint_read.load_config(saved, 7)
    with pytest.raises(CheckpointError, match="no checkpoint '1'"):
        checkpoint_read.load_config(saved, "1")
    assert checkpoint_read.load_config(saved, np.int64(1)) == TINY


@pytest.mark.parametrize(
    "kind, message",
    [
        ("dev_zero", "character device, not a regular file"),
        ("fifo", "FIFO"),
        ("deep", "nested too deeply"),
        ("not_utf8", "not UTF-8"),
        ("huge_int", "not valid JSON|invalid config"),
        ("big_config_int", "invalid config"),
        ("float_for_int", "invalid config.*channels"),
        ("numpy_style", "invalid config"),
        ("bad_hash", "no valid 'sha256'"),
        ("huge", "over the 1,048,576-byte limit"),
    ],
)
def test_edited_metadata_is_a_checkpoint_error_never_a_traceback_or_a_hang(saved, trained, kind, message):
    import os

    meta = saved / "checkpoints" / "1" / "meta" / "metadata"
    original = json.loads(meta.read_text())
    meta.unlink()
    if kind == "dev_zero":
        meta.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(meta)
    elif kind == "deep":
        meta.write_text("[" * 200_000 + "]" * 200_000)
    elif kind == "not_utf8":
        meta.write_bytes(b'{"format_version": 2, "x": "\xff"}')
    elif kind == "huge_int":
        meta.write_text(json.dumps(original).replace('"seed": 0', '"seed": ' + "9" * 5000))
    elif kind == "big_config_int":
        meta.write_text(json.dumps({**original, "config": {**original["config"], "seed": 10**20}}))
    elif kind == "float_for_int":
        meta.write_text(json.dumps({**original, "config": {**original["config"], "channels": 4.0}}))
    elif kind == "numpy_style":
        meta.write_text(json.dumps({**original, "config": {**original["config"], "num_envs": True}}))
    elif kind == "bad_hash":
        meta.write_text(json.dumps({**original, "sha256": {"params": "x" * 64, "state": "y"}}))
    else:
        meta.write_bytes(b" " * (checkpoint_index.MAX_META_BYTES + 1))
    for load in (checkpoint_read.load_config, checkpoint_read.load_params, lambda d: checkpoint.restore(d, trained[0])):
        with pytest.raises(CheckpointError, match=message):
            load(saved)


def test_non_finite_parameters_with_a_matching_hash_are_refused(tmp_path, trained):
    trainer, runner = trained
    for bad in (np.nan, np.inf, -np.inf):
        run_dir = tmp_path / f"run_{bad}"
        poisoned = runner.replace(params=jax.tree.map(lambda x: x.at[(0,) * x.ndim].set(bad), runner.params))
        checkpoint.save(run_dir, poisoned, TINY)  # hashes are computed over the poisoned arrays: they match
        with pytest.raises(CheckpointError, match="non-finite parameters"):
            checkpoint_read.load_params(run_dir)
        with pytest.raises(CheckpointError, match="non-finite parameters"):
            checkpoint.restore(run_dir, trainer)
        with pytest.raises(CheckpointError, match="non-finite parameters"):
            load_policy(str(run_dir), blokus_jax.make("simple"))


def test_each_missing_run_context_says_what_it_needed(tmp_path, capsys):
    from blokus_agents import cli
    from blokus_agents.core.policies import AgentSpecError, resolve_agent
    from blokus_agents.players import baselines
    from blokus_agents.training import train

    empty = tmp_path / "empty"
    empty.mkdir()
    env = blokus_jax.make("simple")
    with pytest.raises(CheckpointError, match="--resume .*needs a checkpoint.*start a new run without --resume"):
        checkpoint.restore(empty, make_trainer(TINY))
    for spec, needed in ((str(empty), f"agent '{empty}' needs"), (f"az:{empty}", f"agent 'az:{empty}' needs")):
        with pytest.raises(AgentSpecError, match=f"{needed} a trained run directory, but no checkpoint") as err:
            resolve_agent(spec, env)
        assert "--resume" not in str(err.value)
    with pytest.raises(CheckpointError, match="exporting .* needs a trained run") as err:
        baselines.export_baseline(empty, "x", tmp_path / "shelf", command="train")
    assert "--resume" not in str(err.value)
    with pytest.raises(CheckpointError, match="--init-from .* needs a trained run to copy its network") as err:
        train.run(TINY, tmp_path / "new", init_from=empty, eval_every=0, progress=False, mesh=None)
    assert "--resume" not in str(err.value) and not (tmp_path / "new").exists()
    for argv, needed in (
        (["train", "--out", str(empty), "--resume"], "--resume (resume=True) needs a checkpoint"),
        (["train", "--out", str(tmp_path / "n2"), "--init-from", str(empty)], "--init-from .* needs a trained run"),
        (["eval", "--agents", str(empty), "random"], "needs a trained run directory"),
        (["play", "--opponent", f"az:{empty}"], "needs a trained run directory"),
    ):
        assert cli.main([*argv, "--no-progress"] if argv[0] != "play" else argv) == 2
        err = capsys.readouterr().err
        assert needed.split(".*")[0] in err and len(err.strip().splitlines()) == 1, err
        if argv[0] != "train" or "--resume" not in argv:
            assert "--resume" not in err


def test_a_refused_init_from_leaves_the_run_directory_untouched(tmp_path, trained, saved):
    from blokus_agents.training import train

    source = tmp_path / "source"
    checkpoint.save(source, trained[1], TINY)
    out = tmp_path / "out"
    out.mkdir()
    metrics = out / "metrics.jsonl"
    metrics.write_text('{"update": 0, "env_steps": 0, "win_rate_vs_random": 0.5}\n')  # a run killed early
    before = metrics.read_bytes()
    with pytest.raises(CheckpointError, match="has a network of channels=4.*give the same sizes"):
        train.run(TINY.replace(channels=8), out, init_from=source, eval_every=0, progress=False, mesh=None)
    assert metrics.read_bytes() == before and sorted(p.name for p in out.iterdir()) == ["metrics.jsonl"]
    # a resumed run reads its log before it is accepted: a malformed line is an error naming it, nothing is changed
    metrics = saved / "metrics.jsonl"
    metrics.write_text('{"update": 0, "env_steps": 0}\n' + "[" * 100_000 + "]" * 100_000 + "\n")
    before = metrics.read_bytes()
    with pytest.raises(CheckpointError, match="metrics.jsonl', line 2 is nested too deeply"):
        train.run(TINY, saved, resume=True, until_update=2, eval_every=0, progress=False, mesh=None)
    assert metrics.read_bytes() == before and checkpoint_index.latest_step(saved) == 1


def test_a_second_interrupt_during_a_save_waits_for_the_checkpoint_to_be_complete(tmp_path, trained, monkeypatch):
    import os
    import signal

    import orbax.checkpoint as ocp

    trainer, runner = trained
    original = ocp.CheckpointManager.save

    def interrupted_save(self, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # the second Ctrl-C lands while orbax writes
        return original(self, *args, **kwargs)

    monkeypatch.setattr(ocp.CheckpointManager, "save", interrupted_save)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            checkpoint.save(tmp_path, runner, TINY)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert checkpoint_index.latest_step(tmp_path) == 1
    assert not [p.name for p in (tmp_path / "checkpoints").iterdir() if "tmp" in p.name]
    restored = checkpoint.restore(tmp_path, trainer)
    assert int(restored.update) == 1


def test_a_half_written_checkpoint_is_removed_on_the_next_start(saved):
    partial = saved / "checkpoints" / "2.orbax-checkpoint-tmp-1712345678"
    (partial / "params").mkdir(parents=True)
    (partial / "params" / "junk").write_bytes(b"x")
    other = saved / "checkpoints" / "notes.orbax-checkpoint-tmp"  # not a step's folder: kept
    other.mkdir()
    assert checkpoint.remove_partial(saved) == [partial.name]
    assert not partial.exists() and other.exists() and checkpoint_index.latest_step(saved) == 1
    assert checkpoint.remove_partial(saved / "nowhere") == []


@pytest.mark.parametrize("keep, expected", [(0, [1, 2, 3, 4]), (2, [3, 4])])
def test_keep_checkpoints_keeps_every_checkpoint_or_the_newest(tmp_path, keep, expected):
    from blokus_agents.players.checkpoint_index import saved_steps
    from blokus_agents.training import train

    config = TINY.replace(total_steps=4 * TINY.steps_per_update)
    train.run(config, tmp_path, eval_every=0, checkpoint_every=1, keep_checkpoints=keep, progress=False, mesh=None)
    assert saved_steps(tmp_path) == expected
