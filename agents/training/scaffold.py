"""The trainer scaffold: what both trainers (`blokus_agents.training.ppo`,
`blokus_agents.training.alphazero`) need around their own update, written once.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import json
import os
import re
import socket
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from blokus_agents.core.messages import gib
from blokus_agents.core.messages import shown as _shown
from blokus_agents.core.policies import AgentSpecError
from blokus_agents.players.configs import MAX_UPDATES, AZConfig, RunConfig
from blokus_agents.players.networks import PolicyValueNet, config_network
from blokus_agents.search.mcts import teacher_memory
from blokus_agents.training.rendezvous import announce as _announce
from blokus_agents.training.rendezvous import await_coordinator
from blokus_agents.training.replay import empty_buffer
from blokus_agents.training.rundir import DISTRIBUTED_TIMEOUT, MAX_DISTRIBUTED_TIMEOUT
from blokus_jax.env import Env, make
from blokus_jax.errors import BlokusError, ConfigError
from blokus_jax.rollout import max_game_length

_FORCE_FLAG = "xla_force_host_platform_device_count"


# ------------------------------------------------------------------------------------------------------ start-up
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
                f"the count before JAX runs (blokus_agents.training.scaffold.use_cpu_cores right after import)"
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


# ------------------------------------------------------------------------------------------------------ optimiser
class LinearDecayState(NamedTuple):
    """State of `LinearDecay`: optimiser steps taken and the horizon in updates."""

    count: jax.Array
    horizon: jax.Array


#: The largest horizon the schedule's `int32` state holds: longer (open-ended) runs saturate there.
MAX_HORIZON = MAX_UPDATES


@dataclass(frozen=True)
class LinearDecay:
    """An optax stateful schedule: the learning rate of update `u = count // steps_per_update` is
    `optax.linear_schedule` from `init_value` to `end_value` over the fraction `u / horizon` of the run, so
    it is constant within an update. The horizon lives in the schedule's state (not in the compiled function), so a
    time-limited run can fit it after measuring its speed without recompiling (`with_lr_horizon`)."""

    init_value: float
    end_value: float
    steps_per_update: int
    horizon: int

    def init(self) -> LinearDecayState:
        horizon = min(int(self.horizon), MAX_HORIZON)
        return LinearDecayState(jnp.zeros([], jnp.int32), jnp.asarray(horizon, jnp.int32))

    def update(self, state: LinearDecayState, **extra_args) -> LinearDecayState:
        return state._replace(count=optax.safe_increment(state.count))

    def __call__(self, state: LinearDecayState, **extra_args) -> jax.Array:
        return self.at(state.count // self.steps_per_update, state.horizon)

    def at(self, update: jax.Array, horizon: jax.Array) -> jax.Array:
        """The learning rate of update number `update` with `horizon` updates."""
        progress = jnp.minimum(update / jnp.maximum(horizon, 1), 1.0)
        return optax.linear_schedule(self.init_value, self.end_value, transition_steps=1)(progress)


def lr_schedule(config: RunConfig) -> LinearDecay:
    """The `LinearDecay` of `config` (`learning_rate` down to `final_lr_fraction` of it over
    `num_updates` updates of `optimizer_steps_per_update` optimiser steps)."""
    return LinearDecay(
        config.learning_rate,
        config.learning_rate * config.final_lr_fraction,
        config.optimizer_steps_per_update,
        config.num_updates,
    )


def make_optimizer(config: RunConfig) -> optax.GradientTransformation:
    """Gradient clipping by global norm, Adam, and the learning rate of `lr_schedule`, injected as a
    hyperparameter (read it as `opt_state.hyperparams`). Any config with `learning_rate`, `final_lr_fraction`,
    `max_grad_norm`, `optimizer_steps_per_update` and `num_updates` will do (PPO's and AlphaZero's)."""

    def adam(learning_rate):
        return optax.chain(
            optax.clip_by_global_norm(config.max_grad_norm),
            optax.scale_by_adam(eps=1e-5),
            optax.scale_by_learning_rate(learning_rate),
        )

    return optax.inject_hyperparams(adam)(learning_rate=lr_schedule(config))


def lr_horizon(runner: Any) -> int:
    """Updates over which `runner`'s learning rate decays (kept in the schedule's state inside `opt_state`)."""
    return int(runner.opt_state.hyperparams_states["learning_rate"].horizon)


def with_lr_horizon(runner: Any, horizon: int) -> Any:
    """`runner` with its learning rate decaying over `horizon` updates (capped at `MAX_HORIZON`) from now
    on, placed like the old value. Every process of a multi-process run must pass the same `horizon`."""
    states = dict(runner.opt_state.hyperparams_states)
    old = states["learning_rate"]
    value = np.asarray(min(int(horizon), MAX_HORIZON), np.int32)
    states["learning_rate"] = old._replace(horizon=jax.device_put(value, old.horizon.sharding))
    return runner.replace(opt_state=runner.opt_state._replace(hyperparams_states=states))


# ------------------------------------------------------------------------------------------- mesh and shardings
def make_mesh(devices: list | None = None) -> Mesh:
    """A one-axis (`"data"`) mesh over `devices` (default: every device of every process, `jax.devices()`) for
    data-parallel training."""
    devices = jax.devices() if devices is None else list(devices)
    return Mesh(np.asarray(devices), ("data",))


def default_mesh(num_envs: int) -> Mesh | None:
    """The mesh a run of `num_envs` games uses by default. With several processes: every device of every process
    (`num_envs` must split evenly over them, else `ConfigError`). With one: the largest number of local devices
    that `num_envs` splits evenly over, or `None` (plain single-device jit) when that is one."""
    if jax.process_count() > 1:
        check_split(num_envs, jax.device_count())
        return make_mesh()
    count = max(d for d in range(1, jax.local_device_count() + 1) if num_envs % d == 0)
    return make_mesh(jax.local_devices()[:count]) if count > 1 else None


def check_split(num_envs: int, devices: int) -> None:
    """Raise `ConfigError` unless `num_envs` games split evenly over `devices` devices."""
    if num_envs % devices:
        where = f" of {jax.process_count()} processes" if jax.process_count() > 1 else ""
        raise ConfigError(
            f"num_envs (--num-envs) {num_envs} must be a multiple of the {devices} devices{where} to split the games "
            f"evenly; e.g. --num-envs {devices * max(1, round(num_envs / devices))}"
        )


#: Runner fields that hold per-game data and are split across devices along their leading (games) axis.
SPLIT_FIELDS = ("env_state", "buffer")


def runner_shardings(runner: Any, mesh: Mesh) -> Any:
    """Shardings of a runner (`blokus_agents.training.ppo.Runner`, or `blokus_agents.training.alphazero.AZRunner`) on
    `mesh`: the per-game fields (`SPLIT_FIELDS`: the games' states, AlphaZero's replay buffer) split along their games
    axis, the rest (parameters, optimiser state, key, counter) replicated. Returns a pytree of `NamedSharding` with the
    runner's structure."""
    split, whole = NamedSharding(mesh, PartitionSpec("data")), NamedSharding(mesh, PartitionSpec())

    def place(name: str) -> Any:
        sharding = split if name in SPLIT_FIELDS else whole
        return jax.tree.map(lambda _: sharding, getattr(runner, name))

    return runner.replace(**{name: place(name) for name in runner.__dataclass_fields__})


# --------------------------------------------------------------------------------------- parts and jit wiring
class Parts(NamedTuple):
    """What a trainer is built from: the environment of the config, the shared network and the optimiser."""

    env: Env
    network: PolicyValueNet
    optimizer: optax.GradientTransformation


def make_parts(config: RunConfig, mesh: Mesh | None) -> Parts:
    """The `Parts` of `config` (any trainer config); `ConfigError` when its games do not split evenly over
    `mesh`."""
    if mesh is not None:
        check_split(config.num_envs, mesh.size)
    env = make(config.variant, reward=config.reward)
    return Parts(env, config_network(config, env), make_optimizer(config))


def fresh_runner_fields(parts: Parts, num_envs: int, key: jax.Array) -> dict[str, Any]:
    """The fields every runner starts with: `num_envs` new games, fresh network parameters and optimiser state,
    the PRNG key to train on and the update counter 0 (a trainer adds its own, e.g. AlphaZero's buffer).

    Args:
        parts: The trainer's environment, network and optimiser.
        num_envs: Games played side by side.
        key: The PRNG key; the games and the parameters are drawn from one half of its split, the other half is
            the key to train on.

    Returns:
        `params`, `opt_state`, `env_state`, `key` and `update`, by name.
    """
    init_key, key = jax.random.split(key)
    env_state = jax.vmap(parts.env.init)(jax.random.split(init_key, num_envs))
    obs = jax.vmap(parts.env.observe)(jax.tree.map(lambda x: x[:1], env_state))
    params = parts.network.init(init_key, obs)
    return dict(
        params=params, opt_state=parts.optimizer.init(params), env_state=env_state, key=key, update=jnp.int32(0)
    )


def param_norm(params: Any) -> jax.Array:
    """The global L2 norm of `params`, a metric of every update: non-finite exactly when training diverged (a
    parameter is NaN or infinite, or so large that its square overflows)."""
    return optax.tree.norm(params)


class Jitted(NamedTuple):
    """A trainer's compiled entry points (see `jit_trainer`)."""

    init: Callable
    update: Callable
    train: Callable
    shardings: Any


def jit_trainer(
    init: Callable[[jax.Array], Any], update: Callable[[Any], tuple[Any, dict]], num_updates: int, mesh: Mesh | None
) -> Jitted:
    """Jit a trainer's pure `init(key) -> runner` and `update(runner) -> (runner, metrics)`: `init` and `update`
    place the runner as `runner_shardings` says on `mesh` (metrics replicated); `update` *donates* its runner (pass a
    runner once; use the one it returns: the old one's buffers are reused, so e.g. the replay buffer is updated in
    place instead of copied every update); `train(key)` runs `num_updates` updates from `init(key)` in one
    `lax.scan` (metrics stacked per update). Without a mesh, plain `jax.jit`.

    Args:
        init: The pure `init(key) -> runner`.
        update: The pure `update(runner) -> (runner, metrics)`.
        num_updates: The updates `train` runs.
        mesh: The device mesh to split the runner over, or `None`.

    Returns:
        `Jitted(init, update, train, shardings)`; `shardings` is the runner's (`None` without a mesh).
    """

    def train(key: jax.Array) -> tuple[Any, dict]:
        return jax.lax.scan(lambda runner, _: update(runner), init(key), None, num_updates)

    if mesh is None:
        return Jitted(jax.jit(init), jax.jit(update, donate_argnums=0), jax.jit(train), None)
    shardings = runner_shardings(jax.eval_shape(init, jax.random.PRNGKey(0)), mesh)
    outputs = (shardings, NamedSharding(mesh, PartitionSpec()))
    return Jitted(
        jax.jit(init, out_shardings=shardings),
        jax.jit(update, out_shardings=outputs, donate_argnums=0),
        jax.jit(train, out_shardings=outputs),
        shardings,
    )


# ------------------------------------------------------------------------------------------------ memory
class ReplayWarning(UserWarning):
    """An AlphaZero config whose replay ring may overwrite finished games before any optimiser step sees them."""


def _nbytes(tree: Any) -> int:
    return sum(int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize for x in jax.tree.leaves(tree))


def estimate_memory(config: RunConfig, eval_games: int = 0) -> dict[str, tuple[int, tuple[str, ...]]]:
    """A lower estimate of the device memory (bytes) that training `config` needs, by part: `{part: (bytes,
    fields that scale it)}`. Counts the arrays the update keeps alive at once (games, rollout or replay buffer,
    search tree and a teacher's, network activations and logits of a batch); XLA's temporaries come on top, so a
    run that is refused for memory would certainly not fit. `eval_games` adds the evaluation's games, played all
    at once. Shapes come from `jax.eval_shape` (nothing is allocated)."""
    env = make(config.variant)
    state = jax.eval_shape(env.init)
    state_bytes = _nbytes(state)
    obs_bytes = _nbytes(jax.eval_shape(env.observe, state))
    rows, cols = env.board_shape
    actions = env.num_actions
    # activations of one position through the network (kept for the backward pass), and its logits
    forward = 4 * (config.channels * rows * cols * (2 * config.blocks + 2) + config.value_hidden + 2 * actions)
    games = config.num_envs * 2 * state_bytes
    evaluation = {"evaluation games": (eval_games * (2 * state_bytes + forward), ("eval_games",))} if eval_games else {}
    if config.algorithm == "ppo":
        minibatch = config.num_envs * config.num_steps // config.num_minibatches
        return {
            **evaluation,
            "games": (games, ("num_envs",)),
            "rollout": (
                config.num_envs * config.num_steps * (obs_bytes + actions + 32),
                ("num_envs", "num_steps"),
            ),
            "minibatch": (3 * minibatch * forward, ("num_envs", "num_steps", "num_minibatches", "channels")),
        }
    value_dim = config.value_dim(env.num_players)
    buffer = jax.eval_shape(lambda: empty_buffer(env, config.num_envs, config.games_per_env, config.k, value_dim))
    teacher = {}
    if config.teacher:
        try:
            per_game = teacher_memory(env, config.teacher, config.k)
        except AgentSpecError as exc:
            raise ConfigError(f"AZConfig.teacher: {exc}") from exc
        teacher = {"teacher search": (config.num_envs * per_game, ("teacher", "num_envs"))}
    return {
        **evaluation,
        **teacher,
        "games": (games, ("num_envs",)),
        "search tree": (
            config.num_envs * (config.sims + 1) * (state_bytes + 24 * min(config.k, actions) + 64),
            ("sims", "num_envs"),
        ),
        "search evaluations": (config.num_envs * (forward + 16 * actions), ("num_envs",)),
        "replay buffer": (_nbytes(buffer), ("games_per_env", "num_envs")),
        "training batch": (3 * config.batch_size * (forward + obs_bytes + actions), ("batch_size",)),
    }


def memory_limit() -> tuple[int, str]:
    """`(bytes, what)`: the memory training can use here: the local accelerators' memory (summed), or the
    machine's RAM when JAX runs on the CPU."""
    devices = jax.local_devices()
    stats = [d.memory_stats() or {} for d in devices] if devices[0].platform != "cpu" else []
    if stats and all("bytes_limit" in st for st in stats):
        total = sum(int(st["bytes_limit"]) for st in stats)
        return total, f"the memory of {len(devices)} {devices[0].platform.upper()} device(s)"
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "this machine's RAM"
    except (ValueError, OSError, AttributeError):
        return 2**62, "unknown memory"


def _gb(n: int) -> str:
    return gib(n, mib_below=2**27)


def check_candidates(config: AZConfig, env: Env) -> None:
    """Raise `ConfigError` when an AlphaZero config's `k` (search candidates a node, and the width of the replay
    buffer's targets) is more than the placements of `env`'s variant (its actions but the pass)."""
    placements = env.pass_action
    if config.k > placements:
        raise ConfigError(
            f"AZConfig.k={config.k} is more than the {placements:,} placements of {config.variant!r}; give k at "
            f"most {placements}"
        )


def check_trainable(config: RunConfig, limit: int | None = None, eval_games: int = 0) -> None:
    """Checks a run needs before anything is compiled or written: `config` is a config of a known variant, an
    AlphaZero `k` is at most the variant's number of placements (`check_candidates`), its replay ring keeps games
    until they are trained on (`ReplayWarning` when short games would lose some), and the memory estimate
    (`estimate_memory`) fits the limit.

    Args:
        config: The run's config, a `PPOConfig` or `AZConfig`.
        limit: The memory limit in bytes; default `memory_limit`.
        eval_games: Evaluation games played at once, added to the memory estimate.

    Raises:
        ConfigError: `config` is not a run config or names an unknown variant, an AlphaZero `k` is too large,
            every update would overwrite finished games before they are trained on, `eval_games` is not an int
            in range, or the memory estimate is over the limit (naming the fields and the limit).
    """
    if not isinstance(config, RunConfig):
        raise ConfigError(f"a training config must be a PPOConfig or AZConfig, got {type(config).__name__}")
    name = type(config).__name__
    try:
        env = make(config.variant)
    except BlokusError as exc:
        raise ConfigError(f"{name}.variant: {exc}") from exc
    if config.algorithm == "alphazero":
        check_candidates(config, env)
        length, slots = max_game_length(env.variant), config.games_per_env
        if config.num_steps >= slots * length:
            raise ConfigError(
                f"AZConfig.num_steps={config.num_steps} with games_per_env={slots}: a {config.variant} game takes "
                f"at most {length} moves, so every update would overwrite finished games before any optimiser "
                f"step sees them; give num_steps below {slots * length} or more games_per_env"
            )
        if config.num_steps > (slots - 1) * -(-length // 2):
            warnings.warn(
                f"AZConfig.num_steps={config.num_steps} with games_per_env={slots}: an env that finishes games "
                f"shorter than {config.num_steps / (slots - 1):.0f} moves ({config.variant} games take up to "
                f"{length}) overwrites some before any optimiser step sees them; lower num_steps or raise "
                f"games_per_env",
                ReplayWarning,
                stacklevel=2,
            )
    if isinstance(eval_games, (bool, np.bool_)) or not isinstance(eval_games, (int, np.integer)):
        raise ConfigError(f"eval_games (--eval-games) must be an int, got {_shown(eval_games)}")
    if not 0 <= eval_games <= 2**20:
        raise ConfigError(
            f"eval_games (--eval-games) must be from 0 to {2**20:,} games (0: no evaluation), got {_shown(eval_games)}"
        )
    parts = estimate_memory(config, int(eval_games))
    total = sum(size for size, _ in parts.values())
    available, what = memory_limit() if limit is None else (int(limit), "the given limit")
    if total > available:
        part, (size, fields) = max(parts.items(), key=lambda item: item[1][0])
        values = {f: eval_games if f == "eval_games" else getattr(config, f) for f in fields}
        shown = ", ".join(f"{f}={v:,}" if isinstance(v, int) else f"{f}={v!r}" for f, v in values.items())
        raise ConfigError(
            f"{name} needs at least {_gb(total)} of memory ({part}: {_gb(size)} with {shown}), more than the "
            f"{_gb(available)} of {what}; lower {' or '.join(fields)}"
        )


__all__ = [
    "ReplayWarning",
    "check_candidates",
    "check_trainable",
    "estimate_memory",
    "memory_limit",
    "MAX_HORIZON",
    "SPLIT_FIELDS",
    "Jitted",
    "LinearDecay",
    "LinearDecayState",
    "Parts",
    "agree",
    "any_process",
    "check_distributed",
    "check_split",
    "cpu_cores",
    "default_mesh",
    "fresh_runner_fields",
    "is_primary",
    "jit_trainer",
    "lr_horizon",
    "lr_schedule",
    "make_mesh",
    "make_optimizer",
    "make_parts",
    "param_norm",
    "runner_shardings",
    "start_distributed",
    "use_cpu_cores",
    "with_lr_horizon",
]
