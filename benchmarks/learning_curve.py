"""Learning curves on Pentobi's scale: every checkpoint of a training run plays Pentobi's levels the way
``blokus-jax match`` plays them (one game at a time, alternating colours, the engine's book on), and the checkpoints'
Elo ratings are drawn against the run's wall-clock time and environment steps.

Usage (Pentobi built with ``benchmarks/build_pentobi.sh``; ``P`` the engine command with ``{level}``)::

    P="pentobi-gtp --game duo --level {level} --seed 1 --threads 1 --noresign --quiet --book .../book_duo.blksgf"
    taskset -c 1 python benchmarks/learning_curve.py runs/ppo_duo --engine "$P" --levels 1,2 --games 50 \\
        --out benchmarks/data/curves/ppo_duo --plot docs/img/curve_ppo_duo.png

A PPO checkpoint plays its network alone (the argmax of its masked policy); an AlphaZero checkpoint plays its
network's search with ``--sims N`` (default: the network alone, so both algorithms are on one footing). Each
checkpoint's games are JSON lines in ``OUT/step_N.jsonl`` (the format of ``blokus-jax match --results``, so an
interrupted curve resumes), and ``OUT/curve.json`` lists the points: update, env steps, training seconds, the
score against each level, and the maximum-likelihood Elo with its 95 % interval. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
from pathlib import Path

import jax

from blokus_agents.core.policies import network_policy, register_agent
from blokus_agents.engines import ladder, rating
from blokus_agents.players import checkpoint_index, checkpoint_read
from blokus_agents.players.networks import config_network
from blokus_agents.search.mcts import NETWORK_SETTINGS, network_search_policy


def run_clock(run_dir: Path) -> dict[int, tuple[int, float]]:
    """``{update: (env_steps, time_s)}`` from the run's ``metrics.jsonl`` (the rows that have both)."""
    clock: dict[int, tuple[int, float]] = {}
    path = run_dir / "metrics.jsonl"
    if path.is_file():
        for line in path.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(row, dict) and {"update", "env_steps", "time_s"} <= set(row):
                clock[int(row["update"])] = (int(row["env_steps"]), float(row["time_s"]))
    return clock


def checkpoint_agent(run_dir: Path, step: int, env, sims: int):
    """The player of checkpoint ``step`` (0 without a checkpoint 0: the run's untrained network, as its seed
    initialises it; a run started with ``--init-from`` saves its starting network as checkpoint 0): its network's
    argmax, or (``sims > 0``) its network's search."""
    if step == 0 and 0 not in checkpoint_index.saved_steps(run_dir):
        config = checkpoint_read.load_config(run_dir)
        network = config_network(config, env)
        params = network.init(jax.random.PRNGKey(config.seed), env.observe(env.init()))
    else:
        config, params = checkpoint_read.load_params(run_dir, step)
        network = config_network(config, env)
    if sims > 0:
        settings = NETWORK_SETTINGS.replace(sims=sims, gumbel_scale=0.0)
        return network_search_policy(env, network.apply, params, settings)
    return network_policy(env, network, jax.device_get(params), greedy=True)


def curve_point(variant: str, step: int, clock: dict, by_level: dict) -> dict:
    """One row of ``curve.json``: the checkpoint's clock, its score per level and its Elo (95 % interval)."""
    points, scores = [], {}
    for level, games in sorted(by_level.items()):
        done = [g for g in games if not g.failed]
        wins = sum(g.share for g in done)
        points.append((rating.level_elo(variant, level), wins, len(done)))
        scores[str(level)] = {"score": wins / len(done) if done else None, "games": len(done)}
    elo, low, high = rating.ladder_elo(points)
    env_steps, seconds = clock.get(step, (None, None))
    return {
        "update": step,
        "env_steps": env_steps,
        "time_s": seconds,
        "levels": scores,
        "elo": elo,
        "low": low,
        "high": high,
    }


def plot(rows: list[dict], path: Path, title: str) -> None:
    """Elo against training minutes and against env steps, with 95 % intervals, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    shown = [r for r in rows if r["time_s"] is not None and math.isfinite(r["elo"])]
    for ax, key, label, scale in (
        (axes[0], "time_s", "training minutes", 60.0),
        (axes[1], "env_steps", "environment steps", 1.0),
    ):
        x = [r[key] / scale for r in shown]
        y = [r["elo"] for r in shown]
        lo = [r["elo"] - max(r["low"], r["elo"] - 400) for r in shown]
        hi = [min(r["high"], r["elo"] + 400) - r["elo"] for r in shown]
        ax.errorbar(x, y, yerr=[lo, hi], marker="o", capsize=3)
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("Elo (Pentobi's scale; level 1 = 1000)")
    fig.suptitle(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a 'blokus-jax train' run directory")
    parser.add_argument("--engine", required=True, help="the GTP engine command, with {level}")
    parser.add_argument("--levels", default="1", help="levels, e.g. 1,2 or 1-3")
    parser.add_argument("--games", type=int, default=50, help="games per checkpoint and level")
    parser.add_argument("--steps", help="comma-separated updates to play (default: every checkpoint)")
    parser.add_argument(
        "--initial",
        action="store_true",
        help="also play the untrained network (update 0, as the seed initialises it) as the curve's start; a run "
        "started with --init-from has its start as checkpoint 0 already",
    )
    parser.add_argument("--sims", type=int, default=0, help="AlphaZero checkpoints: search with N simulations")
    parser.add_argument("--out", type=Path, required=True, help="folder of the results (resumable)")
    parser.add_argument("--plot", type=Path, help="write the curve here (PNG)")
    parser.add_argument("--title", default=None)
    args = parser.parse_args(argv)
    checkpoint_index.require_run(args.run, "a learning curve needs a trained run", "give a 'blokus-jax train' --out")
    config = checkpoint_read.load_config(args.run)
    levels = rating.parse_levels(args.levels)
    steps = checkpoint_index.saved_steps(args.run)
    if args.steps:
        wanted = {int(s) for s in args.steps.split(",")}
        steps = [s for s in steps if s in wanted]
    if args.initial and 0 not in steps:  # a warm-started run saved its start as checkpoint 0 already
        steps = [0, *steps]
    if not steps:
        sys.exit(f"no checkpoints to play in {args.run}")
    clock = {0: (0, 0.0), **run_clock(args.run)}
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    print("| update | env steps | minutes | " + " | ".join(f"L{lv}" for lv in levels) + " | Elo (95 %) |")
    print("|---:|---:|---:|" + "---:|" * len(levels) + "---:|")
    for step in steps:
        name = f"checkpoint_{step}"
        register_agent(name, lambda env, s=step: checkpoint_agent(args.run, s, env, args.sims), replace=True)
        by_level = ladder.play_match(
            name,
            args.engine,
            args.games,
            variant=config.variant,
            levels=levels,
            results=args.out / f"step_{step}.jsonl",
            progress=True,
        )
        row = curve_point(config.variant, step, clock, by_level)
        rows.append(row)
        minutes = "" if row["time_s"] is None else f"{row['time_s'] / 60:.1f}"
        cells = " | ".join(f"{row['levels'][str(lv)]['score']:.2f}" for lv in levels)
        env_steps = "" if row["env_steps"] is None else row["env_steps"]
        print(
            f"| {step} | {env_steps} | {minutes} | {cells} | {row['elo']:.0f} ({row['low']:.0f}-{row['high']:.0f}) |",
            flush=True,
        )
    meta = {
        "run": str(args.run),
        "engine": args.engine,
        "games": args.games,
        "levels": levels,
        "sims": args.sims,
        "algorithm": config.algorithm,
        "command": shlex.join(["python", *sys.argv]),
        "points": rows,
    }
    (args.out / "curve.json").write_text(json.dumps(meta, indent=1) + "\n")
    if args.plot:
        plot(rows, args.plot, args.title or f"{config.algorithm} on {config.variant}: {args.run.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
