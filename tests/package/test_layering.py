"""The architecture of the two packages, read from their source with ``ast`` (imports inside functions included):
the folders of ``blokus_agents`` are its layers and no module imports from a higher one, no import cycle (names a
module takes from its own package's ``__init__`` count), the environment importing the agents only from its
adapters, no re-export shims, built-in agents registered in one module, and no module over 600 lines or function
over 100. docs/architecture.md draws the same layers.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = {"blokus_jax": ROOT / "blokus_jax", "blokus_agents": ROOT / "agents"}

#: The sub-packages of ``blokus_agents``, bottom to top: a module imports only from its own folder or lower ones.
#: The package's own modules (``__init__``, ``__main__``) stand above them all.
LAYERS: tuple[str, ...] = ("core", "search", "players", "engines", "training", "cli")
#: At most this many modules of ``blokus_agents`` outside its sub-packages (``__init__``, ``__main__`` and two more).
MAX_TOP_MODULES = 4
#: The registry's names for code of a higher layer, imported when first used (`policies.BUILTINS`, the
#: ``"module:function"`` references of `policies.late_bound`): the only modules that may hold them.
LATE_BOUND_IN = {"blokus_agents.core.policies", "blokus_agents.players.catalog"}

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
    """The layer of a module of ``blokus_agents``: the index in `LAYERS` of the sub-package it is in, ``len(LAYERS)``
    for the package's own modules, ``None`` for a module of another package or of an unknown sub-package."""
    parts = module.split(".")
    if parts[0] != "blokus_agents":
        return None
    if len(parts) == 1 or (len(parts) == 2 and not (PACKAGES["blokus_agents"] / parts[1]).is_dir()):
        return len(LAYERS)
    return LAYERS.index(parts[1]) if parts[1] in LAYERS else None


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str, path: Path) -> set[str]:
    """The project modules ``module`` imports anywhere in its source (top level, functions, conditionals). A name
    that is a submodule (``from blokus_agents.training import checkpoint``) is an edge to that module; any other
    name is an edge to the module it is taken from, a package's ``__init__`` included (its own package's too)."""
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
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base for a in node.names]
        for target in targets:
            resolved = _resolve(target)
            if resolved and resolved != module:
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


def test_every_agents_module_is_in_a_layer():
    missing = sorted(m for m in MODULES if m.startswith("blokus_agents") and _layer(m) is None)
    assert not missing, f"put {missing} in a sub-package named in LAYERS (tests/package/test_layering.py)"


def test_the_folders_of_the_agents_are_its_layers():
    folders = {p.name for p in PACKAGES["blokus_agents"].iterdir() if (p / "__init__.py").is_file()}
    assert folders == set(LAYERS), "LAYERS names every sub-package of agents/, bottom to top"
    assert len(LAYERS) >= 4
    top = sorted(m for m in MODULES if m.startswith("blokus_agents") and _layer(m) == len(LAYERS))
    assert len(top) <= MAX_TOP_MODULES, f"agents/ holds {top}: put modules in the sub-package of their layer"


def _upward() -> dict[tuple[str, str], str]:
    return {
        (module, target): f"{module} ({LAYERS[_layer(module)]}) imports {target} ({LAYERS[_layer(target)]})"
        for module, targets in GRAPH.items()
        if _layer(module) is not None and _layer(module) < len(LAYERS)
        for target in sorted(targets)
        if _layer(target) is not None and _layer(target) > _layer(module)
    }


def test_no_agents_module_imports_from_a_higher_layer():
    upward = _upward()
    assert not upward, "\n".join(upward.values())


def _late_bound(path: Path) -> list[str]:
    """The string constants of a module that name project code to import later: ``"blokus_agents.x.y:function"``
    (or a whole module, ``"blokus_agents.x.y"``, given to ``importlib``)."""
    strings = [n.value for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.Constant)]
    pattern = re.compile(r"blokus_agents(\.\w+)+:\w+")
    modules = set(MODULES) - {"blokus_agents"}
    return [s for s in strings if isinstance(s, str) and (pattern.fullmatch(s) or s in modules)]


def test_late_bound_references_name_existing_code_and_stay_in_the_registry():
    found = {m: refs for m, p in MODULES.items() if m.startswith("blokus_agents") and (refs := _late_bound(p))}
    assert set(found) <= LATE_BOUND_IN, f"only {sorted(LATE_BOUND_IN)} may name code to import later: {found}"
    for refs in found.values():
        for ref in refs:
            module, _, name = ref.partition(":")
            assert module in MODULES, f"{ref!r} names no module"
            tree = ast.parse(MODULES[module].read_text())
            defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
            assert not name or name in defined, f"{ref!r}: {module} defines no {name}"


def _shim_names(path: Path) -> list[str]:
    """Names a module (not a package's ``__init__``) imports at its top level and never uses: re-exports."""
    tree = ast.parse(path.read_text())
    imported = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in PACKAGES:
            for alias in node.names:
                if f"{node.module}.{alias.name}" not in MODULES:
                    imported[alias.asname or alias.name] = node.lineno
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= {n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
    return sorted(name for name in imported if name not in used)


def test_no_module_re_exports_names_of_another():
    """A name lives in one module and is imported from there: no module keeps another's names for callers (a
    package's ``__init__`` names its public API), and no module takes a name from one that only imports it."""
    shims = {m: names for m, p in MODULES.items() if p.name != "__init__.py" and (names := _shim_names(p))}
    assert not shims, f"modules that re-export names they do not use: {shims}"
    defined = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text())
        defined[module] = {
            t.id
            for n in tree.body
            if isinstance(n, (ast.Assign, ast.AnnAssign))
            for t in ast.walk(n)
            if isinstance(t, ast.Name)
        } | {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    second_hand = [
        f"{module} takes {alias.name} from {node.module}"
        for module, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module in MODULES and MODULES[node.module].name != "__init__.py"
        for alias in node.names
        if f"{node.module}.{alias.name}" not in MODULES and alias.name not in defined[node.module]
    ]
    assert not second_hand, "import each name from the module that defines it:\n" + "\n".join(second_hand)


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
    from blokus_agents.core import policies

    where = {m: _registrations(p) for m, p in MODULES.items() if m != policies.BUILTINS}
    assert not {m: lines for m, lines in where.items() if lines}, f"register built-in agents in {policies.BUILTINS}"
    assert policies.BUILTINS in MODULES, "the registry loads its built-in agents from an existing module"


def _docstring_lines(tree: ast.AST) -> set[int]:
    """The line numbers taken by docstrings (of the module, its classes and functions): reference text, which the
    length limits below do not count, so that a full `Args:`/`Returns:`/`Raises:` section never forces a split."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def _code_lines(first: int, last: int, docstrings: set[int]) -> int:
    """Lines ``first..last`` less those of docstrings."""
    return sum(1 for line in range(first, last + 1) if line not in docstrings)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_and_functions_are_short(module):
    """No module over `MAX_MODULE_LINES` and no function over `MAX_FUNCTION_LINES` lines of code (docstrings are
    not counted: they are the API reference)."""
    path = MODULES[module]
    source = path.read_text()
    tree = ast.parse(source)
    docstrings = _docstring_lines(tree)
    lines = _code_lines(1, len(source.splitlines()), docstrings)
    where = path.relative_to(ROOT).as_posix()
    limit = LONG_MODULES.get(where, MAX_MODULE_LINES)
    assert lines <= limit, f"{where} has {lines} lines, more than {limit}; split it by what its parts are for"
    if where in LONG_MODULES:
        assert lines > MAX_MODULE_LINES, f"{where} is short now ({lines} lines): remove it from LONG_MODULES"
    long_functions = [
        f"{node.name} ({_code_lines(node.lineno, node.end_lineno, docstrings)} lines, line {node.lineno})"
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and _code_lines(node.lineno, node.end_lineno, docstrings) > MAX_FUNCTION_LINES
    ]
    assert not long_functions, f"{where}: functions over {MAX_FUNCTION_LINES} lines of code: {long_functions}"


def test_the_rules_see_a_long_function_and_an_upward_import(tmp_path):
    """The checks above fail on what they are meant to catch (a module's own reading, not the project's)."""
    body = "\n".join(f"    x = {i}" for i in range(MAX_FUNCTION_LINES + 1))
    sample = tmp_path / "sample.py"
    sample.write_text(f"from blokus_agents import cli\n\n\ndef long():\n{body}\n\nregister_agent('x', long)\n")
    tree = ast.parse(sample.read_text())
    assert [n.end_lineno - n.lineno + 1 for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)] == [102]
    assert [
        _code_lines(n.lineno, n.end_lineno, _docstring_lines(tree))
        for n in ast.walk(tree)
        if isinstance(n, ast.FunctionDef)
    ] == [102]
    assert _registrations(sample) == [len(sample.read_text().splitlines())]
    assert (
        _layer("blokus_agents.cli.play") > _layer("blokus_agents.search.mcts") > _layer("blokus_agents.core.policies")
    )
    assert _layer("blokus_agents.__main__") == len(LAYERS) and _layer("blokus_jax.env") is None
    shim = tmp_path / "shim.py"
    shim.write_text("from blokus_jax.env import make\nfrom blokus_jax.env import Env\n\nx: Env\n")
    assert _shim_names(shim) == ["make"]


def test_docstrings_do_not_count_towards_the_length_limits():
    """A function whose docstring is long but whose code is short passes; its code lines are counted exactly."""
    doc = "\n".join(["    text"] * (2 * MAX_FUNCTION_LINES))
    tree = ast.parse(f'"""Module."""\n\n\ndef f():\n    """Doc.\n{doc}\n    """\n    return 1\n')
    (function,) = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    assert _code_lines(function.lineno, function.end_lineno, _docstring_lines(tree)) == 2
