"""Each setting is declared once: the CLI's flags, help texts and defaults, the agents' spec options and the AlphaZero
config's search fields are all read from the dataclass fields that declare them (issue 42, item 2). Needs no JAX:
only flags are parsed and configs built."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from blokus_agents.cli import build_parser
from blokus_agents.cli import train as train_command
from blokus_agents.core.options import declared_options
from blokus_agents.players.configs import SELF_PLAY_SEARCH, AZConfig, PPOConfig
from blokus_agents.search.settings import MAX_SIMS, SETTING_OPTIONS, SearchSettings
from blokus_agents.training.rundir import Settings, resolve_settings


def _train_args(*flags: str):
    return build_parser().parse_args(["train", *flags])


@pytest.mark.parametrize(("flags", "expected"), [((), PPOConfig), (("--algo", "alphazero"), AZConfig)])
def test_train_without_flags_builds_the_dataclass_default(flags, expected):
    """``blokus-jax train`` with no settings: the config is the class's default but for the open-ended
    ``total_steps`` of a time-limited run, and the host loop's settings are `Settings`' defaults with the
    command's time budget."""
    args = _train_args(*flags)
    assert train_command._new_config(args) == expected(total_steps=10**12)
    given = {k: v for k, v in train_command._session_settings(args, "unused").items() if v is not None}
    settings, _ = resolve_settings(None, given)
    assert settings == Settings(minutes=train_command.COMMAND_MINUTES)


def test_batch_size_is_derived_in_the_config_not_the_cli():
    assert (
        AZConfig(num_envs=8).batch_size
        == 32
        == train_command._new_config(_train_args("--algo", "alphazero", "--num-envs", "8")).batch_size
    )
    assert AZConfig(num_envs=8, batch_size=16).batch_size == 16


def test_every_generated_flag_shows_its_fields_default():
    """The help of each generated flag is the field's doc with its default, read from the dataclasses."""
    parser = build_parser().commands["train"]
    helps = {action.dest: action.help for action in parser._actions}
    for name in train_command.CONFIG_FLAGS:
        if name in ("variant", "total_steps"):
            continue
        cls = AZConfig if name not in PPOConfig.options() else PPOConfig
        option = cls.options()[name]
        only = "alphazero: " if cls is AZConfig else "ppo: " if name not in AZConfig.options() else ""
        assert helps[name].startswith(only + option.doc), name
        default = cls.__dataclass_fields__[name].default
        shown = helps[name].rsplit("(default ", 1)[1]
        assert (repr(default) if isinstance(default, str) else f"{default:g}") in shown, name
    for name in train_command.SETTINGS_FLAGS:
        option = declared_options(Settings)[name]
        assert helps[name] == f"{option.doc} (default {getattr(Settings(), name):g})"


def test_spec_options_are_the_search_settings_fields():
    """Every search agent's declared options and defaults are `SearchSettings`' fields (the ``mcts`` agent's own
    defaults its named instance); the AlphaZero config's search fields take their ranges from there and their
    defaults from `SELF_PLAY_SEARCH`; one upper limit of simulations."""
    from blokus_agents.search import mcts

    assert SETTING_OPTIONS == declared_options(SearchSettings)
    for name in ("sims", "k", "considered", "gumbel_scale"):
        assert mcts.SEARCH_OPTIONS[name] == SETTING_OPTIONS[name]
        option = AZConfig.options()[name]
        assert (option.low, option.high, option.kind) == (
            SETTING_OPTIONS[name].low,
            SETTING_OPTIONS[name].high,
            SETTING_OPTIONS[name].kind,
        )
        assert getattr(AZConfig(), name) == getattr(SELF_PLAY_SEARCH, name)
    assert AZConfig().search_settings() == SELF_PLAY_SEARCH
    parameters = inspect.signature(mcts.mcts_policy).parameters
    for name in mcts.MCTS_SETTING_NAMES:
        assert parameters[name].default == getattr(mcts.MCTS_SETTINGS, name)
        assert mcts.MCTS_OPTIONS[name] == SETTING_OPTIONS[name], name
    assert SETTING_OPTIONS["sims"].high == MAX_SIMS == AZConfig.options()["sims"].high
    with pytest.raises(Exception, match="at most 32,768"):
        AZConfig(sims=MAX_SIMS + 1)


def test_every_config_field_declares_its_default_and_range():
    for cls in (PPOConfig, AZConfig, SearchSettings):
        assert set(declared_options(cls)) == {f.name for f in dataclasses.fields(cls)}, cls
    assert set(declared_options(Settings)) == {f.name for f in dataclasses.fields(Settings)} - {"opponents"}
    assert not hasattr(Settings, "FLAGS")


def test_the_docs_state_the_declared_defaults():
    """The defaults the guides spell out are the named instances': ``mcts``'s in docs/search.md, AlphaZero's self-play
    simulations in docs/training.md."""
    import re
    from pathlib import Path

    from blokus_agents.search.mcts import MCTS_SETTING_NAMES, MCTS_SETTINGS

    docs = Path(__file__).resolve().parents[2] / "docs"
    stated = re.search(r"The default `mcts` is `mcts:([^`]+)`", (docs / "search.md").read_text()).group(1)
    options = dict(item.split("=") for item in stated.split(","))
    assert set(options) | {"seconds"} == set(MCTS_SETTING_NAMES)
    assert all(type(default := getattr(MCTS_SETTINGS, n))(v) == default for n, v in options.items()), options
    assert f"`--sims` network calls ({SELF_PLAY_SEARCH.sims} by default)" in (docs / "training.md").read_text()


def test_generated_flags_refuse_what_the_fields_refuse(capsys):
    """A whole-number flag of ``blokus-jax train`` takes its field's declared range when it is parsed (``--seed`` is
    every command's bounded seed, whose range is the field's), so a typo is refused before any work starts."""
    parser = build_parser()
    for name in (*train_command.CONFIG_FLAGS, *train_command.SETTINGS_FLAGS):
        option, _ = train_command._option(name)
        if option.kind is not int:
            continue
        flag = train_command.CONFIG_FLAGS.get(name, "--" + name.replace("_", "-"))
        if not isinstance(option.high, int):  # a bound of the variant's (k, considered), checked when the run starts
            assert getattr(parser.parse_args(["train", flag, str(option.low)]), name) == option.low, name
            with pytest.raises(SystemExit):
                parser.parse_args(["train", flag, str(option.low - 1)])
            assert f"argument {flag}:" in capsys.readouterr().err, name
            continue
        assert getattr(parser.parse_args(["train", flag, str(option.high)]), name) == option.high, name
        with pytest.raises(SystemExit):
            parser.parse_args(["train", flag, str(option.high + 1)])
        assert f"argument {flag}: '{option.high + 1}' is too large" in capsys.readouterr().err, name
    assert PPOConfig.options()["seed"].high == 2**32 - 1
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "--distributed-timeout", str(train_command.MAX_DISTRIBUTED_TIMEOUT + 1)])
    assert "is too large" in capsys.readouterr().err


def test_the_training_configs_declare_their_common_fields_once():
    """A field PPO and AlphaZero both have with the same default, range and help is one declaration (the shared
    base's field object), and the trainers' registry has exactly the configs' algorithms (one registry of names)."""
    from blokus_agents.players.configs import CONFIGS
    from blokus_agents.training.algorithms import ALGORITHMS

    ppo = {f.name: f for f in dataclasses.fields(PPOConfig)}
    az = {f.name: f for f in dataclasses.fields(AZConfig)}
    ppo_options, az_options = declared_options(PPOConfig), declared_options(AZConfig)
    alike = [n for n in set(ppo) & set(az) if ppo_options[n] == az_options[n] and ppo[n].default == az[n].default]
    assert len(alike) >= 11
    for name in alike:
        assert ppo[name] is az[name], f"{name} is declared twice, once per config"
    assert set(ALGORITHMS) == set(CONFIGS) == {PPOConfig.algorithm, AZConfig.algorithm}
