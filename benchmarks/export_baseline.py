"""Export a training run as a shipped baseline agent (``baseline:NAME``): writes ``NAME.msgpack`` and ``NAME.json``
into ``agents/players/baselines/`` (or ``--out``) with :func:`blokus_agents.players.baselines.export_baseline`, then
loads it back.

    python benchmarks/export_baseline.py runs/duo duo \\
        --command "blokus-jax train --variant duo --minutes 60 --out runs/duo"

Record the baseline's strength in ``benchmarks/RESULTS.md`` (``blokus-jax eval --agents baseline:NAME minimax``).
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, export the baseline and print its metadata; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="the training run directory (the --out of 'blokus-jax train')")
    parser.add_argument("name", help="the baseline's name: lowercase letters, digits, '_' or '-' (e.g. duo)")
    parser.add_argument("--command", required=True, help="the exact training command that produced the run")
    parser.add_argument(
        "--sims",
        type=int,
        help="default search budget: simulations per move (default: an alphazero run's self-play sims, far below "
        "what it should play at, so give it; 0 for ppo, no search)",
    )
    parser.add_argument(
        "--mix",
        type=float,
        default=0.0,
        help="default weight of playout results in the leaf values (0-1; only with --sims > 0)",
    )
    parser.add_argument("--step", type=int, help="checkpoint (update number) to export (default: the newest)")
    parser.add_argument("--source-run", help="how to name the run in the metadata (default: RUN_DIR)")
    parser.add_argument("--notes", default="", help="free text stored with the baseline")
    parser.add_argument("--out", help="output directory (default: the package directory agents/baselines)")
    parser.add_argument("--force", action="store_true", help="replace a baseline of the same name")
    args = parser.parse_args(argv)

    from blokus_agents.players.baselines import export_baseline
    from blokus_jax.errors import BlokusError

    try:
        path = export_baseline(
            args.run_dir,
            args.name,
            args.out,
            command=args.command,
            sims=args.sims,
            step=args.step,
            source_run=args.source_run,
            notes=args.notes,
            mix=args.mix,
            overwrite=args.force,
        )
    except (BlokusError, ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    meta = json.loads(path.read_text())
    size = path.with_suffix(".msgpack").stat().st_size
    print(f"wrote {path} and {path.with_suffix('.msgpack').name} ({size:,} bytes)")
    print(json.dumps({k: v for k, v in meta.items() if k != "train_config"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
