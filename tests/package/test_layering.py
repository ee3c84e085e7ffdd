"""The architecture of the two packages, read from their source with ``ast`` (imports inside functions included):
no import cycle, no module of ``blokus_agents`` importing from a higher layer, the environment importing the agents
only from its adapters, built-in agents registered in one module, and no module over 600 lines or function over 100.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"blokus_jax": ROOT / "blokus_jax", "blokus_agents": ROOT / "agents"}

#: The layers of ``blokus_agents``, bottom to top; a module imports only from its own layer or lower ones.
LAYERS: dict[str, tuple[str, ...]] = {
    "types and the spec registry": (
        "messages",
        "masking",
        "options",
        "search_settings",
        "calibration_store",
        "policies",
    ),
    "players": ("bots", "networks", "gumbel", "search", "arena"),
    "training": (
        "replay",
        "configs",
        "scaffold",
        "ppo",
        "alphazero",
        "algorithms",
        "checkpoint_index",
        "checkpoint",
        "rundir",
        "curves",
        "train",
    ),
    "catalog and applications": ("baselines", "catalog", "gtp", "gtp_client", "ladder", ""),
    "command line": ("cli",),
}
LAYER = {f"blokus_agents.{m}".rstrip("."): i for i, names in enumerate(LAYERS.values()) for m in names}

MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 100
#: Modules that are still longer than the limit, with their length today: each may only shrink, and leaves this
#: table once it is under the limit (the test fails when an entry is no longer needed).
LONG_MODULES: dict[str, int] = {}


def _modules() -> dict[str, Path]:
    modules = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            parts = path.relative_to(folder).with_suffix("").parts
            name = ".".join((package, *parts))
            modules[name.removesuffix(".__init__")] = path
    return modules


MODULES = _modules()


def _layer(module: str) -> int | None:
    """The layer of ``module``: its own entry in :data:`LAYERS`, else that of the subpackage it is in (``cli``)."""
    while module:
        if module in LAYER:
            return LAYER[module]
        module = module.rpartition(".")[0]
        if module == "blokus_agents":  # the package itself is no default for a module left out of LAYERS
            return None
    return None


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> set[str]:
    """The project modules ``module`` imports anywhere in its source (top level, functions, conditionals), without
    the packages above it (importing a submodule runs its package first; that is not an edge)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
        for target in targets:
            resolved = _resolve(target)
            if resolved and resolved != module and not module.startswith(resolved + "."):
                found.add(resolved)
    return found


GRAPH = {module: _imports(module, path) for module, path in MODULES.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_counting_imports_inside_functions():
    assert _cycles(GRAPH) == [], "modules that import each other in a circle (break it by moving code down a layer)"


def test_every_agents_module_has_a_layer():
    missing = sorted(m for m in MODULES if m.startswith("blokus_agents") and _layer(m) is None)
    assert not missing, f"declare the layer of {missing} in LAYERS (tests/package/test_layering.py)"


def test_no_agents_module_imports_from_a_higher_layer():
    names = list(LAYERS)
    upward = [
        f"{module} ({names[_layer(module)]}) imports {target} ({names[_layer(target)]})"
        for module, targets in GRAPH.items()
        if module.startswith("blokus_agents")
        for target in sorted(targets)
        if target.startswith("blokus_agents") and _layer(target) > _layer(module)
    ]
    assert not upward, "\n".join(upward)


def test_the_environment_imports_the_agents_only_from_its_adapters():
    edges = [
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if module.startswith("blokus_jax") and not module.startswith("blokus_jax.adapters")
        for target in targets
        if target.startswith("blokus_agents")
    ]
    assert not edges, edges


REGISTER = {"register_agent", "register_prefix", "register_run_kind", "register_run_reader"}


def _registrations(path: Path) -> list[int]:
    """Lines of ``path`` that register an agent when the module is imported (calls outside any function)."""
    lines = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(child, ast.Call):
                name = getattr(child.func, "id", getattr(child.func, "attr", None))
                if name in REGISTER:
                    lines.append(child.lineno)
            visit(child)

    visit(ast.parse(path.read_text()))
    return lines


def test_built_in_agents_are_registered_in_one_module():
    where = {m: _registrations(p) for m, p in MODULES.items() if m != "blokus_agents.catalog"}
    assert not {m: lines for m, lines in where.items() if lines}, "register built-in agents in blokus_agents.catalog"
    assert "blokus_agents.catalog" in GRAPH["blokus_agents"], "the package must import its catalog"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_and_functions_are_short(module):
    path = MODULES[module]
    source = path.read_text()
    lines = len(source.splitlines())
    where = path.relative_to(ROOT).as_posix()
    limit = LONG_MODULES.get(where, MAX_MODULE_LINES)
    assert lines <= limit, f"{where} has {lines} lines, more than {limit}; split it by what its parts are for"
    if where in LONG_MODULES:
        assert lines > MAX_MODULE_LINES, f"{where} is short now ({lines} lines): remove it from LONG_MODULES"
    long_functions = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines, line {node.lineno})"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert not long_functions, f"{where}: functions over {MAX_FUNCTION_LINES} lines: {long_functions}"


def test_the_rules_see_a_long_function_and_an_upward_import(tmp_path):
    """The checks above fail on what they are meant to catch (a module's own reading, not the project's)."""
    body = "\n".join(f"    x = {i}" for i in range(MAX_FUNCTION_LINES + 1))
    sample = tmp_path / "sample.py"
    sample.write_text(f"from blokus_agents import cli\n\n\ndef long():\n{body}\n\nregister_agent('x', long)\n")
    tree = ast.parse(sample.read_text())
    assert [n.end_lineno - n.lineno + 1 for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)] == [102]
    assert _registrations(sample) == [len(sample.read_text().splitlines())]
    assert _layer("blokus_agents.cli.play") > _layer("blokus_agents.search") > _layer("blokus_agents.policies")
    assert _layer("blokus_agents.unknown") is None
