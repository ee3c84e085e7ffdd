"""Every Python block of the documentation pages (``docs/*.md``) runs as written, and every ``blokus-jax`` command
shown in a shell block of the pages or the README uses a subcommand and flags that the command really has.

A block runs in a fresh temporary directory (with ``tests/`` linked into it, so that the pages can read the
reference records) and in a namespace of its own, the way a reader pastes it. A block preceded by the line
``<!-- test: slow -->`` is marked ``slow``; one preceded by ``<!-- test: skip REASON -->`` is skipped with the reason.
A block that imports an optional framework is skipped when that extra is not installed.
"""

from __future__ import annotations

import functools
import re
import shlex
from pathlib import Path

import pytest

from blokus_agents.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))

#: A fenced block and the test marker on the line before it, if any.
_BLOCK = re.compile(r"(?:<!-- test: (?P<mark>slow|skip)(?P<why>[^>]*)-->\n)?```(?P<lang>\w+)\n(?P<code>.*?)```", re.S)
#: Modules of the optional extras; a block importing one is skipped when it is missing.
_OPTIONAL = ("gymnasium", "pettingzoo", "pgx", "pyspiel", "open_spiel", "matplotlib", "PIL", "orbax")


def _blocks(path: Path, lang: str) -> list[tuple[str, str, str]]:
    """``(code, mark, reason)`` of every ``lang`` block of the page at ``path``."""
    text = path.read_text()
    return [(m["code"], m["mark"] or "", (m["why"] or "").strip()) for m in _BLOCK.finditer(text) if m["lang"] == lang]


def _python_params() -> list:
    params = []
    for page in PAGES:
        for index, (code, mark, why) in enumerate(_blocks(page, "python")):
            marks = [pytest.mark.slow] if mark == "slow" else []
            if mark == "skip":
                marks.append(pytest.mark.skip(reason=why or "marked skip in the page"))
            params.append(pytest.param(page.name, code, marks=marks, id=f"{page.stem}-{index}"))
    return params


def test_the_pages_have_python_blocks_to_run():
    assert len(_python_params()) >= 20, "the docs pages lost their examples (or the block pattern no longer matches)"
    marked = [p for p in _python_params() if p.marks]
    assert len(marked) < len(_python_params()) / 2, "most examples should run in the quick lane"


@pytest.mark.parametrize("page, code", _python_params())
def test_a_python_block_of_the_docs_runs(page, code, tmp_path, monkeypatch, capsys):
    for module in _OPTIONAL:
        if re.search(rf"^\s*(import|from) {module}\b", code, re.M):
            pytest.importorskip(module)
    (tmp_path / "tests").symlink_to(ROOT / "tests", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"docs/{page}", "exec"), {"__name__": "__docs__"})
    if "print(" in code:
        assert capsys.readouterr().out.strip(), f"a block of docs/{page} that prints printed nothing"


# ------------------------------------------------------------------------------------- commands shown in the docs
def _commands() -> list[tuple[str, str]]:
    """``(source, command)`` for every ``blokus-jax ...`` command in a shell block of the pages and the README."""
    found = []
    for path in [*PAGES, ROOT / "README.md", ROOT / "CONTRIBUTING.md"]:
        for code, _, _ in _blocks(path, "bash"):
            for line in code.replace("\\\n", " ").splitlines():
                for part in re.split(r"&&|;|\|", line):
                    part = part.strip().rstrip("&").strip()
                    if part.startswith("blokus-jax "):
                        found.append((path.name, part))
    return found


@functools.cache
def _help(subcommand: str | None) -> str:
    """What ``blokus-jax [SUBCOMMAND] --help`` prints (the parser the console command builds, formatted in-process)."""
    parser = build_parser()
    return (parser.commands[subcommand] if subcommand else parser).format_help()


def _subcommands() -> set[str]:
    listing = _help(None).split("positional arguments:", 1)[1].split("options:", 1)[0]
    return set(re.findall(r"^\s{4}(\w+)\s", listing, re.M))


def test_the_docs_show_blokus_jax_commands():
    shown = {shlex.split(command, comments=True)[1] for _, command in _commands()}
    assert {"train", "eval", "play", "view"} <= shown


@pytest.mark.parametrize("source, command", _commands(), ids=lambda value: value[:60])
def test_a_blokus_jax_command_of_the_docs_uses_real_flags(source, command):
    words = shlex.split(command, comments=True)
    subcommand = next((w for w in words[1:] if not w.startswith("-")), None)
    if subcommand not in _subcommands():
        pytest.fail(f"{source}: {command!r} uses a subcommand blokus-jax does not have: {subcommand!r}")
    top = words[1 : words.index(subcommand)]
    flags = [w.split("=", 1)[0] for w in words[words.index(subcommand) + 1 :] if w.startswith("--")]
    unknown = [f for f in top if f.split("=", 1)[0] not in _help(None)]
    unknown += [f for f in flags if not re.search(rf"{re.escape(f)}\b(?!-)", _help(subcommand))]
    assert not unknown, f"{source}: {command!r} uses flags that `blokus-jax {subcommand} --help` does not list"


def test_every_page_and_notebook_is_in_the_site_menu():
    menu = (ROOT / "mkdocs.yml").read_text().split("\nnav:", 1)[1]
    listed = set(re.findall(r":\s*([\w/.-]+\.(?:md|ipynb))\s*$", menu, re.M))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if "notebooks" not in p.parts}
    notebooks = {f"notebooks/{p.name}" for p in (ROOT / "notebooks").glob("*.ipynb")}
    assert pages | notebooks <= listed, f"not in mkdocs.yml's nav: {sorted((pages | notebooks) - listed)}"
    assert {"architecture.md", "strength.md", "changelog.md"} <= listed
