"""blokus-jax next to another distribution that installs a top-level ``agents`` package (openai-agents, agents).

The repository's ``agents/`` folder is installed as ``blokus_agents``; nothing of ours may import a module named
``agents``. A fake ``agents`` package that fails on import is put first on ``sys.path`` (where a foreign distribution
would be), and the console command and a README example must still work.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _foreign_agents(tmp_path: Path) -> dict[str, str]:
    """An environment whose ``sys.path`` starts with a fake ``agents`` distribution that raises when imported."""
    site = tmp_path / "foreign_site"
    (site / "agents").mkdir(parents=True)
    (site / "agents" / "__init__.py").write_text('raise ImportError("the foreign agents package was imported")\n')
    (site / "agents" / "cli.py").write_text('raise ImportError("the foreign agents.cli was imported")\n')
    path = [str(site), *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(path))


def _run(code: str, env: dict, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


def test_the_console_command_works_next_to_a_foreign_agents_package(tmp_path):
    env = _foreign_agents(tmp_path)
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "blokus-jax"]
    assert script.value == "blokus_agents.cli:main"
    code = (
        "import sys\n"
        "from importlib.metadata import entry_points\n"
        "(script,) = [e for e in entry_points(group='console_scripts') if e.name == 'blokus-jax']\n"
        "sys.argv = ['blokus-jax', '--help']\n"
        "try:\n"
        "    script.load()()\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "try:\n"
        "    import agents  # the foreign package is really first on the path\n"
        "except ImportError as exc:\n"
        "    print('first on the path:', exc)\n"
    )
    proc = _run(code, env, tmp_path)
    assert proc.returncode == 0 and "usage: blokus-jax" in proc.stdout, proc.stderr[-3000:]
    assert "first on the path: the foreign agents package was imported" in proc.stdout
    assert "foreign" not in proc.stderr


@pytest.mark.slow
def test_the_python_api_and_a_readme_example_work_next_to_a_foreign_agents_package(tmp_path):
    env = _foreign_agents(tmp_path)
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    example = next(b for b in blocks if "from blokus_agents import get_bot, round_robin" in b)
    small = example.replace('"duo"', '"simple"').replace("games=200", "games=2")  # the same calls, a small board
    code = (
        small
        + "\nimport sys, blokus_agents, blokus_agents.cli, blokus_agents.core.policies, blokus_agents.search.mcts\n"
        + "import blokus_agents.players.baselines, blokus_agents.engines.arena\n"
        + "assert 'agents' not in sys.modules, 'something imported a module named agents'\n"
        + "print('api ok')\n"
    )
    proc = _run(code, env, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| random |" in proc.stdout and "api ok" in proc.stdout
