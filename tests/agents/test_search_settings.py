"""The one declaration of the search settings, the shared message helpers, the catalog of built-in agents and the
table of ``blokus-jax`` commands."""

from __future__ import annotations

import argparse
import inspect

import pytest

from blokus_agents import cli
from blokus_agents.core import policies
from blokus_agents.core.messages import brief, first_line, gib, short, shown
from blokus_agents.core.policies import AgentSpecError
from blokus_agents.players import baselines
from blokus_agents.players.configs import AZConfig
from blokus_agents.search import mcts as search
from blokus_agents.search.settings import SETTING_NAMES, SETTING_OPTIONS, SearchSettings

SETTINGS = ("sims", "k", "considered", "gumbel_scale", "mix", "playouts", "playout", "margin", "seconds", "prior")


def test_the_ten_settings_are_declared_once_with_a_range_each():
    assert SETTING_NAMES == SETTINGS
    assert set(SETTING_OPTIONS) == set(SETTINGS)
    assert SearchSettings().replace(sims=8).options() == {**SearchSettings().options(), "sims": 8}


def test_every_search_agent_takes_the_declared_settings():
    """Explicit signatures whose defaults are read from the declarations: ``az:`` takes `SearchSettings`' defaults,
    ``baseline:`` the same but ``sims`` 0 and ``mix`` ``None`` (the baseline's own), and the network search one
    `SearchSettings` argument."""
    for factory in (search.az_policy, baselines.baseline_policy):
        parameters = inspect.signature(factory).parameters
        assert list(parameters)[2:] == list(SETTINGS), factory.__name__
        defaults = {name: parameters[name].default for name in SETTINGS}
        own = {"sims": 0, "mix": None} if factory is baselines.baseline_policy else {}
        assert defaults == {**SearchSettings().options(), **own}, factory.__name__
    assert list(inspect.signature(search.network_search_policy).parameters)[3:] == ["settings"]
    assert inspect.signature(search.network_search_policy).parameters["settings"].default == SearchSettings()
    mcts = inspect.signature(search.mcts_policy).parameters
    assert set(SETTINGS) - {"mix"} <= set(mcts) and mcts["sims"].default == 128
    assert "mix" not in mcts  # no value head: playouts value the leaves
    assert mcts["prior"].default == "network"  # its own uniform prior unless prior=model
    assert set(search.AZ_OPTIONS) == set(SETTINGS)
    assert all(search.AZ_OPTIONS[name] is SETTING_OPTIONS[name] for name in SETTINGS)
    assert AZConfig(sims=3, k=5).search_settings() == SearchSettings(sims=3, k=5, considered=8, gumbel_scale=1.0)


def test_the_message_helpers_cut_long_values_and_name_hidden_types():
    assert len(shown("x" * 100)) == 60 and shown("x" * 100).endswith("...")
    assert shown([1]) == "[1] (list)" and shown(10**50) == "an int of 51 digits"
    assert brief("y" * 100, limit=40).endswith("...") and len(brief("y" * 100, limit=40)) == 40
    assert short(ValueError("first\nsecond")) == "ValueError: first..."
    assert first_line(RuntimeError("one\ntwo")) == "one" and first_line(RuntimeError()) == "RuntimeError()"
    assert gib(3 * 2**30) == "3.0 GiB" and gib(2**20) == "1.0 MiB" and gib(2**28, mib_below=2**27) == "0.2 GiB"


def test_run_directories_need_the_checkpoint_reader_the_catalog_installs(monkeypatch, tmp_path):
    policies.load_builtins()
    assert policies._RUN_READER, "the catalog installs the checkpoint reader"
    monkeypatch.setattr(policies, "_RUN_READER", [])
    with pytest.raises(
        AgentSpecError, match="no checkpoint reader is registered; install one with register_run_reader"
    ):
        policies.load_network(tmp_path, None)


def test_every_command_module_registers_itself_in_the_same_way():
    assert [command.NAME for command in cli.COMMANDS] == list(cli._COMMANDS)
    for command in cli.COMMANDS:
        assert isinstance(command.HELP, str) and command.HELP
        handler = command.setup(argparse.ArgumentParser(prog=command.NAME))
        assert callable(handler)
