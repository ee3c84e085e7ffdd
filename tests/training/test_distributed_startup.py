"""Distributed start-up fails fast instead of hanging: addresses, counts and ids checked up front, the wait for
the other processes bounded, and processes started with different settings refused once connected."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

import pytest

from blokus_agents import cli
from blokus_agents.players.configs import PPOConfig
from blokus_agents.training import distributed, train
from blokus_jax.errors import ConfigError


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("localhost:0", 2, 0), "port must be from 1 to 65535"),
        (("localhost:99999", 2, 0), "port must be from 1 to 65535"),
        (("no-such-host.invalid:1234", 2, 0), "does not resolve"),
        (("localhost:1234", None, None), "needs --num-processes N and --process-id I"),
        (("localhost:1234", 10**9, 0), "--num-processes 1000000000 must be a whole number from 1 to 65,536"),
        (("localhost:1234", 2**40, 0), "must be a whole number from 1 to 65,536"),
        (("localhost:1234", 2, 5), "--process-id 5 must be in 0..1"),
    ],
)
def test_settings_that_could_only_hang_or_crash_are_refused_before_connecting(flags, message):
    with pytest.raises(ConfigError, match=message):
        distributed.check_distributed(*flags)


def test_the_cli_refuses_a_coordinator_alone_in_its_words(capsys):
    assert cli.main(["train", "--coordinator", "localhost:1234", "--out", "unused", "--cpu-devices", "1"]) == 2
    err = capsys.readouterr().err
    assert "needs --num-processes N and --process-id I" in err and "Traceback" not in err


WAIT = textwrap.dedent("""
    import sys
    from blokus_agents.training import distributed
    from blokus_jax.errors import ConfigError
    try:
        distributed.start_distributed(sys.argv[1], 2, 1, timeout=3)
    except ConfigError as exc:
        print("REFUSED", exc)
""")


def test_a_process_whose_coordinator_never_comes_gives_up_after_the_timeout(tmp_path):
    with socket.socket() as probe:  # a free port where nobody listens
        probe.bind(("localhost", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run(
        [sys.executable, "-c", WAIT, f"localhost:{port}"], capture_output=True, text=True, timeout=120, env=env
    )
    assert "REFUSED process 1 waited 3 s and nobody listens at --coordinator" in proc.stdout, proc.stderr[-2000:]
    assert "waiting up to 3 s for process 0 to listen" in proc.stderr


def test_a_second_process_zero_is_refused_when_the_port_is_taken(tmp_path):
    with socket.socket() as holder:  # process 0 of the run already listens there
        holder.bind(("", 0))
        holder.listen()
        port = holder.getsockname()[1]
        code = WAIT.replace("2, 1, timeout=3", "2, 0, timeout=3")
        env = {**os.environ, "JAX_PLATFORMS": "cpu"}
        proc = subprocess.run(
            [sys.executable, "-c", code, f"localhost:{port}"], capture_output=True, text=True, timeout=120, env=env
        )
    assert "REFUSED" in proc.stdout and "a second --process-id 0?" in proc.stdout, proc.stdout + proc.stderr[-2000:]


def test_processes_started_with_different_settings_are_refused_in_all_of_them(tmp_path, monkeypatch):
    monkeypatch.setattr(train.jax, "process_count", lambda: 2)
    monkeypatch.setattr(distributed, "agree", lambda value: value + 1)  # process 0 had other settings
    monkeypatch.setattr(distributed, "any_process", lambda flag: bool(flag))
    config = PPOConfig(variant="simple", num_envs=8, num_steps=8, total_steps=64)
    with pytest.raises(ConfigError, match="started with different settings"):
        train._check_same_run(config, train.Settings(), tmp_path, False, None)
    monkeypatch.setattr(distributed, "agree", lambda value: value)
    train._check_same_run(config, train.Settings(), tmp_path, False, None)


START = textwrap.dedent("""
    import sys
    from blokus_agents.training import distributed
    from blokus_jax.errors import ConfigError
    try:
        distributed.start_distributed(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), timeout=20)
        print("STARTED")
    except ConfigError as exc:
        print("REFUSED", exc)
""")


def test_processes_started_with_different_process_counts_are_refused_in_both(tmp_path):
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", START, f"localhost:{port}", count, pid],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for count, pid in (("2", "0"), ("3", "1"))
    ]
    try:
        outputs = [proc.communicate(timeout=120) for proc in procs]
    finally:
        for proc in procs:
            proc.kill()
    (out0, err0), (out1, err1) = outputs
    assert "REFUSED process 0 was started with --num-processes 2" in out0, out0 + err0[-2000:]
    assert "but process 1 with --num-processes 3" in out0
    assert "REFUSED process 1 was started with --num-processes 3" in out1, out1 + err1[-2000:]
    assert "waiting up to 20 s for the other processes to join" in err0  # the wait is announced, never silent
    assert "process 1: waiting up to 20 s for process 0 to listen" in err1


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("localhost", 0))
        return probe.getsockname()[1]


def test_a_process_zero_whose_peer_never_comes_stops_with_one_line(capsys):
    """Before, JAX's own wait killed process 0 (exit code 134, a native stack trace) when a peer never came
    (mismatched ports, or both processes claiming id 0): now it waits at the port itself and says who is missing.
    Nothing of JAX's distributed runtime starts, so this runs in the test's process."""
    port = _free_port()
    with pytest.raises(
        ConfigError, match=rf"process 0 waited 1 s at --coordinator 'localhost:{port}' and process 1 never"
    ):
        distributed.start_distributed(f"localhost:{port}", 2, 0, timeout=1)
    assert "process 0 of 2: waiting up to 1 s for the other processes to join" in capsys.readouterr().err


def test_the_meeting_lets_a_whole_run_go_on_and_refuses_a_taken_id():
    """Process 0 and two processes that both claim id 1 of a run of three: process 0 refuses the second one and, as
    process 2 never comes, tells the first it cannot start either; each raises the project's error."""
    import threading

    from blokus_agents.training.rendezvous import await_coordinator

    coordinator = f"localhost:{_free_port()}"
    raised: dict[str, BaseException | None] = {}

    def process(name: str, pid: int, count: int, timeout: float) -> None:
        try:
            await_coordinator(coordinator, pid, count, timeout)
            raised[name] = None
        except ConfigError as exc:
            raised[name] = exc

    zero = threading.Thread(target=process, args=("zero", 0, 3, 3.0))
    zero.start()
    first = threading.Thread(target=process, args=("first", 1, 3, 10.0))
    first.start()
    first.join(0.5)  # process 0 meets the first process 1 before the second one comes (if not, the roles swap)
    process("second", 1, 3, 10.0)
    for thread in (zero, first):
        thread.join(30)
    refused = [str(raised["first"]), str(raised["second"])]
    assert sum("process 0 already has a process 1: give each process its own --process-id" in r for r in refused) == 1
    assert "and process 2 never came" in str(raised["zero"])
    assert sum("and process 2 never came" in r for r in refused) == 1  # the one process 0 kept is told why too

    # a whole run (two processes) goes on
    coordinator = f"localhost:{_free_port()}"
    zero = threading.Thread(target=process, args=("zero", 0, 2, 30.0))
    zero.start()
    process("one", 1, 2, 30.0)
    zero.join(30)
    assert raised["zero"] is None and raised["one"] is None
