"""The meeting of a run's processes before JAX connects them (`await_coordinator`), so that a process that never
comes is the project's one-line `ConfigError` in every process, not a native abort of process 0: JAX's own wait
(`jax.distributed.initialize`) ends by killing process 0 with exit code 134 and a stack trace when another process
is missing, mismatched `--coordinator` ports or two processes that both claim `--process-id 0`.

Process 0 listens at the coordinator's port until each other process has connected and said `blokus-jax start
ID COUNT`, then answers each `go` (or `refused REASON`) and closes the port, which JAX's coordination service binds
next. A process that waits longer than `--distributed-timeout` stops with a `ConfigError` naming who is missing.
"""

from __future__ import annotations

import contextlib
import errno
import socket
import sys
import time

from blokus_jax.errors import ConfigError


def announce(text: str) -> None:
    """One line on stderr while a process waits for others (so that a wait is never silent)."""
    print(f"blokus-jax: {text}", file=sys.stderr, flush=True)


#: The line each process sends process 0 before JAX connects (`await_coordinator`), then its id and process count.
_HELLO = "blokus-jax start"


def await_coordinator(coordinator: str, process_id: int | None, num_processes: int | None, timeout: float) -> None:
    """Meet before JAX connects, whose own wait kills process 0 (a native abort, exit code 134) when another process
    never comes: process 0 listens at the coordinator's port until every other process has said its `--process-id`,
    then lets them all go on; each other process waits for process 0 to listen, says its id and waits for the word
    to go on. Only then does JAX bind the port and connect (every process is there).

    Args:
        coordinator: `HOST:PORT` of process 0, already checked (`blokus_agents.training.distributed.check_distributed`).
        process_id: This process's id.
        num_processes: The number of processes of the run.
        timeout: Seconds a process waits for the others.

    Raises:
        ConfigError: Process 0 cannot listen at the port (another process holds it: a second process 0?), a process
            did not come within `timeout` (naming which), or process 0 refused this one (its id is taken or outside
            the run), each saying what to do.
    """
    host, _, port_text = coordinator.rpartition(":")
    host, port = host.strip("[]"), int(port_text)
    deadline = time.monotonic() + timeout
    if process_id == 0:
        _gather(coordinator, port, int(num_processes or 1), timeout, deadline)
        return
    announce(f"process {process_id}: waiting up to {timeout:g} s for process 0 to listen at {coordinator}")
    while True:
        try:
            connection = socket.create_connection((host, port), timeout=1.0)
            break
        except OSError:
            if time.monotonic() >= deadline:
                raise ConfigError(
                    f"process {process_id} waited {timeout:g} s and nobody listens at --coordinator {coordinator!r}: "
                    f"start the process with --process-id 0 on that host (with the same --coordinator and "
                    f"--num-processes), or raise --distributed-timeout"
                ) from None
            time.sleep(0.25)
    with connection:
        with contextlib.suppress(OSError):
            connection.sendall(f"{_HELLO} {process_id} {num_processes}\n".encode())
        reply = _read_line(connection, deadline)
    if reply == "go":
        return
    if reply.startswith("refused "):
        raise ConfigError(reply.removeprefix("refused "))
    raise ConfigError(
        f"process {process_id} reached --coordinator {coordinator!r} but process 0 did not let it start within "
        f"{timeout:g} s: is process 0 of this run there (the same --coordinator and --num-processes)? Or raise "
        f"--distributed-timeout"
    )


def _gather(coordinator: str, port: int, num_processes: int, timeout: float, deadline: float) -> None:
    """Process 0's side of `await_coordinator`: listen at `port` until processes 1 to `num_processes - 1` have
    each said their id (or the `deadline` passes), then tell them to go on, or that the run cannot start."""
    try:
        # where JAX's coordinator listens next: every interface, IPv6 too where the host has it (as JAX's `[::]`)
        dual = socket.has_dualstack_ipv6()
        family = socket.AF_INET6 if dual else socket.AF_INET
        server = socket.create_server(("", port), family=family, dualstack_ipv6=dual)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            return  # not ours to judge: JAX says what is wrong
        raise ConfigError(
            f"--coordinator {coordinator!r}: process 0 cannot listen there ({exc.strerror}): another process "
            f"uses that port (a second --process-id 0?); give each process its own --process-id, or choose "
            f"another port"
        ) from None
    announce(
        f"process 0 of {num_processes}: waiting up to {timeout:g} s for the other processes to join at {coordinator} "
        f"(--distributed-timeout)"
    )
    came: dict[int, socket.socket] = {}
    try:
        with server:
            while len(came) < num_processes - 1 and (left := deadline - time.monotonic()) > 0:
                server.settimeout(left)
                try:
                    connection, _ = server.accept()
                except OSError:  # the deadline passed
                    break
                said = _read_line(connection, deadline).split()
                if len(said) != 4 or " ".join(said[:2]) != _HELLO or not said[2].isdigit():
                    connection.close()  # not a process of a run (a port scan): ignored
                    continue
                other = int(said[2])
                problem = (
                    f"process 0 already has a process {other}: give each process its own --process-id"
                    if other in came
                    else f"process 0's run has processes 0 to {num_processes - 1}, not {other}: start every "
                    f"process with the same --num-processes ({num_processes}) and its own --process-id"
                    if not 0 < other < num_processes
                    else ""
                )
                if problem:
                    _tell(connection, f"refused process {other} cannot join at {coordinator}: {problem}")
                    connection.close()
                    continue
                came[other] = connection
        missing = [other for other in range(1, num_processes) if other not in came]
        if missing:
            names = ("processes " if len(missing) > 1 else "process ") + ", ".join(map(str, missing))
            reason = (
                f"process 0 waited {timeout:g} s at --coordinator {coordinator!r} and {names} never came: start "
                f"every process with the same --coordinator (host and port) and "
                f"--num-processes and its own --process-id, or raise --distributed-timeout"
            )
            for connection in came.values():
                _tell(connection, f"refused {reason}")
            raise ConfigError(reason)
        for connection in came.values():
            _tell(connection, "go")
    finally:
        for connection in came.values():
            connection.close()


def _read_line(connection: socket.socket, deadline: float, limit: int = 256) -> str:
    """The first line `connection` sends (at most `limit` bytes, ASCII), or what came before the `deadline` or the
    end of the stream."""
    data = b""
    while b"\n" not in data and len(data) < limit and (left := deadline - time.monotonic()) > 0:
        connection.settimeout(left)
        try:
            chunk = connection.recv(limit - len(data))
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data.split(b"\n")[0].decode("ascii", "replace").strip()


def _tell(connection: socket.socket, line: str) -> None:
    """Send `line` on `connection`; a process that has gone away is not waited for."""
    with contextlib.suppress(OSError):
        connection.sendall(line.encode("ascii", "replace") + b"\n")


__all__ = ["announce", "await_coordinator"]
