"""The API reference renders: no raw Sphinx role (`:class:`, `:func:`, ...) in the docstrings, comments and pages it is
built from, nor in the built site, where mkdocstrings would print one as text.

Docstrings are Markdown (code spans, `[Env][blokus_jax.env.Env]` cross-references); `/work/notes/convert_roles.py`
of the docs branch rewrites old markup.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import os
import re
import subprocess
import sys
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("blokus_jax", "agents")
#: A Sphinx role, e.g. ":class:`Env`", which Markdown shows as text.
ROLE = re.compile(r":(?:py:)?(?:class|func|mod|meth|data|attr|exc|obj):`")
#: The same in a built page, where the backticks became a code element (in HTML, or escaped in the search index).
BUILT_ROLE = re.compile(r":(?:py:)?(?:class|func|mod|meth|data|attr|exc|obj):(?:`|<code|&lt;code|\\u003ccode)")


def _docstrings_and_comments(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every bare string statement (docstrings) and every comment of the Python file at `path`."""
    source = path.read_text(encoding="utf-8")
    found = [
        (node.lineno, node.value.value)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    ]
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            found.append((tok.start[0], tok.string))
    return found


def test_no_sphinx_roles_in_docstrings_comments_or_pages():
    files = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    assert len(files) > 50, "the packages' modules were not found"
    raw = [
        f"{path.relative_to(ROOT)}:{line}: {ROLE.search(text)[0]}"
        for path in files
        for line, text in _docstrings_and_comments(path)
        if ROLE.search(text)
    ]
    pages = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / "README.md"]
    raw += [
        f"{page.relative_to(ROOT)}:{number}: {ROLE.search(line)[0]}"
        for page in pages
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if ROLE.search(line)
    ]
    assert not raw, "Sphinx roles render as text; write a code span `X` or [`X`][full.path] instead:\n" + "\n".join(raw)


def test_the_role_pattern_finds_roles():
    assert ROLE.search("see :class:`~blokus_jax.Env` and") and ROLE.search("(:py:func:`make`)")
    assert not ROLE.search("see `Env` and [`make`][blokus_jax.make]; a dict {'a:b': 1}")
    assert BUILT_ROLE.search("raises :class:<code>AgentSpecError</code>")
    assert BUILT_ROLE.search(r":func:\u003ccode\u003emake")
    assert not BUILT_ROLE.search("<p>a <code>class</code>: <code>Env</code></p>")


@pytest.mark.skipif(
    importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("mkdocstrings") is None,
    reason="needs the docs tools (mkdocs, mkdocstrings)",
)
def test_the_built_site_has_no_raw_roles(tmp_path):
    # About 8 s on this project's 2-core machine (idle), so it is not marked slow.
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    # In a virtual environment that sees the base's packages, nbconvert's templates (of the notebook pages) live
    # under the base interpreter's share/jupyter, which Jupyter does not search by itself.
    shared = [os.environ.get("JUPYTER_PATH", ""), os.path.join(sys.base_prefix, "share", "jupyter")]
    env["JUPYTER_PATH"] = os.pathsep.join(p for p in shared if p)
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert build.returncode == 0, build.stderr[-4000:]
    pages = sorted(site.rglob("*.html"))
    assert any(p.relative_to(site).parts[0] == "reference" for p in pages), "the API reference pages were not built"
    raw = [
        f"{page.relative_to(site)}: {match[0]}"
        for page in pages + sorted(site.rglob("*.json"))
        for match in [BUILT_ROLE.search(page.read_text(encoding="utf-8"))]
        if match
    ]
    assert not raw, "raw Sphinx roles in the built site:\n" + "\n".join(raw)
