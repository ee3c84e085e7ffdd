"""Training stopped by a signal keeps its work; a resumed run continues its clock and its time budget; checkpoints
on a time interval; the learning-rate decay fitted to the deadline from the updates' wall time."""

from __future__ import annotations

import os
import re
import signal

import pytest
from helpers import TINY_AZ

from blokus_agents.players import checkpoint_index, checkpoint_read
from blokus_agents.players.configs import PPOConfig
from blokus_agents.training import train
from blokus_agents.training.rundir import read_metrics, read_settings
from blokus_agents.training.train import run

TINY = PPOConfig(
    variant="simple",
    num_envs=8,
    num_steps=8,
    total_steps=8 * 8 * 6,
    update_epochs=1,
    num_minibatches=1,
    channels=8,
    blocks=1,
    value_hidden=16,
)


class FakeClock:
    """A session clock that moves only when told: each update takes ``per_update`` seconds of compute and each
    logged record ``per_record`` more (logging, evaluation and checkpoints), so time budgets are deterministic."""

    def __init__(self, per_update: float = 1.0, per_record: float = 0.0):
        self.now, self.per_update, self.per_record = 1000.0, per_update, per_record

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clocked(monkeypatch):
    """Patch the session's clock, its compiled update (which advances the clock and can send a signal at a given
    update) and its log (which advances the clock by the overhead of an update)."""
    clock = FakeClock()
    signals: dict[int, int] = {}
    monkeypatch.setattr(train._Session, "clock", staticmethod(clock))
    real_compile, real_log = train._Session.compile, train._Session.log

    def compile(self, runner):
        real = real_compile(self, runner)

        def update(runner):
            runner, metrics = real(runner)
            clock.now += clock.per_update
            if int(runner.update) in signals:
                os.kill(os.getpid(), signals[int(runner.update)])
            return runner, metrics

        return update

    def log(self, record):
        clock.now += clock.per_record
        real_log(self, record)

    monkeypatch.setattr(train._Session, "compile", compile)
    monkeypatch.setattr(train._Session, "log", log)
    return clock, signals


@pytest.mark.slow
def test_a_signal_stops_after_the_update_saves_it_and_resume_continues_with_nothing_lost(tmp_path, clocked, capsys):
    clock, signals = clocked
    clock.per_update = 1.0
    out = tmp_path / "run"
    signals[2] = signal.SIGINT
    summary = run(TINY, out, eval_every=0, checkpoint_every=0, checkpoint_minutes=0, progress=False, mesh=None)
    assert summary["interrupted"] is True and summary["updates"] == 2
    assert checkpoint_index.latest_step(out) == 2 and [r["update"] for r in read_metrics(out)] == [1, 2]
    err = capsys.readouterr().err
    assert "SIGINT received: stopping after this update" in err
    assert re.search(r"compiling the PPO update \(simple, 8 games x 8 steps, on 1 (of \d+ )?cpu devices?\)", err)
    assert f"continue with: blokus-jax train --out {out} --resume" in err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handlers are given back

    signals.clear()
    signals[4] = signal.SIGTERM
    summary = run(TINY, out, progress=False, mesh=None, resume=True)
    assert summary["interrupted"] is True and checkpoint_index.latest_step(out) == 4
    assert "resumed from update 2" in capsys.readouterr().err
    signals.clear()
    summary = run(TINY, out, progress=False, mesh=None, resume=True)
    assert summary["interrupted"] is False and summary["updates"] == TINY.num_updates
    records = read_metrics(out)
    assert [r["update"] for r in records] == list(range(1, TINY.num_updates + 1))
    times = [r["time_s"] for r in records]
    assert times == sorted(times) and times[-1] == pytest.approx(TINY.num_updates)  # one clock over three sessions


def test_a_signal_before_the_first_update_saves_update_zero_so_resume_works(tmp_path, clocked, monkeypatch):
    out = tmp_path / "early"
    real_start = train._Session.start

    def start(self, *args):
        runner = real_start(self, *args)
        os.kill(os.getpid(), signal.SIGTERM)  # e.g. while compiling
        return runner

    monkeypatch.setattr(train._Session, "start", start)
    summary = run(TINY, out, eval_every=0, progress=False, mesh=None)
    assert summary["interrupted"] is True and summary["updates"] == 0 and checkpoint_index.latest_step(out) == 0
    monkeypatch.setattr(train._Session, "start", real_start)
    assert run(TINY, out, progress=False, mesh=None, resume=True, until_update=1)["updates"] == 1


def test_a_second_signal_stops_at_once_and_keeps_the_earlier_checkpoints(tmp_path, clocked):
    _, signals = clocked
    out = tmp_path / "twice"
    real_kill = os.kill
    signals[3] = signal.SIGINT

    def twice(pid, sig):
        real_kill(pid, sig)
        real_kill(pid, sig)

    os.kill = twice
    try:
        with pytest.raises(KeyboardInterrupt, match="twice"):
            run(TINY, out, eval_every=0, checkpoint_every=2, progress=False, mesh=None)
    finally:
        os.kill = real_kill
    assert checkpoint_index.latest_step(out) == 2 and not (out / "train.lock").exists()


def test_the_time_budget_is_the_whole_runs_and_checkpoints_come_on_a_time_interval(tmp_path, clocked, capsys):
    clock, _ = clocked
    clock.per_update = 30.0  # half a minute an update: a 1.5-minute budget is 3 updates
    out = tmp_path / "timed"
    summary = run(
        TINY, out, minutes=1.5, eval_every=0, checkpoint_every=0, checkpoint_minutes=1, progress=False, mesh=None
    )
    assert summary["updates"] == 3 and read_settings(out).checkpoint_minutes == 1
    # saved at update 2 (a minute after the start) and at the end
    assert sorted(int(p.name) for p in (out / "checkpoints").iterdir()) == [2, 3]
    capsys.readouterr()
    summary = run(TINY, out, progress=False, mesh=None, resume=True)
    assert summary["updates"] == 3  # the budget is spent: nothing more
    err = capsys.readouterr().err
    assert "resumed from update 3, its time budget is spent (1.5 of --minutes 1.5" in err
    assert "give a larger --minutes" in err
    summary = run(TINY, out, minutes=2.5, progress=False, mesh=None, resume=True)
    assert summary["updates"] == 5
    assert "resumed from update 3 at 1.5 of 2.5 minutes (1.0 min left)" in capsys.readouterr().err
    # the summary has the run's clock (all sessions) besides this session's
    assert summary["run_seconds"] == pytest.approx(150.0) and summary["seconds"] == pytest.approx(60.0)


def test_the_summary_table_shows_the_runs_time_and_the_sessions(capsys):
    from blokus_agents.cli.train import _print_summary

    summary = {"updates": 5, "env_steps": 320, "seconds": 60.0, "run_seconds": 150.0, "steps_per_s": 5.0}
    _print_summary(summary, TINY, "runs/x", None)
    out = capsys.readouterr().out
    assert "time (whole run)" in out and "2.5 min (1.0 min this session)" in out


def test_settings_json_records_the_evaluation_schedule_that_runs(tmp_path):
    import json

    from blokus_agents.training.rundir import Settings, _write_settings

    timed = Settings(eval_every=25, minutes=30.0, evals=20)
    _write_settings(tmp_path, timed)
    schedule = json.loads((tmp_path / "settings.json").read_text())["eval_schedule"]
    assert schedule["every_updates"] == 25 and schedule["every_minutes"] == pytest.approx(1.5)
    assert "every 1.5 min of the run's clock" in schedule["text"]
    assert read_settings(tmp_path) == timed  # the derived record is not read back as a setting
    _write_settings(tmp_path, Settings(eval_every=0))
    assert json.loads((tmp_path / "settings.json").read_text())["eval_schedule"]["every_updates"] == 0


def test_a_time_limited_run_decays_its_learning_rate_by_the_deadline_counting_its_overheads(tmp_path, clocked):
    clock, _ = clocked
    clock.per_update, clock.per_record = 1.0, 3.0  # an update's wall time is four times its compute time
    config = TINY.replace(total_steps=8 * 8 * 100)
    out = tmp_path / "decay"
    run(config, out, minutes=40 / 60, eval_every=0, checkpoint_minutes=0, progress=False, mesh=None)
    records = read_metrics(out)
    assert len(records) == 11  # the deadline passes during update 11 (its log comes after the check)
    final = config.learning_rate * config.final_lr_fraction
    assert records[-1]["learning_rate"] == pytest.approx(final, rel=0.2)


def test_refused_run_directories_are_refused_before_anything_is_compiled(tmp_path, monkeypatch):
    from blokus_jax.errors import CheckpointError

    def no_trainer(*args, **kwargs):
        raise AssertionError("a trainer was built for a run that is refused")

    monkeypatch.setattr(train, "make_trainer", no_trainer)
    out = tmp_path / "file_in_the_way"
    out.mkdir()
    (out / "checkpoints").write_text("not a folder")
    with pytest.raises(CheckpointError, match="checkpoints' is not a folder"):
        run(TINY, out, progress=False, mesh=None)


@pytest.mark.slow
def test_an_alphazero_run_stopped_by_a_signal_resumes_to_the_same_network_as_an_unbroken_run(tmp_path, clocked):
    import jax
    import numpy as np

    config = TINY_AZ
    _, signals = clocked
    whole, stopped = tmp_path / "whole", tmp_path / "stopped"
    run(config, whole, eval_every=0, progress=False, mesh=None)
    signals[1] = signal.SIGINT
    assert run(config, stopped, eval_every=0, checkpoint_every=0, progress=False, mesh=None)["interrupted"]
    assert checkpoint_index.latest_step(stopped) == 1  # with its replay buffer: the newest checkpoint keeps it
    signals.clear()
    assert run(config, stopped, progress=False, mesh=None, resume=True)["updates"] == config.num_updates
    a, b = checkpoint_read.load_params(whole)[1], checkpoint_read.load_params(stopped)[1]
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b)):
        np.testing.assert_array_equal(x, y)


def test_a_time_limited_run_evaluates_a_fixed_number_of_times_over_its_budget(tmp_path, clocked):
    clock, _ = clocked
    clock.per_update = 30.0  # 6 updates in a 3-minute budget; evals=3: at 1 and 2 minutes and at the end
    out = tmp_path / "curve"
    config = TINY.replace(total_steps=8 * 8 * 100)
    settings = dict(eval_every=1000, eval_games=2, opponents=("random",), checkpoint_minutes=0)
    run(config, out, minutes=3, evals=3, progress=False, mesh=None, **settings)
    evaluated = [r["update"] for r in read_metrics(out) if "win_rate_vs_random" in r]
    assert evaluated == [0, 2, 4, 6] and read_settings(out).evals == 3


def test_compiling_the_update_is_not_charged_to_the_runs_time_budget(tmp_path, clocked, monkeypatch):
    """A compilation that takes longer than the whole budget (a resumed run that misses the compilation cache)
    leaves the budget to training: the run's clock starts once the update is compiled."""
    clock, _ = clocked
    clock.per_update, compiling = 1.0, [0]
    real_say = train._Session.say

    def say(self, text):
        if text.startswith("compiling the"):
            compiling[0] = 2  # the compile's second clock reading comes 1000 s after its first
        real_say(self, text)

    def tick():
        if compiling[0]:
            compiling[0] -= 1
            clock.now += 1000.0 * (compiling[0] == 0)
        return clock.now

    monkeypatch.setattr(train._Session, "say", say)
    monkeypatch.setattr(train._Session, "clock", staticmethod(tick))
    out = tmp_path / "slow_compile"
    summary = run(TINY, out, minutes=3.5 / 60, eval_every=0, checkpoint_minutes=0, progress=False, mesh=None)
    assert summary["compile_s"] == pytest.approx(1000.0) and summary["updates"] == 4
    assert [r["time_s"] for r in read_metrics(out)] == pytest.approx([1.0, 2.0, 3.0, 4.0])
