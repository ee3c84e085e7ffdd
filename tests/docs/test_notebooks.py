"""Execute every notebook in notebooks/ so none can rot (each must run top to bottom without an error).

A notebook whose point is a run of some minutes (a training curve) keeps its run's length in a cell tagged
``parameters``, as papermill does; the suite runs it with the smaller values of :data:`SUITE_PARAMETERS`, set in a
cell inserted right after that one, so every cell still runs as a user runs it."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
#: Smaller run lengths for the suite, by notebook: each name must be assigned in the notebook's ``parameters`` cell.
SUITE_PARAMETERS: dict[str, dict[str, object]] = {
    "02_training.ipynb": {"UPDATES": 2, "GAMES": 16, "STEPS": 8, "EVAL_EVERY": 2, "EVAL_GAMES": 8, "ARENA_GAMES": 8},
    "07_alphazero.ipynb": {"MINUTES": 0.1, "ARENA_GAMES": 8},
}


def with_parameters(notebook: nbformat.NotebookNode, values: dict[str, object]) -> nbformat.NotebookNode:
    """``notebook`` with a cell that assigns ``values`` inserted after its cell tagged ``parameters`` (which must
    assign every one of them, so that renaming a parameter fails here instead of leaving the full run in the suite)."""
    cells = notebook.cells
    tagged = [i for i, c in enumerate(cells) if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, "a notebook with suite parameters needs exactly one cell tagged 'parameters'"
    assigned = set(re.findall(r"^([A-Z_][A-Z0-9_]*)\s*=", cells[tagged[0]].source, re.MULTILINE))
    assert set(values) <= assigned, f"the parameters cell does not assign {sorted(set(values) - assigned)}"
    source = "# injected by tests/docs/test_notebooks.py\n" + "\n".join(f"{k} = {v!r}" for k, v in values.items())
    cells.insert(tagged[0] + 1, nbformat.v4.new_code_cell(source))
    return notebook


def test_notebooks_exist():
    assert any(p.name == "01_quickstart.ipynb" for p in NOTEBOOKS), NOTEBOOKS


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path):
    # The kernel inherits the suite's environment: its compilation cache and XLA's fast compile setting
    # (tests/conftest.py; results do not depend on it).
    notebook = nbformat.read(path, as_version=4)
    if path.name in SUITE_PARAMETERS:
        notebook = with_parameters(notebook, SUITE_PARAMETERS[path.name])
    # run from notebooks/, as a person opening it in Jupyter would; notebooks write only to temporary folders
    client = NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()
    errors = [
        o
        for cell in notebook.cells
        if cell.cell_type == "code"
        for o in cell.get("outputs", [])
        if o.get("output_type") == "error"
    ]
    assert not errors, errors
    executed = [c for c in notebook.cells if c.cell_type == "code"]
    assert executed and all(c.get("execution_count") for c in executed)


def test_suite_parameters_go_after_the_parameters_cell_and_must_exist():
    notebook = nbformat.v4.new_notebook()
    tagged = nbformat.v4.new_code_cell("UPDATES = 40\nGAMES = 100")
    tagged.metadata["tags"] = ["parameters"]
    notebook.cells = [nbformat.v4.new_markdown_cell("# t"), tagged, nbformat.v4.new_code_cell("print(UPDATES)")]
    done = with_parameters(notebook, {"UPDATES": 2})
    assert [c.source.splitlines()[-1] for c in done.cells] == ["# t", "GAMES = 100", "UPDATES = 2", "print(UPDATES)"]
    with pytest.raises(AssertionError, match="does not assign"):
        with_parameters(notebook, {"MINUTES": 1})
