"""Strength against budget: head-to-head arena matches between agent specs, one line of JSON per match.

    python benchmarks/scaling.py --variant duo --games 100 \\
        --pair "mcts:sims=256" "mcts:sims=128" --pair "mcts:sims=512" "mcts:sims=256" --out scaling.jsonl
    python benchmarks/scaling.py --table scaling.jsonl            # print the Markdown table of a results file
    python benchmarks/scaling.py --plot scaling.jsonl docs/img/search_scaling.png   # strength against budget

Each ``--pair A B`` plays ``--games`` seat-rotated games of A against B in the arena (:func:`play_match`, with
``--opening`` shared random moves per seat rotation so that deterministic agents play different games) and appends
``{"variant", "a", "b", "games", "win_rate", "ci", "margin", "seconds", "opening", "seed"}`` to ``--out`` (and
prints it), with ``"calibrated_sims"`` where a ``seconds=`` budget (``strong`` included) was calibrated in the process:
the simulations those budgets came to on this machine. Matches between the same pair with different seeds can be
pooled with ``--table``, which sums the games of identical (variant, A, B) rows. Strength numbers at a fixed number
of simulations do not depend on the machine's load; ``seconds`` and calibrated budgets do.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict


def run_pair(variant: str, a: str, b: str, games: int, seed: int, opening: int, progress: bool) -> dict:
    """Play one match and return its JSON row."""
    import jax
    import numpy as np

    from blokus_agents.core.policies import resolve_agent
    from blokus_agents.engines.arena import play_match, wilson_interval
    from blokus_agents.search.mcts import calibrated_sims
    from blokus_jax import make

    env = make(variant)
    policies = [resolve_agent(a, env), resolve_agent(b, env)]
    start = time.perf_counter()
    result = play_match(env, policies, [a, b], games, jax.random.key(seed), progress=progress, opening=opening)
    seconds = time.perf_counter() - start
    wins = float(result.credit[:, 0].sum())
    lo, hi = wilson_interval(wins, result.games)
    calibrated = {"calibrated_sims": calibrated_sims()} if calibrated_sims() else {}
    return {
        "variant": variant,
        "a": a,
        "b": b,
        "games": result.games,
        "wins": wins,
        "win_rate": round(wins / result.games, 4),
        "ci": [round(lo, 3), round(hi, 3)],
        "margin": round(float(np.mean(result.margins(0))), 2),
        "seconds": round(seconds, 1),
        "opening": opening,
        "seed": seed,
        **calibrated,
    }


def table(path: str) -> str:
    """A Markdown table of the rows in ``path``, pooling rows of the same variant and pair."""
    from blokus_agents.engines.arena import wilson_interval

    pooled: dict[tuple, dict] = defaultdict(lambda: {"games": 0, "wins": 0.0, "margin": 0.0, "seconds": 0.0})
    with open(path) as f:
        for line in f:
            if not line.strip():
                continue
            row = json.loads(line)
            p = pooled[(row["variant"], row["a"], row["b"])]
            p["games"] += row["games"]
            p["wins"] += row["wins"]
            p["margin"] += row["margin"] * row["games"]
            p["seconds"] += row["seconds"]
    lines = [
        "| variant | agent A | agent B | games | A's win rate | 95 % CI | A's mean margin |",
        "|---|---|---|---:|---:|---:|---:|",
    ]
    for (variant, a, b), p in pooled.items():
        lo, hi = wilson_interval(p["wins"], p["games"])
        lines.append(
            f"| {variant} | `{a}` | `{b}` | {p['games']} | {p['wins'] / p['games']:.3f} | [{lo:.2f}, {hi:.2f}] "
            f"| {p['margin'] / p['games']:+.1f} |"
        )
    return "\n".join(lines)


def _sims(spec: str) -> int:
    """The ``sims=`` of an ``mcts:`` spec (128, the default, when absent)."""
    options = dict(item.split("=", 1) for item in spec.partition(":")[2].split(",") if "=" in item)
    return int(options.get("sims", 128))


def _without_sims(spec: str) -> str:
    """An agent spec with its ``sims=`` option removed (the agent's settings apart from its budget)."""
    name, _, options = spec.partition(":")
    rest = ",".join(x for x in options.split(",") if x and not x.startswith("sims="))
    return f"{name}:{rest}" if rest else name


def plot(path: str, out: str) -> None:
    """Strength against budget: A's win rate (with its interval) against the simulations of A, from the pooled rows
    of ``path``, written to ``out``. Matches of a setting against itself at another budget (``2N`` against ``N``)
    form one line per setting, the budget-against-budget curve; every other opponent B gets a line of its own."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from blokus_agents.engines.arena import wilson_interval

    series: dict[tuple[str, str], list[tuple[int, float, float, float]]] = defaultdict(list)
    pooled: dict[tuple, list[float]] = defaultdict(lambda: [0.0, 0])
    with open(path) as f:
        for line in f:
            if line.strip():
                row = json.loads(line)
                p = pooled[(row["a"], row["b"])]
                p[0] += row["wins"]
                p[1] += row["games"]
    # Options every agent of the file shares are said once, under the title; each label keeps what differs.
    option_sets = [set(spec.partition(":")[2].split(",")) - {""} for pair in pooled for spec in pair]
    shared = {o for o in set.intersection(*option_sets) if not o.startswith("sims=")} if option_sets else set()

    def short(spec: str) -> str:
        name, _, options = _without_sims(spec).partition(":")
        rest = [o for o in options.split(",") if o and o not in shared]
        return f"{name}:{','.join(rest)}" if rest else name

    for (a, b), (wins, games) in pooled.items():
        lo, hi = wilson_interval(wins, games)
        rest = short(a)
        same = _without_sims(b) == _without_sims(a)
        against = f"itself at {_sims(b) / _sims(a):g}x the budget" if same else f"{short(b)} at {_sims(b)}"
        series[(rest, against)].append((_sims(a), wins / games, lo, hi))
    fig, ax = plt.subplots(figsize=(7.5, 5.2))
    for (rest, b), points in sorted(series.items()):
        points.sort()
        x = [p[0] for p in points]
        y = [p[1] for p in points]
        err = [[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]]
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=f"{rest} vs {b}")
    ax.axhline(0.5, color="grey", lw=0.8, ls="--")
    ax.axhline(0.6, color="green", lw=0.8, ls=":", label="Agents V target for 2N against N (0.60)")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("simulations per move of agent A")
    ax.set_ylabel("A's win rate (95 % interval)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=1, frameon=False)
    title = "Duo: strength against search budget (seat-rotated arena, --opening 2)"
    ax.set_title(f"{title}\nevery agent: {','.join(sorted(shared)) or 'its own settings'}", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, play the matches (or print a table), return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", default="duo")
    parser.add_argument("--pair", nargs=2, action="append", metavar=("A", "B"), default=[], help="agent specs")
    parser.add_argument("--games", type=int, default=100, help="games per pair (rounded up to the seat rotation)")
    parser.add_argument("--opening", type=int, default=2, help="shared random opening moves (default 2)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="append the JSON rows to this file")
    parser.add_argument("--table", metavar="FILE", help="print the Markdown table of a results file and exit")
    parser.add_argument("--plot", nargs=2, metavar=("FILE", "PNG"), help="plot a results file and exit")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.table:
        print(table(args.table))
        return 0
    if args.plot:
        plot(*args.plot)
        return 0
    if not args.pair:
        parser.error("give at least one --pair A B (or --table FILE)")
    for a, b in args.pair:
        row = run_pair(args.variant, a, b, args.games, args.seed, args.opening, not args.no_progress)
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "a") as f:
                f.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
