"""A one-change experiment of ``strong`` against Pentobi: the network's prior logits plus ``--beta`` times the
corner-balance move scores that ``mcts`` uses as its prior (:func:`blokus_agents.bots.corner_move_scores`: own attach
points made minus own lost, plus the opponent's covered; no size term). Every network evaluator built in this process
gets the extra term; the rest is ``pentobi_ladder.py`` unchanged (same flags, same results format).

Usage (``P`` the engine command with ``{level}``, as in ``pentobi_ladder.py``)::

    taskset -c 0 python benchmarks/feature_prior_ladder.py --beta 0.5 \\
        --agent baseline:duo,k=64,considered=32,playout=local,seconds=2 --budget 0,12,24:489,619,1004 \\
        --engine "$P" --levels 4 --games 100 --results strong_corner_prior05_calibrated_L4.jsonl

Measured in ``docs/strength.md`` ("What each change bought"); not an agent option, because it measured weaker.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from blokus_agents import bots, gumbel

sys.path.insert(0, str(Path(__file__).parent))
import pentobi_ladder  # noqa: E402 (the sibling benchmark script)


def with_corner_prior(beta: float):
    """A replacement for :func:`blokus_agents.gumbel.network_evaluator` whose logits add ``beta`` times the
    corner-balance move scores."""
    plain = gumbel.network_evaluator

    def network_evaluator(env, apply_fn):
        base, scores = plain(env, apply_fn), bots.corner_move_scores(env, 0.0)

        def evaluate(params, key, state, root_player):
            logits, value = base(params, key, state, root_player)
            return logits + beta * scores(state), value

        return evaluate

    return network_evaluator


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--beta", type=float, default=0.5, help="weight of the corner-balance scores in the prior")
    args, rest = parser.parse_known_args(argv)
    gumbel.network_evaluator = with_corner_prior(args.beta)
    return pentobi_ladder.main(rest)


if __name__ == "__main__":
    sys.exit(main())
