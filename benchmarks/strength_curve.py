"""Strength against time a move on Pentobi's scale: one point per agent row of the ladder (its maximum-likelihood Elo
over the levels it played, with the 95 % interval), at the seconds a move it takes on an idle core.

Usage::

    python benchmarks/strength_curve.py benchmarks/data/ladder/curve.json --plot docs/img/strength_time.png

The JSON lists the rows: ``[{"label": ..., "seconds": 0.85, "files": ["x_L34.jsonl", ...]}, ...]`` (files relative
to the JSON's folder; each holds the JSON lines of ``blokus-jax match``). Prints a markdown table.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from blokus_agents.engines import ladder, rating


def load_games(path: Path) -> dict[int, list[ladder.GameResult]]:
    """The finished games of one results file, by level."""
    by_level: dict[int, list] = {}
    for line in path.read_text().splitlines():
        row = json.loads(line)
        if "game" not in row:
            continue  # the settings line
        by_level.setdefault(int(row["level"]), []).append(ladder.GameResult(**row))
    return by_level


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", type=Path, help="the JSON list of rows")
    parser.add_argument("--variant", default="duo")
    parser.add_argument("--plot", type=Path, help="write the curve here (PNG)")
    args = parser.parse_args(argv)
    points = []
    print("| agent | seconds a move | games | Elo (95 % interval) |\n|---|---:|---:|---:|")
    for row in json.loads(args.rows.read_text()):
        by_level: dict[int, list] = {}
        for name in row["files"]:
            for level, games in load_games(args.rows.parent / name).items():
                by_level.setdefault(level, []).extend(games)
        _, (elo, low, high) = ladder.summarize(args.variant, by_level)
        games = sum(len(g) for g in by_level.values())
        points.append((row["label"], row["seconds"], elo, low, high))
        print(f"| {row['label']} | {row['seconds']:.2f} | {games} | {elo:,.0f} ({low:,.0f}-{high:,.0f}) |")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.2))
        for label, seconds, elo, low, high in points:
            ax.errorbar([seconds], [elo], yerr=[[elo - low], [high - elo]], fmt="o", capsize=4, label=label)
        for level in range(1, 6):
            level_rating = rating.level_elo(args.variant, level)
            ax.axhline(level_rating, color="grey", lw=0.6, ls=":")
            ax.text(2.05, level_rating, f" level {level}", va="center", fontsize=8)
        ax.set_xscale("log")
        ax.set_xlim(0.05, 2.5)
        ax.set_xlabel("mean seconds a move (one core)")
        ax.set_ylabel(f"Elo on Pentobi's {args.variant} scale")
        ax.legend(fontsize=7, loc="upper left")
        ax.grid(alpha=0.3, which="both")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
