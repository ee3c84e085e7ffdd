"""Start-up and the host side of a run of several processes: the CPU's XLA devices (`use_cpu_cores`), joining the
other processes (`check_distributed`, `start_distributed`), and the host decisions every process must take alike
(`is_primary`, `agree`, `any_process`). Where the processes meet before JAX connects them is
`blokus_agents.training.rendezvous`.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import json
import os
import re
import socket
from typing import Any

import jax
import numpy as np

from blokus_agents.training.rendezvous import announce as _announce
from blokus_agents.training.rendezvous import await_coordinator
from blokus_agents.training.rundir import DISTRIBUTED_TIMEOUT, MAX_DISTRIBUTED_TIMEOUT
from blokus_jax.errors import ConfigError

_FORCE_FLAG = "xla_force_host_platform_device_count"


def cpu_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one, else `os.cpu_count()`)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def use_cpu_cores(count: int | None = None) -> int | None:
    """Give the CPU backend `count` XLA devices (default: one per core, `cpu_cores`) so that training splits
    its games over the cores; JAX's own default is one CPU device, which runs the batch on one core. Must run before
    JAX executes anything. Returns the count set, or `None` when nothing was changed: `XLA_FLAGS` already sets
    `--xla_force_host_platform_device_count` (respected), or JAX has already started (then `count`, if given and
    different from the devices JAX has, is a `ConfigError`). Accelerators are unaffected: only the CPU backend
    gets the devices."""
    if _FORCE_FLAG in os.environ.get("XLA_FLAGS", ""):
        match = re.search(_FORCE_FLAG + r"=(\d+)", os.environ["XLA_FLAGS"])
        if count is not None and match and int(match.group(1)) != count:
            raise ConfigError(
                f"--cpu-devices {count} contradicts XLA_FLAGS={os.environ['XLA_FLAGS']!r}; drop one of them"
            )
        return None
    wanted = cpu_cores() if count is None else int(count)
    if jax.config.jax_num_cpu_devices == wanted:
        return None  # set already (e.g. by an earlier call)
    try:
        jax.config.update("jax_num_cpu_devices", wanted)
    except RuntimeError:  # JAX is running already (a notebook, a test): keep its devices
        have = len(jax.devices("cpu"))
        if count is not None and have != count:
            raise ConfigError(
                f"--cpu-devices {count}: JAX has already started with {have} CPU device(s) in this process; set "
                f"the count before JAX runs (blokus_agents.training.distributed.use_cpu_cores right after import)"
            ) from None
        return None
    return wanted


#: The most processes a run may have (a larger `--num-processes` is a typo; JAX would allocate for each one).
MAX_PROCESSES = 65_536


def check_distributed(coordinator: str | None, num_processes: int | None, process_id: int | None) -> None:
    """Raise `ConfigError` (in the CLI's words) for distributed settings that could only hang or crash.

    Args:
        coordinator: `HOST:PORT` of process 0, or `None`.
        num_processes: The processes of the run, or `None`.
        process_id: This process's id, or `None`.

    Raises:
        ConfigError: A `coordinator` that is not `HOST:PORT` with a port from 1 to 65535 or whose host does not
            resolve, a `coordinator` without `num_processes` and `process_id` (JAX would wait for a cluster that
            is not there), a process count outside 1 to `MAX_PROCESSES`, or a `process_id` outside
            `0..num_processes - 1`.
    """
    if num_processes is not None and not (type(num_processes) is int and 1 <= num_processes <= MAX_PROCESSES):
        raise ConfigError(f"--num-processes {num_processes!r} must be a whole number from 1 to {MAX_PROCESSES:,}")
    if process_id is not None and type(process_id) is not int:
        raise ConfigError(f"--process-id {process_id!r} must be a whole number")
    if num_processes is not None and process_id is not None and not 0 <= process_id < num_processes:
        raise ConfigError(
            f"--process-id {process_id} must be in 0..{num_processes - 1} (--num-processes {num_processes})"
        )
    if coordinator is None:
        return
    match = re.fullmatch(r"\[?([\w.:-]+?)\]?:(\d{1,5})", coordinator)
    if not match:
        raise ConfigError(f"--coordinator {coordinator!r} is not HOST:PORT, e.g. 10.0.0.1:1234 or localhost:1234")
    host, port = match.group(1), int(match.group(2))
    if not 1 <= port <= 65535:
        raise ConfigError(f"--coordinator {coordinator!r}: the port must be from 1 to 65535, e.g. {host}:12355")
    if num_processes is None or process_id is None:
        raise ConfigError(
            f"--coordinator {coordinator!r} needs --num-processes N and --process-id I too (every process gets the "
            f"same N and its own I); on a SLURM, TPU-pod or Open MPI cluster leave all three out"
        )
    try:
        socket.getaddrinfo(host, port)
    except (OSError, UnicodeError) as exc:
        raise ConfigError(
            f"--coordinator {coordinator!r}: host {host!r} does not resolve ({getattr(exc, 'strerror', None) or exc}); "
            f"give the address of the machine running --process-id 0"
        ) from None


def start_distributed(
    coordinator: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    timeout: int = DISTRIBUTED_TIMEOUT,
) -> None:
    """Join a multi-process run with `jax.distributed.initialize`, from the settings given or, for those not
    given, JAX's cluster detection (SLURM, TPU pods, Open MPI). CPU collectives go over gloo. Must run before JAX
    executes anything; every process of the run calls it (a second call in the same process does nothing). The
    settings are checked first (`check_distributed`).

    Args:
        coordinator: `HOST:PORT` of process 0, or `None`.
        num_processes: The processes of the run, or `None`.
        process_id: This process's id, or `None`.
        timeout: The most seconds a process waits for the others (1 to `MAX_DISTRIBUTED_TIMEOUT`).

    Raises:
        ConfigError: (In the CLI's words) no cluster is found, the values are inconsistent, or the others
            do not come.
    """
    if jax.distributed.is_initialized():
        return
    check_distributed(coordinator, num_processes, process_id)
    if not (type(timeout) is int and 1 <= timeout <= MAX_DISTRIBUTED_TIMEOUT):
        raise ConfigError(
            f"--distributed-timeout {timeout!r} must be a whole number of seconds from 1 to {MAX_DISTRIBUTED_TIMEOUT}"
        )
    if coordinator is not None:
        await_coordinator(coordinator, process_id, num_processes, timeout)
        if process_id != 0:
            _announce(
                f"process {process_id} of {num_processes}: waiting up to {timeout} s for the others to join at "
                f"{coordinator} (--distributed-timeout)"
            )
    try:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(
            coordinator_address=coordinator,
            num_processes=num_processes,
            process_id=process_id,
            initialization_timeout=timeout,
        )
    except (ValueError, RuntimeError) as exc:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        waited = "DEADLINE" in str(exc).upper() or "timed out" in str(exc).lower()
        who = "process " + (str(process_id) if process_id is not None else "?")
        raise ConfigError(
            f"--distributed could not start ({text[:300]}); "
            + (
                f"{who} waited {timeout} s for the others: start every process with the same --coordinator and "
                f"--num-processes and its own --process-id (0 on the coordinator's host), or raise "
                f"--distributed-timeout"
                if waited
                else "on a SLURM, TPU-pod or Open MPI cluster the flags may be left out, elsewhere give "
                "--coordinator HOST:PORT --num-processes N --process-id I to every process"
            )
        ) from exc
    _check_same_start(timeout)


#: The key under which each process publishes its start-up settings in JAX's coordination service.
_START_KEY = "blokus_jax/start/"


def _check_same_start(timeout: int) -> None:
    """Once connected, compare this process's `--num-processes` (and JAX version) with those of every other
    process through the coordination service's key-value store (no collective: with different counts a collective
    would hang). Raises `ConfigError` naming both counts, or naming the process that never published them."""
    from jax._src import distributed

    client = distributed.global_state.client
    me, count = distributed.global_state.process_id, distributed.global_state.num_processes
    if client is None or count is None:
        return
    mine = json.dumps({"num_processes": count, "jax": jax.__version__}, sort_keys=True)
    client.key_value_set(f"{_START_KEY}{me}", mine)
    for other in range(count):  # process 0 first: a different count shows there before anything else is waited for
        if other == me:
            continue
        try:
            theirs = client.blocking_key_value_get(f"{_START_KEY}{other}", timeout * 1000)
        except Exception:  # noqa: BLE001 - the service's own error types are not public
            raise ConfigError(
                f"process {me} of {count}: process {other} did not report its settings within {timeout} s (was it "
                f"started with another --num-processes?); start every process with the same --num-processes"
            ) from None
        if theirs != mine:
            seen, said = json.loads(theirs), json.loads(mine)
            raise ConfigError(
                f"process {me} was started with --num-processes {said['num_processes']} (JAX {said['jax']}) but "
                f"process {other} with --num-processes {seen['num_processes']} (JAX {seen['jax']}): start every "
                f"process with the same flags and versions, each with its own --process-id"
            )


def is_primary() -> bool:
    """Whether this is process 0, the one that writes the run's files (metrics, plots, settings) and prints."""
    return jax.process_index() == 0


def agree(value: Any) -> Any:
    """Process 0's `value` (a number or a bool) on every process, so that host decisions taken from the clock
    (out of time, the learning-rate horizon) are the same everywhere; `value` itself with one process."""
    if jax.process_count() == 1:
        return value
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.broadcast_one_to_all(np.asarray(value))).item()


def any_process(flag: bool) -> bool:
    """Whether `flag` is true in any process of the run (every process must call this at the same point), so that
    a stop signal sent to one process stops them all together; `flag` itself with one process."""
    if jax.process_count() == 1:
        return bool(flag)
    from jax.experimental import multihost_utils

    return bool(np.any(multihost_utils.process_allgather(np.asarray(bool(flag)))))


__all__ = [
    "MAX_PROCESSES",
    "agree",
    "any_process",
    "check_distributed",
    "cpu_cores",
    "is_primary",
    "start_distributed",
    "use_cpu_cores",
]
