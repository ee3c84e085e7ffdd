"""The accelerator benchmark checks --budget and --out before anything runs (no section, no JAX start-up)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(ROOT / "benchmarks" / "accelerator.sh"), *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHON=sys.executable),
        timeout=300,
    )


@pytest.mark.parametrize("budget", ["nan", "-1", "0", "inf", "soon"])
def test_a_bad_budget_is_refused_at_once(budget):
    proc = _script("--quick", "--budget", budget)
    assert proc.returncode == 2
    assert "argument --budget" in proc.stderr and "[accelerator]" not in proc.stderr


def test_a_bad_out_is_refused_before_any_section(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    for out, message in ((tmp_path, "is a directory"), (blocker / "r.md", "is a file, not a directory")):
        proc = _script("--quick", "--out", str(out))
        assert proc.returncode == 2, proc.stderr[-2000:]
        assert message in proc.stderr and "compiling" not in proc.stderr


def test_the_report_is_written_before_the_first_section(tmp_path, monkeypatch):
    """The header is written before any section runs, so an unwritable --out fails at once."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import accelerator
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    seen = []

    def failing_section(sizes):
        seen.append(out.read_text())
        return "nothing"

    out = tmp_path / "deep" / "report.md"
    monkeypatch.setitem(accelerator.RUNNERS, "env", failing_section)
    assert accelerator.main(["--quick", "--sections", "env", "--out", str(out)]) == 0
    assert seen and seen[0].startswith("# blokus-jax accelerator benchmark")
