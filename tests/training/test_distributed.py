"""Multi-process training as users launch it: ``blokus-jax train --distributed`` with 2 local processes of 2 host
devices each (JAX's distributed runtime, gloo collectives, a free local port) trains like 1 process with 4 host
devices, writes one run directory, and continues exactly after both processes are killed and resumed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import numpy as np
import pytest

from blokus_agents.players import checkpoint_index, checkpoint_read
from blokus_agents.training import checkpoint
from blokus_agents.training.algorithms import make_trainer
from blokus_agents.training.rundir import LOCK_FILE, SETTINGS_FILE, read_metrics

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 900  # seconds per launch: compiling on a loaded 2-core machine is slow, a hang must still end

SMALL = ["--variant", "simple", "--num-envs", "8", "--num-steps", "4", "--channels", "4", "--blocks", "1"]
PPO = ["train", *SMALL, "--total-steps", "96", "--eval-every", "3", "--eval-games", "2", "--checkpoint-every", "1"]
PPO += ["--no-progress"]
AZ = ["train", "--algo", "alphazero", *SMALL, "--sims", "2", "--batch-size", "16", "--total-steps", "128"]
AZ += ["--eval-every", "0", "--checkpoint-every", "2", "--no-progress"]
KILL_AFTER = 3  # the AlphaZero run is killed once update 3 is logged: after checkpoint 2, before checkpoint 4

# Runs `blokus-jax train` (cli.main) once per item of a plan; an item may ask for both processes to be killed
# (SIGKILL, after a barrier, so that both die) right after the record of a given update is logged.
DRIVER = textwrap.dedent("""
    import json, os, signal, sys
    from blokus_agents import cli
    from blokus_agents.training import train
    for argv, kill_after in json.loads(sys.argv[1]):
        if kill_after is not None:
            log = train._Session.log
            def dying(self, record, log=log, kill_after=kill_after):
                log(self, record)
                if record["update"] == kill_after:
                    from jax.experimental import multihost_utils
                    multihost_utils.sync_global_devices("kill")
                    os.kill(os.getpid(), signal.SIGKILL)
            train._Session.log = dying
        code = cli.main(argv)
        if code:
            sys.exit(code)
    print("DRIVER-OK")
""")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def _without_device_count() -> str:
    """The suite's ``XLA_FLAGS`` (tests/conftest.py) without a device count, which each test sets its own way."""
    return " ".join(f for f in os.environ.get("XLA_FLAGS", "").split() if "device_count" not in f)


def _start(plan: list, extra: list[str]) -> subprocess.Popen:
    env = {**os.environ, "XLA_FLAGS": _without_device_count(), "JAX_PLATFORMS": "cpu"}
    plan = [[[*argv, *extra], kill] for argv, kill in plan]
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, json.dumps(plan)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _two_processes(plan: list) -> list[subprocess.Popen]:
    port = _free_port()
    flags = ["--distributed", "--coordinator", f"localhost:{port}", "--num-processes", "2", "--cpu-devices", "2"]
    return [_start(plan, [*flags, "--process-id", str(i)]) for i in range(2)]


def _wait(procs: list[subprocess.Popen]) -> list[tuple[int, str, str]]:
    """Wait for every process (killing all of them when one runs past the time limit)."""
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=TIMEOUT)
            results.append((p.returncode, out, err))
    except subprocess.TimeoutExpired:
        for p in procs:
            p.kill()
        pytest.fail(f"a training process ran longer than {TIMEOUT} s")
    return results


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run directories: PPO and AlphaZero trained by 1 process with 4 devices (``ref_*``) and by 2 processes with 2
    devices each (``dist_*``; AlphaZero killed after update 3, then resumed with ``--resume`` alone)."""
    root = tmp_path_factory.mktemp("distributed")
    d = {name: root / name for name in ("ref_ppo", "ref_az", "dist_ppo", "dist_az")}
    single = _start(
        [[[*PPO, "--out", str(d["ref_ppo"])], None], [[*AZ, "--out", str(d["ref_az"])], None]], ["--cpu-devices", "4"]
    )
    pair = _two_processes(
        [[[*PPO, "--out", str(d["dist_ppo"])], None], [[*AZ, "--out", str(d["dist_az"])], KILL_AFTER]]
    )
    (code, out, err), *killed = _wait([single, *pair])
    first = [(k[0], k[1], k[2]) for k in killed]
    assert code == 0 and "DRIVER-OK" in out, err[-3000:]
    assert [k[0] for k in killed] == [-9, -9], [k[2][-3000:] for k in killed]
    before = read_metrics(d["dist_az"])  # the killed run's log, whose last record the resume must drop and redo
    resumed = _wait(_two_processes([[["train", "--resume", "--out", str(d["dist_az"]), "--no-progress"], None]]))
    for code, out, err in resumed:
        assert code == 0 and "DRIVER-OK" in out, err[-3000:]
    return d, before, resumed, first


def _assert_close(a, b):
    for x, y in zip(jax.tree.leaves(a), jax.tree.leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=2e-4, atol=2e-6)  # as the 4-vs-1 device tests


@pytest.mark.slow
def test_two_processes_train_ppo_like_one_process_with_four_devices(runs):
    d, _, _, _ = runs
    run, ref = d["dist_ppo"], d["ref_ppo"]
    for step in (2, 3):  # the newest checkpoints kept (every update was checkpointed)
        _assert_close(checkpoint_read.load_params(run, step)[1], checkpoint_read.load_params(ref, step)[1])
    # one run directory, one metrics file written by process 0 alone: each update once, evaluated by process 0
    records = read_metrics(run)
    assert [r["update"] for r in records] == [0, 1, 2, 3]
    assert len((run / "metrics.jsonl").read_text().splitlines()) == 4
    assert [r["update"] for r in records if "win_rate_vs_greedy" in r] == [0, 3]
    for a, b in zip(records[1:], read_metrics(ref)[1:], strict=True):
        np.testing.assert_allclose(a["policy_loss"], b["policy_loss"], rtol=1e-3, atol=1e-5)
    assert not (run / LOCK_FILE).exists() and (run / SETTINGS_FILE).exists() and (run / "win_rate.png").exists()


@pytest.mark.slow
def test_alphazero_over_two_processes_killed_and_resumed_continues_exactly(runs):
    d, before, resumed, _ = runs
    run, ref = d["dist_az"], d["ref_az"]
    # the kill came after update 3 was logged and before its checkpoint; the resume redid it bit for bit
    assert [r["update"] for r in before] == [1, 2, 3] and checkpoint_index.latest_step(run) == 4
    after = read_metrics(run)
    assert [r["update"] for r in after] == [1, 2, 3, 4]
    for key in ("policy_loss", "value_loss", "policy_kl", "buffer_positions", "param_norm"):
        assert after[2][key] == before[2][key], key
    # the resumed run kept the settings it was started with (checkpoints every 2 updates, no evaluation)
    assert sorted(int(p.name) for p in (run / "checkpoints").iterdir()) == [2, 4]
    assert not any(k.startswith("win_rate") for r in after for k in r)
    # and equals the run of one process with 4 devices: network, games and replay buffer
    config = checkpoint_read.load_config(run)
    trainer = make_trainer(config)
    a, b = checkpoint.restore(run, trainer), checkpoint.restore(ref, trainer)
    _assert_close(a.params, b.params)
    np.testing.assert_array_equal(np.asarray(a.env_state.board), np.asarray(b.env_state.board))
    np.testing.assert_array_equal(np.asarray(a.buffer.length), np.asarray(b.buffer.length))
    np.testing.assert_array_equal(np.asarray(a.buffer.candidates), np.asarray(b.buffer.candidates))
    assert int(a.buffer.length.sum()) > 0
    # process 0 printed the summary table; process 1 printed nothing of it
    (_, out0, _), (_, out1, _) = resumed
    assert "AlphaZero on simple" in out0 and "AlphaZero on simple" not in out1


@pytest.mark.slow
def test_only_process_zero_speaks(runs):
    _, _, _, first = runs
    (_, _, err0), (_, _, err1) = first
    assert "initial network: vs_random=" in err0 and "compiling the PPO update" in err0
    assert "over 4 cpu devices" in err0  # one mesh over both processes' devices
    assert "initial network" not in err1 and "compiling the PPO update" not in err1


def test_distributed_flags_are_checked_in_the_clis_words(capsys):
    from blokus_agents import cli

    for argv, message in (
        (["--coordinator", "nohostport"], "--coordinator 'nohostport' is not HOST:PORT"),
        (["--coordinator", "localhost:1", "--num-processes", "2", "--process-id", "2"], "--process-id 2 must be in"),
    ):
        assert cli.main(["train", *argv, "--out", "unused", "--cpu-devices", "1"]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err


CORES = textwrap.dedent("""
    import os, sys
    from blokus_agents.training import distributed, mesh
    from blokus_jax.errors import ConfigError
    if sys.argv[1] == "default":  # one CPU device per core, set before JAX starts
        assert distributed.use_cpu_cores() == distributed.cpu_cores()
        import jax
        assert len(jax.devices()) == distributed.cpu_cores()
        assert distributed.use_cpu_cores() is None  # JAX runs: nothing changes, and asking for another count fails
        try:
            distributed.use_cpu_cores(distributed.cpu_cores() + 1)
            raise SystemExit("no error")
        except ConfigError as exc:
            assert "already started" in str(exc)
    else:  # XLA_FLAGS chose 4 devices: respected, and the default mesh takes as many as the games split over
        assert distributed.use_cpu_cores() is None
        try:
            distributed.use_cpu_cores(2)
            raise SystemExit("no error")
        except ConfigError as exc:
            assert "contradicts XLA_FLAGS" in str(exc)
        import jax
        assert len(jax.devices()) == 4
        assert mesh.default_mesh(8).size == 4 and mesh.default_mesh(6).size == 3
        assert mesh.default_mesh(7) is None
    print("CORES-OK")
""")


@pytest.mark.parametrize("case", ["default", "xla_flags"])
def test_cpu_training_gets_one_device_per_core_unless_told_otherwise(case):
    env = {**os.environ, "XLA_FLAGS": _without_device_count(), "JAX_PLATFORMS": "cpu"}
    if case == "xla_flags":
        env["XLA_FLAGS"] += " --xla_force_host_platform_device_count=4"
    proc = subprocess.run(
        [sys.executable, "-c", CORES, case], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0 and "CORES-OK" in proc.stdout, proc.stderr[-3000:]
