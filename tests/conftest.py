"""Shared set-up of the test suite: one persistent JAX compilation cache per run, opt-in per-test timing, the order
in which test files start, and fixtures for the Pentobi reference data and a mask-to-placements helper (both in
``tests/helpers.py``)."""

from __future__ import annotations

import atexit
import json
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Callable

import pytest

try:  # pytest-xdist, for the scheduler of `-n N` runs below
    from xdist.scheduler import LoadScopeScheduling
except ImportError:  # the suite also runs in one process without it
    LoadScopeScheduling = None

# One persistent compilation cache for the whole run, in a temporary directory: tests that build the same function
# again (a fresh `make_train` closure, a CLI subprocess, a notebook kernel, the other pytest-xdist worker) load the
# executable instead of compiling it again. Set through the environment before JAX is imported, so that the xdist
# workers and every subprocess a test starts inherit it; the process that made the directory removes it at exit. A
# cache directory the user set already is used as is.
if "JAX_COMPILATION_CACHE_DIR" not in os.environ:
    _cache_dir = tempfile.mkdtemp(prefix="blokus-jax-test-cache-")
    os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache_dir
    atexit.register(shutil.rmtree, _cache_dir, ignore_errors=True)
_MIN_TIME, _MIN_SIZE = "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES"
os.environ.setdefault(_MIN_TIME, "0")  # cache every executable, however quick its compilation
os.environ.setdefault(_MIN_SIZE, "0")
# Most of the suite's time is XLA compiling small programs that then run for milliseconds: compile with most of XLA's
# optimisations off (JAX's own `jax_disable_most_optimizations`: LLVM at -O0 and no expensive passes), which cuts the
# suite's CPU time by about a third, and with the CPU backend's older code emitters for fused operations (XLA's
# `--xla_cpu_use_fusion_emitters=false`), which about halves it again (tests/agents/test_bots.py on one core: 52.9 s
# with the default emitters, 28.8 s without). Results do not depend on either; tests that measure speed compare runs
# made under the same setting, and every subprocess and notebook kernel inherits both.
# `JAX_DISABLE_MOST_OPTIMIZATIONS=0 python -m pytest ...` tests optimised code; an XLA_FLAGS of your own that names
# the emitter flag is kept as it is.
os.environ.setdefault("JAX_DISABLE_MOST_OPTIMIZATIONS", "1")
if "xla_cpu_use_fusion_emitters" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} --xla_cpu_use_fusion_emitters=false".strip()
if "PYTEST_XDIST_WORKER" in os.environ:  # several workers share one accelerator: none may take 75 % of its memory
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402  (after the cache settings above)
from helpers import FULL_BOARDS, load_oracle, mask_placements  # noqa: E402

# JAX reads these variables when it is imported; set again here in case a plugin imported it first.
jax.config.update("jax_compilation_cache_dir", os.environ["JAX_COMPILATION_CACHE_DIR"])
jax.config.update("jax_persistent_cache_min_compile_time_secs", float(os.environ[_MIN_TIME]))
jax.config.update("jax_persistent_cache_min_entry_size_bytes", int(os.environ[_MIN_SIZE]))
_FAST_COMPILE = os.environ["JAX_DISABLE_MOST_OPTIMIZATIONS"].lower() in ("1", "true")
jax.config.update("jax_disable_most_optimizations", _FAST_COMPILE)

#: ``BLOKUS_TEST_TIMES=path.jsonl python -m pytest ...`` appends one JSON line per test: wall seconds, CPU seconds
#: of the pytest process (all its threads) and of the subprocesses it waited for, set-up and teardown included, the
#: pytest-xdist worker and the wall-clock time it ended. ``python benchmarks/ci_times.py path.jsonl`` sums them per
#: file (``--workers``: what each worker ran, in order, and how long it waited at the end).
_TIMES_PATH = os.environ.get("BLOKUS_TEST_TIMES")

#: JAX's own compile-time events, summed per test while timing: tracing to a jaxpr, lowering to MLIR, and the
#: backend's compilation (a persistent-cache hit included), as seconds and counts.
_JAX_EVENTS = {
    "/jax/core/compile/jaxpr_trace_duration": "trace",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
    "/jax/core/compile/backend_compile_duration": "compile",
}
_jax_seconds: dict[str, float] = {}


def _on_jax_event(event: str, duration: float, **_) -> None:
    """Add one JAX compile-time event to this test's sums (a ``jax.monitoring`` duration listener)."""
    name = _JAX_EVENTS.get(event)
    if name is not None:
        _jax_seconds[name + "_s"] = _jax_seconds.get(name + "_s", 0.0) + duration
        _jax_seconds[name + "s"] = _jax_seconds.get(name + "s", 0) + 1


if _TIMES_PATH:
    jax.monitoring.register_event_duration_secs_listener(_on_jax_event)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Time one test (set-up, call, teardown) when ``BLOKUS_TEST_TIMES`` is set; otherwise do nothing."""
    if not _TIMES_PATH:
        yield
        return
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall, cpu = time.perf_counter(), time.process_time()
    _jax_seconds.clear()
    yield
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    child_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    row = {"test": item.nodeid, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "child_cpu_s": round(child_cpu, 3)}
    row.update(worker=os.environ.get("PYTEST_XDIST_WORKER", "main"), end=round(time.time(), 3))
    row.update({key: round(value, 3) for key, value in sorted(_jax_seconds.items())})
    with open(_TIMES_PATH, "a") as handle:  # one short append per test: safe from several xdist workers
        handle.write(json.dumps(row) + "\n")


#: Files whose tests share no module fixture and take long one by one (each notebook runs in a kernel of its own):
#: under pytest-xdist each of their tests is a unit of work on its own, so that they spread over the workers.
SPLIT_FILES = ("test_notebooks.py", "test_docs_snippets.py")

#: The longest units of work, the longest first (``python benchmarks/ci_times.py``): a test file, or ``file::test``
#: for a test of :data:`SPLIT_FILES`. They are collected first, in this order, and the scheduler below hands units out
#: in collection order, so the longest start first and the workers finish close together; every other file keeps its
#: place after them.
HEAVY = (
    "test_distributed.py",
    "test_alphazero.py",
    "test_search.py",
    "test_search_playouts.py",
    "test_ppo.py",
    "test_pgx.py",
    "test_bots.py",
    "test_notebooks.py::test_notebook_runs[02_training.ipynb]",
    "test_baselines.py",
    "test_contract.py",
    "test_accelerator.py",
    "test_alphazero_seats.py",
    "test_teacher.py",
    "test_search_mix.py",
    "test_env.py",
    "test_notebooks.py::test_notebook_runs[07_alphazero.ipynb]",
    "test_stop_and_resume.py",
    "test_networks.py",
    "test_notebooks.py::test_notebook_runs[06_search.ipynb]",
    "test_arena.py",
)


def _unit(nodeid: str) -> str:
    """The unit of work of a test under pytest-xdist: its file's name, or ``file::test`` in :data:`SPLIT_FILES`."""
    path, _, rest = nodeid.partition("::")
    name = path.rsplit("/", 1)[-1]
    return f"{name}::{rest}" if name in SPLIT_FILES else name


if LoadScopeScheduling is not None:

    class FileScheduling(LoadScopeScheduling):
        """pytest-xdist scheduling by test file (a file's module fixtures are built once), with the tests of
        :data:`SPLIT_FILES` as units of their own. Units go out in collection order, and a worker gets its next
        unit only when it is on the last test of the ones it holds, so that no long unit waits behind another in a
        busy worker while the other worker is free."""

        def _split_scope(self, nodeid: str) -> str:
            return _unit(nodeid)

        def _reschedule(self, node) -> None:
            if node.shutting_down:
                return
            if not self.workqueue:
                node.shutdown()
                return
            if self._pending_of(self.assigned_work[node]) <= 1:
                self._assign_work_unit(node)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Schedule ``-n N`` runs (``--dist load``, the default, or ``--dist loadfile``) with :class:`FileScheduling`;
    any other ``--dist`` keeps pytest-xdist's own."""
    if config.getoption("dist") in ("load", "loadfile"):
        return FileScheduling(config, log)
    return None


def pytest_configure(config):
    """Under pytest-xdist, hand units out in collection order (:data:`HEAVY` first) rather than xdist's default of
    the files with the most tests first, which starts 80 quick tests before a 5-minute notebook (the same as passing
    ``--no-loadscope-reorder``)."""
    if hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(session, config, items):
    """Collect the units of :data:`HEAVY` first, in that order (a stable sort: tests keep their order in a file), and
    mark ``slow`` the parametrizations over the 20x20 boards (a test id naming one of ``helpers.FULL_BOARDS``): the
    quick lane checks the same code on the smaller boards, the full suite on every board."""
    rank = {name: i for i, name in enumerate(HEAVY)}
    items.sort(key=lambda item: rank.get(_unit(item.nodeid), len(HEAVY)))
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and FULL_BOARDS.intersection(callspec.id.split("-")):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def oracle() -> Callable[[str], dict]:
    """A loader ``oracle(file_name) -> dict`` for the reference files, cached for the whole session."""
    return load_oracle


@pytest.fixture(scope="session")
def placements_of() -> Callable:
    """The helper :func:`mask_placements` as a fixture: ``placements_of(env, mask) -> set[frozenset]``."""
    return mask_placements
