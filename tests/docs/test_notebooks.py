"""Execute every notebook in notebooks/ so none can rot (each must run top to bottom without an error)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))
#: Notebooks that spend their time running compiled code rather than compiling it (a 40-update training run): they
#: run with XLA's optimisations on. The others compile with most of them off, like the rest of the suite.
OPTIMISED = ("02_training.ipynb",)


def test_notebooks_exist():
    assert any(p.name == "01_quickstart.ipynb" for p in NOTEBOOKS), NOTEBOOKS


@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path: Path, monkeypatch):
    # The kernel inherits the suite's environment: its compilation cache and, where compiling dominates, XLA's fast
    # compile setting (tests/conftest.py; results do not depend on it). The notebooks whose run time dominates run
    # XLA optimised, as a user's Jupyter runs them.
    if path.name in OPTIMISED:
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
