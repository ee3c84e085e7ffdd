"""Optional extras are checked before any work, in one line naming the extra; a missing plot never costs a run."""

from __future__ import annotations

import importlib
import json
import sys

import pytest

from blokus_agents import cli
from blokus_jax import _extras
from blokus_jax.errors import BlokusError, MissingExtraError


def _hide(monkeypatch, *modules: str) -> None:
    """Make ``modules`` (and their submodules already imported) unimportable for the test."""
    for name in list(sys.modules):
        if any(name == m or name.startswith(m + ".") for m in modules):
            monkeypatch.delitem(sys.modules, name)
    for name in modules:
        monkeypatch.setitem(sys.modules, name, None)


def test_require_names_the_extra_and_available_warns(monkeypatch):
    _hide(monkeypatch, "gymnasium")
    assert _extras.missing(["gymnasium", "numpy"]) == ["gymnasium"]
    with pytest.raises(MissingExtraError, match=r'the thing needs gymnasium.*pip install "blokus-jax\[gym\]"') as err:
        _extras.require("gym", "the thing")
    assert isinstance(err.value, BlokusError) and isinstance(err.value, ImportError)
    assert len(str(err.value).splitlines()) == 1
    with pytest.warns(UserWarning, match=r"blokus-jax\[gym\]"):
        assert not _extras.available("gym", "the thing")
    assert _extras.available("train", "x", ("numpy",))


@pytest.mark.parametrize(
    "module, hidden, extra",
    [
        ("blokus_jax.adapters.gymnasium", "gymnasium", "gym"),
        ("blokus_jax.adapters.pettingzoo", "pettingzoo", "pettingzoo"),
    ],
)
def test_the_adapters_name_their_extra_when_it_is_missing(monkeypatch, module, hidden, extra):
    _hide(monkeypatch, hidden)
    monkeypatch.delitem(sys.modules, module, raising=False)  # imported afresh
    with pytest.raises(MissingExtraError, match=rf'needs {hidden}.*pip install "blokus-jax\[{extra}\]"'):
        importlib.import_module(module)


def test_train_without_orbax_stops_before_any_work(monkeypatch, tmp_path, capsys):
    _hide(monkeypatch, "orbax")
    out = tmp_path / "run"
    assert cli.main(["train", "--variant", "simple", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "blokus-jax train needs orbax-checkpoint" in err and 'pip install "blokus-jax[train]"' in err
    assert err.count("\n") == 1 and not out.exists()


def test_a_run_directory_agent_without_orbax_names_the_extra(monkeypatch, tmp_path):
    import blokus_jax
    from blokus_agents.core.policies import resolve_agent

    (tmp_path / "run").mkdir()
    _hide(monkeypatch, "orbax")
    with pytest.raises(MissingExtraError, match=r"loading the run directory .*blokus-jax\[train\]"):
        resolve_agent(str(tmp_path / "run"), blokus_jax.make("simple"))


@pytest.mark.slow
def test_training_without_matplotlib_keeps_the_checkpoint_and_metrics_and_skips_the_plot(monkeypatch, tmp_path):
    from blokus_agents.players import checkpoint_index
    from blokus_agents.players.configs import PPOConfig
    from blokus_agents.training import curves, rundir, train

    tiny = PPOConfig(
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
    _hide(monkeypatch, "matplotlib")
    out = tmp_path / "run"
    with pytest.warns(UserWarning, match=r"win-rate plot .*matplotlib.*blokus-jax\[train\]"):
        train.run(tiny, out, eval_every=0, progress=False, mesh=None, until_update=1)
    assert checkpoint_index.latest_step(out) == 1
    rows = [json.loads(line) for line in (out / rundir.METRICS_FILE).read_text().splitlines()]
    assert rows[-1]["update"] == 1
    assert not (out / curves.PLOT_FILE).exists()


def test_the_cli_warns_before_training_that_the_plot_will_be_skipped(monkeypatch, capsys):
    _hide(monkeypatch, "matplotlib")
    cli._check_extras("train")
    err = capsys.readouterr().err
    assert "warning: matplotlib is not installed, so the plot is skipped" in err and "blokus-jax[train]" in err
