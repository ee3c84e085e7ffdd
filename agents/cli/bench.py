"""`blokus-jax bench`: the environment's throughput on this machine (placements per second)."""

from __future__ import annotations

import argparse

from blokus_agents.cli.common import (
    Handler,
    int_range,
)
from blokus_jax.variants import variant_names

NAME = "bench"
HELP = (
    "measure environment throughput (placements per second) on this machine; on a CPU set "
    "XLA_FLAGS=--xla_force_host_platform_device_count=<cores> to use every core"
)


def setup(parser: argparse.ArgumentParser) -> Handler:
    """Add the arguments of `blokus-jax bench` to `parser`; returns its handler."""
    parser.add_argument(
        "--variants",
        nargs="+",
        default=["duo", "classic"],
        choices=variant_names(),
        help="variants to measure (default duo classic)",
    )
    parser.add_argument(
        "--batch-sizes", nargs="+", type=int_range(1, 1 << 20), default=[1, 1024], help="batch sizes (default 1 1024)"
    )
    parser.add_argument("--steps", type=int_range(1, 1_000_000), default=100, help="steps per timed run (default 100)")
    parser.add_argument(
        "--repeats", type=int_range(1, 1_000), default=3, help="timed runs per configuration (default 3)"
    )

    def run(args: argparse.Namespace) -> int:
        from blokus_jax import benchmark

        rows = benchmark.run_benchmark(args.variants, args.batch_sizes, args.steps, args.repeats)
        benchmark.print_table(rows)
        return 0

    return run
