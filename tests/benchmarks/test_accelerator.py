"""The accelerator benchmark script runs end to end (``--quick``) and writes one Markdown file with every section.

It asserts the report's structure and that each measured number is positive, never a speed.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SECTION_TITLES = ("1. Environment", "2. PPO", "3. AlphaZero", "4. Search", "5. Network")


def _sections(text: str) -> dict[str, list[list[str]]]:
    """The data rows (cells as strings) of each ``## `` section's table, keyed by the section title."""
    sections: dict[str, list[list[str]]] = {}
    title = None
    for line in text.splitlines():
        if line.startswith("## "):
            title = line[3:]
            sections[title] = []
        elif title and line.startswith("|") and not line.startswith("|--") and not line.startswith("|---"):
            sections[title].append([c.strip() for c in line.strip("|").split("|")])
    return {t: rows[1:] for t, rows in sections.items()}  # drop each table's header row


def _numbers(row: list[str]) -> list[float]:
    """The numeric cells of a row (thousands separators removed)."""
    return [float(c.replace(",", "")) for c in row if re.fullmatch(r"-?[\d,]+(\.\d+)?(e-?\d+)?", c)]


@pytest.mark.slow
def test_quick_run_writes_every_section_with_positive_numbers(tmp_path):
    out = tmp_path / "report.md"
    env = dict(os.environ, PYTHON=sys.executable)
    proc = subprocess.run(
        ["bash", str(ROOT / "benchmarks" / "accelerator.sh"), "--quick", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "compiling" in proc.stderr  # progress goes to stderr
    text = out.read_text()
    assert proc.stdout.strip().startswith(text.strip().splitlines()[0])  # the same table on stdout
    assert re.search(r"^device: \S.* \((cpu|gpu|tpu|cuda|rocm)", text, re.M)
    sections = _sections(text)
    assert len(sections) == len(SECTION_TITLES)
    for prefix in SECTION_TITLES:
        (title,) = [t for t in sections if t.startswith(prefix)]
        rows = sections[title]
        assert rows, f"section {title!r} has no table rows"
        for row in rows:
            if prefix == "3. AlphaZero" and "not available" in row:
                continue  # blokus_agents.training.alphazero is not importable in this checkout
            numbers = _numbers(row)
            assert numbers and all(n > 0 for n in numbers), f"{title}: {row}"
    env_rows = sections[next(t for t in sections if t.startswith("1."))]
    assert {r[0] for r in env_rows} == {"classic", "duo"}
    for prefix, column in (("2.", 3), ("3.", 3)):  # the PPO and AlphaZero rows come in both precisions
        rows = sections[next(t for t in sections if t.startswith(prefix))]
        assert {r[column] for r in rows if "not available" not in r} <= {"f32", "bf16"}
    ppo_rows = sections[next(t for t in sections if t.startswith("2."))]
    assert {r[3] for r in ppo_rows} == {"f32", "bf16"}
    network_rows = sections[next(t for t in sections if t.startswith("5."))]
    assert {r[1] for r in network_rows} == {"im2col", "native", "hybrid"}
