"""Where the test suite's time goes: per-file (and slowest per-test) wall and CPU seconds from a timed run.

    BLOKUS_TEST_TIMES=/tmp/times.jsonl python -m pytest -q -n auto   # tests/conftest.py appends one line per test
    python benchmarks/ci_times.py /tmp/times.jsonl                    # Markdown tables on stdout
    python benchmarks/ci_times.py /tmp/times.jsonl --top 25           # and the 25 slowest tests by CPU seconds
    python benchmarks/ci_times.py /tmp/times.jsonl --folders          # per folder of tests/ instead of per file

CPU seconds (the pytest process's threads plus the subprocesses a test waited for) hardly depend on how loaded the
machine is; wall seconds do. The JAX columns are the test process's own tracing, lowering and XLA compiling (a
persistent-cache hit included) as JAX's monitoring events report them; what is left of the CPU seconds is running
programs, Python and the subprocesses. Set-up and teardown count towards the test that ran them, so a module fixture's
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


JAX_COLUMNS = ("trace_s", "lower_s", "compile_s")


def per_file(rows: list[dict], folders: bool = False) -> list[tuple]:
    """``(file, tests, wall s, CPU s, trace s, lower s, compile s, compilations)`` per test file (or per folder of
    files), the most CPU first; the JAX columns are 0 in timing files written before they were recorded."""
    totals: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0, 0.0, 0])
    for row in rows:
        path = row["test"].split("::")[0]
        total = totals[path.rsplit("/", 1)[0] + "/" if folders else path]
        total[0] += 1
        total[1] += row["wall_s"]
        total[2] += row["cpu_s"] + row["child_cpu_s"]
        for i, column in enumerate(JAX_COLUMNS, start=3):
            total[i] += row.get(column, 0.0)
        total[6] += row.get("compiles", 0)
    return sorted(((f, int(t[0]), *t[1:6], int(t[6])) for f, t in totals.items()), key=lambda r: -r[3])


def markdown(rows: list[dict], top: int, folders: bool = False) -> str:
    """The per-file (or per-folder) table, its totals, and the ``top`` slowest tests by CPU seconds."""
    files = per_file(rows, folders)
    head = (
        f"| {'folder' if folders else 'file'} | tests | wall s | CPU s | trace s | lower s | compile s | compilations |"
    )
    lines = [head, "|---|" + "---:|" * 7]
    lines += [
        f"| {f} | {n} | {w:,.0f} | {c:,.0f} | {t:,.0f} | {lo:,.0f} | {x:,.0f} | {k:,} |"
        for f, n, w, c, t, lo, x, k in files
    ]
    sums = [sum(r[i] for r in files) for i in range(1, 8)]
    lines.append(
        "| **all** | {:,} | {:,.0f} | {:,.0f} | {:,.0f} | {:,.0f} | {:,.0f} | {:,} |".format(
            *map(int, sums[:1]), *sums[1:6], int(sums[6])
        )
    )
    if top:
        slow = sorted(rows, key=lambda r: -(r["cpu_s"] + r["child_cpu_s"]))[:top]
        lines += ["", "| test | wall s | CPU s | compile s |", "|---|---:|---:|---:|"]
        for r in slow:
            cpu, compiling = r["cpu_s"] + r["child_cpu_s"], r.get("compile_s", 0.0)
            lines.append(f"| {r['test']} | {r['wall_s']:,.1f} | {cpu:,.1f} | {compiling:,.1f} |")
    return "\n".join(lines)


def timeline(rows: list[dict]) -> str:
    """Per pytest-xdist worker: its units of work (a file, or a test of a split file) in the order it ran them, with
    the wall seconds of each, and the seconds it sat idle after its last test while another worker still ran."""
    runs: dict[str, list[list]] = defaultdict(list)
    for row in sorted((r for r in rows if "end" in r), key=lambda r: r["end"]):
        unit = row["test"].split("::")[0].rsplit("/", 1)[-1]
        units = runs[row.get("worker", "main")]
        if units and units[-1][0] == unit:
            units[-1][1] += row["wall_s"]
        else:
            units.append([unit, row["wall_s"]])
    if not runs:
        return "no worker timeline in this file (its rows have no 'end' time)"
    last = max(r["end"] for r in rows if "end" in r)
    lines = ["| worker | idle at the end s | units in order (wall s) |", "|---|---:|---|"]
    for worker in sorted(runs):
        ended = max(r["end"] for r in rows if r.get("worker", "main") == worker and "end" in r)
        order = ", ".join(f"{u} {s:,.0f}" for u, s in runs[worker] if s >= 5)
        lines.append(f"| {worker} | {last - ended:,.0f} | {order} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Print the tables for the timing file given on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("times", type=Path, help="the BLOKUS_TEST_TIMES file of a pytest run")
    parser.add_argument("--top", type=int, default=0, help="also list this many slowest tests")
    parser.add_argument("--folders", action="store_true", help="sum per folder of tests/ rather than per file")
    parser.add_argument("--workers", action="store_true", help="also show what each xdist worker ran, in order")
    args = parser.parse_args(argv)
    rows = read_rows(args.times)
    print(markdown(rows, args.top, args.folders))
    if args.workers:
        print()
        print(timeline(rows))


if __name__ == "__main__":
    main()
