"""Random-play throughput: batched games on device in the one play loop (`blokus_jax.rollout.make_rollout`).

Used by `benchmarks/throughput.py`, `blokus-jax bench` and the README's demo. Reports placements per second (a
placement = one real move, including the next legal mask and the sampling) with compile time measured separately,
the median of several timed runs.

The figure depends on the machine: the device (a GPU is far faster than a CPU at large batches), on a CPU the cores
this process may use and what else runs on them (a loaded core gives a fraction of the figure), the batch size (small
batches leave the device idle) and the variant (a larger board has more placements to check per move). Each row
therefore names the device and the usable cores, and `print_table` adds the load average and this caveat.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec
from tqdm.auto import tqdm

from blokus_jax.env import Env, State, make
from blokus_jax.rollout import make_rollout

#: Steps of one timed run and timed runs per configuration of `blokus-jax bench` (its `--steps` and `--repeats`
#: defaults) and of the demo's throughput line, so that both report placements/s measured the same way.
BENCH_STEPS, BENCH_REPEATS = 100, 3


def usable_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the OS has one, else all cores)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def machine_note() -> str:
    """One line on what the placements/s figures depend on, with this machine's device, cores and load."""
    device = jax.local_devices()[0]
    try:
        load = f", load average {os.getloadavg()[0]:.1f}"
    except (AttributeError, OSError):
        load = ""
    return (
        f"measured on {len(jax.local_devices())}x {device.device_kind} ({device.platform}), {usable_cores()} of "
        f"{os.cpu_count()} CPU cores usable{load}. placements/s depends on the device, the free cores (other "
        f"processes on them lower it), the batch size and the variant; compile time is not included. Compare only "
        f"figures from the same machine and load."
    )


def make_random_rollout(
    env: Env, batch_size: int, num_steps: int, devices: Sequence[jax.Device] | None = None
) -> Callable[[jax.Array], tuple[State, jax.Array]]:
    """A jitted `rollout(key) -> (final_states, placements)` playing `batch_size` uniformly random games for
    `num_steps` steps each, restarting finished games, and counting real placements (passes excluded).

    With several `devices` the batch is split across them with a `NamedSharding` on the batch axis (the
    computation is per-game, so XLA partitions it without communication). On a CPU, start Python with
    `XLA_FLAGS=--xla_force_host_platform_device_count=<cores>` to get one device per core.

    Args:
        env: The environment.
        batch_size: Games played at once, a multiple of the number of devices.
        num_steps: Steps each game plays (finished games restart at once).
        devices: The devices to split the batch over; default the first local device.

    Returns:
        The jitted `rollout(key)`, which returns the final states and the number of placements played.

    Raises:
        ValueError: `batch_size` is not a multiple of the number of devices.
    """
    devices = list(devices or jax.local_devices()[:1])
    if batch_size % len(devices):
        raise ValueError(f"batch_size {batch_size} must be a multiple of the {len(devices)} devices it is split over")
    sharding = NamedSharding(Mesh(np.asarray(devices), ("batch",)), PartitionSpec("batch"))
    play = make_rollout(
        env,
        batch_size,
        num_steps,
        autoreset=True,
        constrain=partial(jax.lax.with_sharding_constraint, shardings=sharding),
    )

    @jax.jit
    def rollout(key: jax.Array) -> tuple[State, jax.Array]:
        states, actions = play(key)
        return states, jnp.sum(actions != env.pass_action)

    return rollout


def measure(
    env: Env,
    batch_size: int,
    num_steps: int,
    repeats: int = 3,
    seed: int = 0,
    devices: Sequence[jax.Device] | None = None,
) -> dict:
    """Compile once, then time `repeats` rollouts of `make_random_rollout`; return a result row (median
    placements/s, compile seconds).

    Args:
        env: The environment.
        batch_size: Games played at once.
        num_steps: Steps each game plays per rollout.
        repeats: Timed rollouts after the compilation.
        seed: The seed of the PRNG key (rollout `i` uses `fold_in(key, i)`).
        devices: The devices to split the batch over; default the first local device, and the first device alone
            when `batch_size` does not divide evenly over them.

    Returns:
        The row: `variant`, `batch`, `steps`, `device`, `cores`, `placements_per_s` (the median over the repeats),
        `compile_s` and `runs`.
    """
    devices = list(devices or jax.local_devices()[:1])
    if batch_size % len(devices):
        devices = devices[:1]
    rollout = make_random_rollout(env, batch_size, num_steps, devices)
    key = jax.random.key(seed)
    start = time.perf_counter()
    compiled = rollout.lower(key).compile()
    compile_s = time.perf_counter() - start
    rates = []
    for i in range(repeats):
        k = jax.random.fold_in(key, i)
        start = time.perf_counter()
        _, placed = compiled(k)
        placed = int(jax.block_until_ready(placed))
        rates.append(placed / (time.perf_counter() - start))
    return {
        "variant": env.variant.name,
        "batch": batch_size,
        "steps": num_steps,
        "device": f"{len(devices)}x {devices[0].device_kind}",
        "cores": usable_cores(),
        "placements_per_s": statistics.median(rates),
        "compile_s": compile_s,
        "runs": repeats,
    }


def run_benchmark(
    variants: Sequence[str] = ("classic", "duo"),
    batch_sizes: Sequence[int] = (1, 64, 1024, 4096),
    num_steps: int = 64,
    repeats: int = 3,
    devices: Sequence[jax.Device] | None = None,
    progress: bool = True,
) -> list[dict]:
    """Measure every (variant, batch size) pair and return the rows (see `measure`).

    Args:
        variants: The variant names to measure.
        batch_sizes: The batch sizes to measure each variant at.
        num_steps: Steps each game plays per rollout.
        repeats: Timed rollouts per pair.
        devices: The devices to split the batch over (default: all local devices); batches that do not divide
            evenly run on the first device only.
        progress: Show a progress bar.

    Returns:
        One `measure` row per pair, variant by variant.
    """
    devices = list(devices or jax.local_devices())
    jobs = [(v, b) for v in variants for b in batch_sizes]
    rows = []
    for name, batch in tqdm(jobs, desc="throughput", disable=not progress):
        rows.append(measure(make(name), batch, num_steps, repeats, devices=devices))
    return rows


def format_table(rows: Sequence[dict]) -> str:
    """A plain-text (also valid Markdown) table of benchmark rows: the device and the usable CPU cores beside each
    placements/s figure."""
    header = "| variant | batch | device | placements/s | cores | compile s | runs |"
    lines = [header, "|---|---:|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(
            f"| {r['variant']} | {r['batch']} | {r['device']} | {r['placements_per_s']:,.0f} | {r.get('cores', '')} | "
            f"{r['compile_s']:.1f} | {r['runs']} |"
        )
    return "\n".join(lines)


#: The documented reference figures (`docs/benchmarks.md`) that `compare_to_reference` sets a measurement
#: beside: `(variant, batch) -> [(placements/s, where and how it was measured), ...]`.
REFERENCE: dict[tuple[str, int], list[tuple[float, str]]] = {
    ("duo", 1024): [
        (568_352, "2 cores (2x cpu), idle 2-core sandbox, benchmarks/throughput.py, 2026-11-30"),
        (249_509, "1 core, 2-core sandbox running two benchmarks side by side, blokus-jax bench, 2026-12-03"),
    ],
    ("classic", 1024): [
        (502_720, "2 cores (2x cpu), idle 2-core sandbox, benchmarks/throughput.py, 2026-11-30"),
        (184_061, "1 core, 2-core sandbox running two benchmarks side by side, blokus-jax bench, 2026-12-03"),
    ],
    ("duo", 1): [(96_501, "1 core, idle 2-core sandbox, benchmarks/throughput.py, 2026-11-30")],
    ("classic", 1): [(73_091, "1 core, idle 2-core sandbox, benchmarks/throughput.py, 2026-11-30")],
}


def compare_to_reference(rows: Sequence[dict]) -> str:
    """Lines setting each measured row that has documented reference figures (`REFERENCE`) beside them, as a
    ratio (`0.45x`), so that a user sees at once how this machine compares; empty when no row has one."""
    lines = []
    for r in rows:
        for rate, where in REFERENCE.get((r["variant"], r["batch"]), []):
            lines.append(
                f"{r['variant']} at batch {r['batch']}: {r['placements_per_s']:,.0f} placements/s here is "
                f"{r['placements_per_s'] / rate:.2f}x the documented {rate:,.0f} ({where})"
            )
    return "\n".join(["compared with the documented figures (docs/benchmarks.md):", *lines]) if lines else ""


def print_table(rows: Sequence[dict]) -> None:
    """Print `format_table`, `machine_note` (what the figures depend on, on this machine) and
    `compare_to_reference` (this machine beside the documented figures)."""
    print(format_table(rows))
    print(machine_note())
    comparison = compare_to_reference(rows)
    if comparison:
        print(comparison)


def numpy_baseline(env: Env, num_games: int = 1, seed: int = 0) -> dict:
    """Single-game random play with per-step host round trips (unjitted loop around jitted step): the cost a naive
    Python loop pays, for comparison with the batched numbers.

    Args:
        env: The environment.
        num_games: Complete games played one after another (after one untimed warm-up step).
        seed: The seed of the PRNG key.

    Returns:
        A row like `measure`'s (without `steps`): `placements_per_s` over all the games, `compile_s` NaN and
        `runs` the number of games.
    """
    step = jax.jit(env.step)
    sample = jax.jit(env.sample_action)
    key = jax.random.key(seed)
    state = env.init(key)
    jax.block_until_ready(step(state, sample(key, state)))
    placed, start = 0, time.perf_counter()
    for _ in range(num_games):
        state = env.init(key)
        while not bool(state.terminated):
            key, sub = jax.random.split(key)
            action = sample(sub, state)
            placed += int(action) != env.pass_action
            state = step(state, action)
    elapsed = time.perf_counter() - start
    return {
        "variant": env.variant.name,
        "batch": 1,
        "device": "host loop",
        "cores": usable_cores(),
        "placements_per_s": placed / elapsed,
        "compile_s": float("nan"),
        "runs": num_games,
    }
