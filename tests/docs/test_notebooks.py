"""Execute every notebook in notebooks/ so none can rot (each must run top to bottom without an error)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def test_notebooks_exist():
    assert any(p.name == "01_quickstart.ipynb" for p in NOTEBOOKS), NOTEBOOKS


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, monkeypatch):
    # the kernel runs the notebook as a user's Jupyter would: XLA optimised (the suite's compile-speed setting in
    # tests/conftest.py is not inherited; the training notebook's run time, not its compilation, dominates)
    monkeypatch.delenv("JAX_DISABLE_MOST_OPTIMIZATIONS", raising=False)
    notebook = nbformat.read(path, as_version=4)
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
