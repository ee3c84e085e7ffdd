"""What ``blokus-jax`` loads before a command runs: ``--help`` and an argument error need the parser only, so JAX,
the libraries that only training, checkpoints, search or plots use (orbax, optax, mctx, matplotlib) and the trainer
modules stay unloaded until a command's handler imports them. A future top-level import that brings one back fails
here (the start-up times themselves are measured in docs/benchmarks.md, not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from blokus_agents import cli

#: Libraries only a command's work needs, by top-level package (tensorstore, humanize and uvloop come with orbax).
HEAVY = ("jax", "jaxlib", "flax", "orbax", "tensorstore", "humanize", "uvloop", "optax", "mctx", "chex", "matplotlib")
#: Project modules that load optax (the trainers, their scaffold and optimiser): imported by ``train``'s handler only.
TRAINER_MODULES = (
    "blokus_agents.training.optim",
    "blokus_agents.training.scaffold",
    "blokus_agents.training.ppo",
    "blokus_agents.training.alphazero",
    "blokus_agents.training.train",
)

_PROBE = """
import contextlib, io, json, sys
import blokus_agents.cli as cli
helps = [[command.NAME, "--help"] for command in cli.COMMANDS]
for argv in (["--help"], *helps, ["train", "--nosuch"], ["eval", "--games", "x"], ["play", "--variant", "nosuch"]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            cli.main(argv)
        except SystemExit:
            pass
print(json.dumps(sorted(sys.modules)))
"""


@pytest.fixture(scope="module")
def loaded() -> set[str]:
    """The modules a fresh interpreter holds after importing the CLI and parsing ``--help`` and bad arguments."""
    result = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return set(json.loads(result.stdout.splitlines()[-1]))


def test_the_probe_sees_what_the_cli_loads(loaded):
    assert {"blokus_agents.cli", "blokus_agents.cli.train", "blokus_jax.variants", "argparse"} <= loaded


@pytest.mark.parametrize("argv", [["--help"], ["eval", "--help"], ["train", "--nosuch"]])
def test_the_console_command_answers_help_and_argument_errors_without_jax(argv):
    """``python -m blokus_agents`` (what ``blokus-jax`` runs) in a fresh interpreter: the help or the one-line
    argument error, and ``jax`` never imported."""
    probe = (
        "import runpy, sys\n"
        f"sys.argv = ['blokus-jax', *{argv!r}]\n"
        "try:\n"
        "    runpy.run_module('blokus_agents', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        "assert 'jax' not in sys.modules, 'blokus-jax %s imported jax' % sys.argv[1:]\n"
        "print('exit', code)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == f"exit {2 if '--nosuch' in argv else 0}"


def test_help_and_argument_errors_load_no_heavy_library(loaded):
    heavy = sorted({m.split(".")[0] for m in loaded} & set(HEAVY))
    assert not heavy, f"importing blokus_agents.cli or parsing loads {heavy}; import them inside the handler"


def test_help_and_argument_errors_load_no_trainer(loaded):
    trainers = sorted(loaded & set(TRAINER_MODULES))
    assert not trainers, f"importing blokus_agents.cli or parsing loads {trainers}; import them inside the handler"


def test_help_lists_every_command(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    names = [command.NAME for command in cli.COMMANDS]
    assert names == ["eval", "play", "bench", "train", "pretrain", "view", "replay", "gtp", "match"]
    listed = out.split("COMMAND", 2)[-1]
    assert all(f"    {name} " in listed for name in names), out


def test_an_argument_error_is_one_line_with_exit_code_2(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["train", "--nosuch"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unrecognized arguments: --nosuch" in err
