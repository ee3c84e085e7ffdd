"""``benchmarks/ci_times.py`` sums a timed run per test file or per folder, and lists the slowest tests."""

from __future__ import annotations

import json

from helpers import ROOT, load_script

ROWS = [
    {"test": "tests/env/test_a.py::test_one", "wall_s": 2.0, "cpu_s": 1.0, "child_cpu_s": 0.5},
    {"test": "tests/env/test_a.py::test_two", "wall_s": 1.0, "cpu_s": 1.0, "child_cpu_s": 0.0},
    {"test": "tests/env/test_b.py::test_three[duo]", "wall_s": 4.0, "cpu_s": 3.0, "child_cpu_s": 0.0},
    # a row with JAX's compile-time sums (older timing files have none: those count as 0)
    {
        "test": "tests/env/test_b.py::test_five",
        "wall_s": 3.0,
        "cpu_s": 3.0,
        "child_cpu_s": 0.0,
        "trace_s": 0.5,
        "traces": 4,
        "lower_s": 0.25,
        "lowers": 4,
        "compile_s": 1.5,
        "compiles": 4,
    },
    {"test": "tests/agents/test_c.py::test_four", "wall_s": 9.0, "cpu_s": 2.0, "child_cpu_s": 6.0},
]


def _load():
    return load_script(ROOT / "benchmarks" / "ci_times.py")


def test_files_and_folders_are_summed_most_cpu_first(tmp_path, capsys):
    ci_times = _load()
    assert ci_times.per_file(ROWS) == [
        ("tests/agents/test_c.py", 1, 9.0, 8.0, 0.0, 0.0, 0.0, 0),
        ("tests/env/test_b.py", 2, 7.0, 6.0, 0.5, 0.25, 1.5, 4),
        ("tests/env/test_a.py", 2, 3.0, 2.5, 0.0, 0.0, 0.0, 0),
    ]
    assert ci_times.per_file(ROWS, folders=True) == [
        ("tests/env/", 4, 10.0, 8.5, 0.5, 0.25, 1.5, 4),
        ("tests/agents/", 1, 9.0, 8.0, 0.0, 0.0, 0.0, 0),
    ]
    times = tmp_path / "t.jsonl"
    times.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    ci_times.main([str(times), "--folders", "--top", "1"])
    out = capsys.readouterr().out
    assert "| tests/env/ | 4 | 10 | 8 | 0 | 0 | 2 | 4 |" in out and "| **all** | 5 | 19 | 16 | 0 | 0 | 2 | 4 |" in out
    assert "| tests/agents/test_c.py::test_four | 9.0 | 8.0 | 0.0 |" in out and "test_three" not in out


def test_the_worker_timeline_lists_each_workers_units_in_order_and_its_idle_tail():
    ci_times = _load()
    rows = [
        {"test": "tests/a/test_x.py::t1", "wall_s": 6.0, "cpu_s": 6.0, "child_cpu_s": 0.0, "worker": "gw0", "end": 6.0},
        {
            "test": "tests/a/test_x.py::t2",
            "wall_s": 4.0,
            "cpu_s": 4.0,
            "child_cpu_s": 0.0,
            "worker": "gw0",
            "end": 10.0,
        },
        {
            "test": "tests/a/test_y.py::t3",
            "wall_s": 30.0,
            "cpu_s": 30.0,
            "child_cpu_s": 0.0,
            "worker": "gw1",
            "end": 30,
        },
        {
            "test": "tests/a/test_z.py::t4",
            "wall_s": 7.0,
            "cpu_s": 7.0,
            "child_cpu_s": 0.0,
            "worker": "gw0",
            "end": 17.0,
        },
    ]
    table = ci_times.timeline(rows)
    assert "| gw0 | 13 | test_x.py 10, test_z.py 7 |" in table
    assert "| gw1 | 0 | test_y.py 30 |" in table
    assert "no worker timeline" in ci_times.timeline(ROWS)  # rows written before the timeline was recorded
