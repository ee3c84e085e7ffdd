"""Random-play throughput of blokus-jax: placements per second for batched games on this machine.

    python benchmarks/throughput.py                       # classic + duo, batch 1/64/1024/4096, all CPU cores
    python benchmarks/throughput.py --variants duo --batch-sizes 1024 --steps 128 --repeats 5
    python benchmarks/throughput.py --devices 1           # one device (one XLA:CPU device) only

A placement is one real move (passes excluded) and includes computing the next colour's legal mask and sampling a
uniformly random legal action. Compile time is reported separately; rates are the median of ``--repeats`` timed
runs. On CPU the script exposes one XLA device per core (unless XLA_FLAGS is already set) and splits the batch over
them. The "host loop" row is one game stepped from Python with a device round trip per move, for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import sys


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the benchmark, print the table (and write JSON if asked)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", nargs="+", default=["classic", "duo"])
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 64, 1024, 4096])
    parser.add_argument("--steps", type=int, default=64, help="steps per game per timed run (default 64)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per row; the median is reported")
    parser.add_argument("--devices", type=int, default=0, help="devices to split the batch over (0 = all)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the one-game host-loop baseline")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    args = parser.parse_args(argv)

    if "XLA_FLAGS" not in os.environ:
        os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count() or 1}"
    import jax

    from blokus_jax import make
    from blokus_jax.benchmark import format_table, numpy_baseline, run_benchmark

    devices = jax.local_devices()
    if args.devices:
        devices = devices[: args.devices]
    print(
        f"jax {jax.__version__}, backend {jax.default_backend()}, {len(devices)} device(s): {devices[0].device_kind}",
        file=sys.stderr,
    )
    rows = run_benchmark(args.variants, args.batch_sizes, args.steps, args.repeats, devices=devices)
    if not args.no_baseline:
        rows += [numpy_baseline(make(v)) for v in args.variants]
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
