"""``blokus-jax train``: the time-interval checkpoint flag reaches the run, and a run stopped by a signal exits
with status 130 after its summary."""

from __future__ import annotations

import math

import pytest

from blokus_agents import cli
from blokus_agents.training import train as trainer
from blokus_agents.training.rundir import Settings


@pytest.fixture
def fake_run(monkeypatch):
    """Replace the trainer's ``run`` with one that records its arguments and returns a stopped run's summary."""
    seen: dict = {}

    def run(config, out, **kwargs):
        seen.update(kwargs, out=out)
        return {
            "updates": 3,
            "env_steps": 3 * config.steps_per_update,
            "seconds": 12.0,
            "compile_s": 1.0,
            "steps_per_s": math.nan,
            "interrupted": True,
        }

    monkeypatch.setattr(trainer, "run", run)
    return seen


def test_checkpoint_minutes_reaches_the_run_and_a_stopped_run_exits_130(tmp_path, fake_run, capsys):
    out = str(tmp_path / "run")
    assert cli.main(["train", "--out", out, "--checkpoint-minutes", "0.5"]) == 130
    assert fake_run["checkpoint_minutes"] == 0.5 and fake_run["out"] == out
    assert "run directory:" in capsys.readouterr().out
    assert cli.main(["train", "--out", str(tmp_path / "other")]) == 130
    # left to train.run, where a new run takes Settings' default (5 minutes)
    assert fake_run["checkpoint_minutes"] is None and Settings().checkpoint_minutes == 5.0


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "x"])
def test_a_bad_checkpoint_interval_is_refused_by_the_parser(value, capsys):
    with pytest.raises(SystemExit):
        cli.main(["train", "--checkpoint-minutes", value])
    assert "--checkpoint-minutes" in capsys.readouterr().err
