"""The README's adapter snippets run as written (a smaller vector batch) and print a result; pyproject's extras match
what the README and ``blokus_jax._extras`` say."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def _block(marker: str) -> str:
    (block,) = [b for b in BLOCKS if marker in b]
    return block


@pytest.mark.parametrize(
    "marker, printed",
    [
        (
            'gymnasium.make("BlokusDuo-v0")',
            r"reward -?\d\.\d, done (True|False), \d+ legal actions next\n\(8, 14, 14, 4\)",
        ),
        ("from blokus_jax.adapters.pettingzoo import env", r"\{'player_0': -?\d\.\d+, 'player_1': "),
    ],
)
def test_the_adapter_snippets_print_a_result(marker, printed, capsys):
    pytest.importorskip("gymnasium")
    pytest.importorskip("pettingzoo")
    code = _block(marker).replace("num_envs=1024", "num_envs=8")
    exec(compile(code, "README.md", "exec"), {})
    assert re.search(printed, capsys.readouterr().out)


def test_the_extras_are_what_the_readme_and_the_checks_say():
    tomllib = pytest.importorskip("tomllib") if sys.version_info >= (3, 11) else pytest.importorskip("tomli")
    from blokus_jax import _extras

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["all"] == ["blokus-jax[gym,pettingzoo,pgx,openspiel,render,train]"]  # lean: no test tools, no Jupyter
    assert any(d.startswith("jupyterlab") for d in extras["notebooks"])
    assert set(_extras.EXTRAS) <= set(extras)
    for extra in _extras.EXTRAS:
        assert f"| `{extra}` |" in README
    assert 'pip install -e ".[notebooks]"' in README and "jupyter nbconvert --to notebook --execute" in README
    description = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["description"]
    assert "AlphaZero" in description and "search" in description
