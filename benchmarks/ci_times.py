"""Where the test suite's time goes: per-file (and slowest per-test) wall and CPU seconds from a timed run.

    BLOKUS_TEST_TIMES=/tmp/times.jsonl python -m pytest -q -n auto   # tests/conftest.py appends one line per test
    python benchmarks/ci_times.py /tmp/times.jsonl                    # Markdown tables on stdout
    python benchmarks/ci_times.py /tmp/times.jsonl --top 25           # and the 25 slowest tests by CPU seconds
    python benchmarks/ci_times.py /tmp/times.jsonl --folders          # per folder of tests/ instead of per file

CPU seconds (the pytest process's threads plus the subprocesses a test waited for) hardly depend on how loaded the
machine is; wall seconds do. Set-up and teardown count towards the test that ran them, so a module fixture's
compilation shows up in the first test of its file.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path


def read_rows(path: Path) -> list[dict]:
    """The rows written by tests/conftest.py's timing hook (one JSON object per line)."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def per_file(rows: list[dict], folders: bool = False) -> list[tuple[str, int, float, float]]:
    """``(file, tests, wall seconds, CPU seconds)`` per test file (or per folder of files), the most CPU first."""
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for row in rows:
        path = row["test"].split("::")[0]
        total = totals[path.rsplit("/", 1)[0] + "/" if folders else path]
        total[0] += 1
        total[1] += row["wall_s"]
        total[2] += row["cpu_s"] + row["child_cpu_s"]
    return sorted(((f, int(n), w, c) for f, (n, w, c) in totals.items()), key=lambda r: -r[3])


def markdown(rows: list[dict], top: int, folders: bool = False) -> str:
    """The per-file (or per-folder) table, its totals, and the ``top`` slowest tests by CPU seconds."""
    files = per_file(rows, folders)
    lines = [f"| {'folder' if folders else 'file'} | tests | wall s | CPU s |", "|---|---:|---:|---:|"]
    lines += [f"| {f} | {n} | {w:,.0f} | {c:,.0f} |" for f, n, w, c in files]
    wall, cpu = sum(r[2] for r in files), sum(r[3] for r in files)
    lines.append(f"| **all** | {sum(r[1] for r in files)} | {wall:,.0f} | {cpu:,.0f} |")
    if top:
        slow = sorted(rows, key=lambda r: -(r["cpu_s"] + r["child_cpu_s"]))[:top]
        lines += ["", "| test | wall s | CPU s |", "|---|---:|---:|"]
        lines += [f"| {r['test']} | {r['wall_s']:,.1f} | {r['cpu_s'] + r['child_cpu_s']:,.1f} |" for r in slow]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Print the tables for the timing file given on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("times", type=Path, help="the BLOKUS_TEST_TIMES file of a pytest run")
    parser.add_argument("--top", type=int, default=0, help="also list this many slowest tests")
    parser.add_argument("--folders", action="store_true", help="sum per folder of tests/ rather than per file")
    args = parser.parse_args(argv)
    print(markdown(read_rows(args.times), args.top, args.folders))


if __name__ == "__main__":
    main()
