"""The API reference renders: no raw Sphinx role (`:class:`, `:func:`, ...) in the docstrings, comments and pages it is
built from, nor in the built site, where mkdocstrings would print one as text; and the exported API has Google-style
`Args:`/`Returns:` sections, which mkdocstrings turns into tables.

Docstrings are Markdown (code spans, `[Env][blokus_jax.env.Env]` cross-references); `/work/notes/convert_roles.py`
of the docs branch rewrites old markup.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
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


#: Modules with no reference page, and why: the `blokus-jax` commands (their reference is `--help`; the `cli` package
#: itself is documented) and scripts run with `python -m`.
NOT_REFERENCED = {"blokus_agents.__main__", "blokus_agents.cli.*", "blokus_jax.demo"}


def _public_modules() -> set[str]:
    """The dotted name of every public module of the two packages (none of whose parts starts with `_`)."""
    found = set()
    for package, name in (("blokus_jax", "blokus_jax"), ("agents", "blokus_agents")):
        for path in (ROOT / package).rglob("*.py"):
            parts = [name, *path.relative_to(ROOT / package).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            if parts[-1] == "__main__" or not any(p.startswith("_") for p in parts[1:]):
                found.add(".".join(parts))
    return found


def _unreferenced(modules: set[str], documented: set[str]) -> list[str]:
    """The modules of `modules` that no page documents and `NOT_REFERENCED` does not excuse."""
    excused = [re.compile(re.escape(pattern).replace(r"\*", r"[\w.]+") + "$") for pattern in NOT_REFERENCED]
    return sorted(m for m in modules - documented if not any(e.match(m) for e in excused))


def test_every_public_module_has_a_reference_page():
    modules = _public_modules()
    assert {"blokus_jax.env", "blokus_agents.search.gumbel", "blokus_agents.cli.play"} <= modules
    blocks = [
        (page.name, match[1])
        for page in sorted((ROOT / "docs" / "reference").glob("*.md"))
        for match in re.finditer(r"^::: ([\w.]+)\s*$", page.read_text(encoding="utf-8"), re.M)
    ]
    documented = {name for _, name in blocks}
    missing = _unreferenced(modules, documented)
    assert not missing, "modules without a `::: module` block in docs/reference/*.md (add one):\n" + "\n".join(missing)
    unknown = [f"{page}: {name}" for page, name in blocks if name not in modules]
    assert not unknown, "reference blocks for modules that do not exist:\n" + "\n".join(unknown)


def test_the_reference_check_sees_a_missing_module():
    modules = {"blokus_jax.env", "blokus_jax.demo", "blokus_agents.cli.play", "blokus_agents.search.new"}
    assert _unreferenced(modules, {"blokus_jax.env"}) == ["blokus_agents.search.new"]


def _sections(doc: str) -> dict[str, str]:
    """The Google-style sections of a docstring (`Args`, `Returns`, ...) by name, each its indented body."""
    found: dict[str, list[str]] = {}
    current = None
    for line in doc.splitlines():
        header = re.fullmatch(r"(Args|Arguments|Returns|Yields|Raises|Attributes):", line.strip())
        if header and not line.startswith(" "):
            current = found.setdefault(header[1], [])
        elif current is not None and (line.startswith(" ") or not line.strip()):
            current.append(line)
        else:
            current = None
    return {name: "\n".join(lines) for name, lines in found.items()}


def _public_api() -> list[tuple[str, object]]:
    """`(dotted name, object)` of every function and class the two packages export (`__all__`), errors aside."""
    import blokus_agents
    import blokus_jax

    return [
        (f"{package.__name__}.{name}", obj)
        for package in (blokus_jax, blokus_agents)
        for name in package.__all__
        for obj in [getattr(package, name)]
        if inspect.isfunction(obj) or (inspect.isclass(obj) and not issubclass(obj, BaseException))
    ]


def test_the_public_api_has_google_sections():
    """Every exported function documents each parameter under `Args:` and its result under `Returns:`; every
    exported class has `Args:` (its constructor) or `Attributes:` (a dataclass's fields)."""
    api = _public_api()
    assert len(api) > 20, "the public API was not found"
    missing = []
    for name, obj in api:
        sections = _sections(inspect.getdoc(obj) or "")
        if inspect.isclass(obj):
            if "Args" not in sections and "Attributes" not in sections:
                missing.append(f"{name}: no Args: or Attributes: section")
            continue
        signature = inspect.signature(inspect.unwrap(obj))  # the function's own parameters, not a decorator's
        for param in signature.parameters.values():
            stars = {param.VAR_POSITIONAL: "*", param.VAR_KEYWORD: "**"}.get(param.kind, "")
            if not re.search(rf"^\s+{re.escape(stars + param.name)}:", sections.get("Args", ""), re.M):
                missing.append(f"{name}: parameter {stars}{param.name} is not under Args:")
        if signature.return_annotation not in (None, "None", inspect.Signature.empty) and "Returns" not in sections:
            missing.append(f"{name}: no Returns: section")
    assert not missing, "public API without Google-style sections (see CONTRIBUTING):\n" + "\n".join(missing)


def test_the_section_reader_reads_google_sections():
    doc = "What it is for.\n\nArgs:\n    env: The environment.\n    **overrides: Fields.\n\nReturns:\n    The env."
    sections = _sections(doc)
    assert re.search(r"^\s+env:", sections["Args"], re.M) and re.search(r"^\s+\*\*overrides:", sections["Args"], re.M)
    assert sections["Returns"].strip() == "The env."
    assert _sections("A one-liner that mentions Args: in passing.") == {}


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
    # 8-9 s on this project's 2-core machine when idle (27 s at a load average of 9; 2026-12-04), so not slow.
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
