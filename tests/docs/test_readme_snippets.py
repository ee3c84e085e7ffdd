"""The README's snippets run as written (a smaller vector batch) and print a result; pyproject's extras match what
the README and ``blokus_jax._extras`` say; the README stays a short front door whose links point at real pages."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
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
    assert "blokus-jax[gym,pettingzoo,pgx,openspiel,render,train,docs]" in extras["dev"]  # .ci/run builds the docs
    assert any(d.startswith("mkdocs-material") for d in extras["docs"])
    description = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["description"]
    assert "AlphaZero" in description and "search" in description


def test_the_quick_start_runs(capsys):
    code = _block("# a batch of 4096 games").replace("4096", "16")
    exec(compile(code, "README.md", "exec"), {})
    assert "a b c d" in capsys.readouterr().out  # the board's column letters


def test_the_readme_is_a_short_front_door_without_history():
    lines = README.splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move details into docs/"
    assert not re.search(r"\bround \d+", README, re.I), "no round numbers in the README"
    assert "TODAY" not in README
    # the two set-up commands, exactly
    assert lines[7].startswith(
        'pip install -e ".[all]" && blokus-jax train --variant simple --minutes 5 --out runs/simple'
    )
    assert lines[8].startswith('pip install -e ".[dev]" && python -m pytest -q -n auto --dist loadfile')


def test_the_readme_links_point_at_files_of_the_repository():
    links = re.findall(r"\]\(((?!https?:)[^)#]+)(?:#[^)]*)?\)", README)
    assert any(link.startswith("docs/") for link in links)
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"
