"""Strength on Pentobi's scale at a given search budget: a time-budgeted agent (``strong``, ``seconds=S``) played with
the simulations a move that its budget calibrates to on an idle core, instead of calibrating on the spot as ``blokus-jax
match`` does, so that a loaded core cannot change the budget while the match runs.

Usage (Pentobi built with ``benchmarks/build_pentobi.sh``; ``P`` the engine command with ``{level}``)::

    # 1. on an idle core: what the budget calibrates to (prints a --budget value)
    taskset -c 0 python benchmarks/pentobi_ladder.py --agent strong --calibrate
    # 2. the match, pinned to one core, at that budget
    taskset -c 0 python benchmarks/pentobi_ladder.py --agent strong --budget 0,12,24:537,780,1200 \\
        --engine "$P" --levels 4 --games 100 --results strong_L4.jsonl

``--budget STARTS:SIMS`` is a :class:`~blokus_agents.search.mcts.Budget` (phase starts in pieces on the board, then the
simulations of each phase). The agent plays one game at a time as ``match`` plays it (``blokus_agents.one_game``): on
the clock, its search plans for what ``S`` affords at the pace of its first simulations, with a tree of
``CLOCK_CAP`` times the budget, so keep the match's core otherwise idle. ``--no-clock`` plays the budget's fixed
simulations instead (the ladder's rows measured before the clock). Results are the JSON lines of ``blokus-jax match``
(resumable), summarised the same way.
"""

from __future__ import annotations

import argparse
import sys

import blokus_jax
from blokus_agents import resolve_agent
from blokus_agents.engines import ladder
from blokus_agents.search import mcts as search


def parse_budget(text: str) -> search.Budget:
    """``"0,12,24:537,780,1200"`` -> ``Budget((0, 12, 24), (537, 780, 1200))``; raises ``ValueError``."""
    starts, _, sims = text.partition(":")
    budget = search.Budget(tuple(int(x) for x in starts.split(",")), tuple(int(x) for x in sims.split(",")))
    if not budget.starts or budget.starts[0] != 0 or len(budget.starts) != len(budget.sims):
        raise ValueError(f"--budget {text!r}: give phase starts from 0, a colon, and one count per phase")
    if list(budget.starts) != sorted(set(budget.starts)) or min(budget.sims) < 1:
        raise ValueError(f"--budget {text!r}: starts must increase and every count must be positive")
    return budget


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="strong", help="a time-budgeted agent spec (strong, ...,seconds=S)")
    parser.add_argument("--variant", default="duo")
    parser.add_argument("--calibrate", action="store_true", help="print the budget the agent calibrates to here")
    parser.add_argument("--budget", type=parse_budget, help="STARTS:SIMS, e.g. 0,12,24:537,780,1200")
    parser.add_argument("--engine", help="the GTP engine command, with {level}")
    parser.add_argument("--levels", default="4", help="comma-separated levels")
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--results", help="JSON lines of the games (resumable)")
    parser.add_argument("--games-dir", help="a folder to save every game's .blksgf record in")
    parser.add_argument("--no-clock", action="store_true", help="play the budget's fixed simulations (no clock)")
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        help="the agent's seed (a second, independent set of games: also change the engine's)",
    )
    args = parser.parse_args(argv)
    env = blokus_jax.make(args.variant)
    if args.calibrate:
        resolve_agent(args.agent, env)
        budget = search.calibrated_budgets()[-1]
        print(f"--budget {','.join(map(str, budget.starts))}:{','.join(map(str, budget.sims))}")
        return 0
    if args.budget is None or args.engine is None:
        parser.error("give --budget and --engine (or --calibrate)")
    budget = args.budget
    search.calibrate_budget = lambda *_, **__: budget  # the agent's seconds= budget resolves to this one
    if args.no_clock:
        ladder.one_game = lambda policy: policy  # the match plays the policy's fixed budget
    levels = [int(x) for x in args.levels.split(",")]
    games = ladder.play_match(
        args.agent,
        args.engine,
        args.games,
        args.variant,
        levels=levels,
        seed=args.seed,
        results=args.results,
        games_dir=args.games_dir,
    )
    summaries, elo = ladder.summarize(args.variant, games)
    for row in summaries:
        if row.players == 2:
            print(f"level {row.level}: {row.games} games, win rate {row.win_rate:.3f}")
        else:  # the agent in one seat, the engine in the others: no win rate, no Elo
            print(
                f"level {row.level}: {row.games} games, first-place share {row.win_rate:.3f} "
                f"[{row.interval[0]:.2f}, {row.interval[1]:.2f}] (an equal player: {row.equal_share:.2f}), "
                f"mean rank {row.mean_rank:.2f}, margin over the best opponent {row.margin:+.1f}"
            )
    if elo is not None:
        print(f"Elo on Pentobi's {args.variant} scale: {elo[0]:.0f} [{elo[1]:.0f}, {elo[2]:.0f}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
