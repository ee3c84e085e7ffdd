"""Typos get the nearest valid name: agent names and their options (``did you mean 'greedy'?``), flags and
choices of every command, in one line without the command's whole usage."""

from __future__ import annotations

import pytest

import blokus_jax
from blokus_agents import cli
from blokus_agents.core.policies import AgentSpecError, agent_options, resolve_agent


@pytest.mark.parametrize(
    ("spec", "meant"),
    [("gredy", "'greedy'"), ("mcst:sims=3", "'mcts'"), ("mcts:sim=3", "'sims'"), ("minimax:dpth=1", "'depth'")],
)
def test_a_mistyped_agent_or_option_names_the_nearest(spec, meant):
    env = blokus_jax.make("simple")
    with pytest.raises(AgentSpecError, match=f"did you mean {meant}\\?"):
        resolve_agent(spec, env)


def test_a_teacher_spec_typo_names_the_nearest_agent_too():
    with pytest.raises(AgentSpecError, match="did you mean 'mcts'"):
        agent_options("mctss:sims=8", blokus_jax.make("simple"))


def test_nothing_close_suggests_nothing():
    with pytest.raises(AgentSpecError) as caught:
        resolve_agent("qqqqq", blokus_jax.make("simple"))
    assert "did you mean" not in str(caught.value)


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["train", "--variant", "duoo"], "'duo'"),
        (["play", "--variant", "clasic"], "'classic'"),
        (["train", "--minuts", "5"], "'--minutes'"),
        (["eval", "--gmaes", "5"], "'--games'"),
    ],
)
def test_a_mistyped_flag_or_choice_is_one_line_with_the_nearest_and_no_usage(argv, meant, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"did you mean {meant}?" in err and f"see 'blokus-jax {argv[0]} --help'" in err
    assert "usage:" not in err and len(err.strip().splitlines()) == 1


def test_a_mistyped_command_keeps_the_one_line_usage_and_names_the_nearest(capsys):
    with pytest.raises(SystemExit):
        cli.main(["trian"])
    err = capsys.readouterr().err
    assert "did you mean 'train'?" in err and "usage: blokus-jax" in err
