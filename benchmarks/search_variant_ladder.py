"""One-change experiments of a search agent against Pentobi that are not agent options: ``pentobi_ladder.py``
unchanged (same flags, same results format) with one of these changes to every search built in the process:

- ``--corner-prior BETA``: the network's prior logits plus ``BETA`` times the corner-balance move scores that
  ``mcts`` uses as its prior (:func:`blokus_agents.search.playouts.corner_move_scores`: own attach points made minus own
  lost, plus the opponent's covered; no size term);
- ``--value-scale V``: mctx's completed-Q scale in the network's search
  (:func:`blokus_agents.search.gumbel.make_search`'s ``value_scale``, 0.1 by default): larger values let the values
  overrule the prior after fewer visits;
- ``--fitted-value FILE``: the network's value head replaced by a value fitted on Pentobi's self-play outcomes
  (``benchmarks/fit_value.py``): ``tanh`` of a weighted sum, one weight row a phase, of the mobility, attach points,
  placeable piece squares and squares left of the mover and its opponent and their score difference (two players).

Usage (``P`` the engine command with ``{level}``, as in ``pentobi_ladder.py``)::

    taskset -c 0 python benchmarks/search_variant_ladder.py --corner-prior 0.5 \\
        --agent baseline:duo,k=64,considered=32,playout=local,seconds=2 --budget 0,12,24:489,619,1004 \\
        --engine "$P" --levels 4 --games 100 --results strong_corner_prior05_calibrated_L4.jsonl

Measured in ``benchmarks/notes/2026-12-04-duo-strength-log.md``.
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

from blokus_agents.search import gumbel, playouts
from blokus_agents.search import mcts as search
from blokus_agents.search.move_features import phase_of

sys.path.insert(0, str(Path(__file__).parent))
import pentobi_ladder  # noqa: E402 (the sibling benchmark script)


def with_corner_prior(beta: float):
    """A replacement for :func:`blokus_agents.search.gumbel.network_evaluator` whose logits add ``beta`` times the
    corner-balance move scores."""
    plain = gumbel.network_evaluator

    def network_evaluator(env, apply_fn):
        base, scores = plain(env, apply_fn), playouts.corner_move_scores(env, 0.0)

        def evaluate(params, key, state, root_player):
            logits, value = base(params, key, state, root_player)
            return logits + beta * scores(state), value

        return evaluate

    return network_evaluator


def fitted_value(path: str):
    """A replacement for :func:`blokus_agents.search.gumbel.network_evaluator` whose value is the fitted one of
    ``path`` (a JSON file of ``benchmarks/fit_value.py``) instead of the network's value head."""
    import json

    import jax.numpy as jnp
    from fit_value import value_features  # noqa: E402 (sibling benchmark script)

    data = json.loads(Path(path).read_text())
    weights, phases = jnp.asarray(data["weights"], jnp.float32), tuple(data["phases"])
    plain = gumbel.network_evaluator

    def network_evaluator(env, apply_fn):
        base = plain(env, apply_fn)

        def evaluate(params, key, state, root_player):
            logits, _ = base(params, key, state, root_player)
            return logits, jnp.tanh(jnp.dot(value_features(env, state), weights[phase_of(phases, state)]))

        return evaluate

    return network_evaluator


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--corner-prior", type=float, default=0.0, help="weight of the corner-balance prior scores")
    parser.add_argument("--value-scale", type=float, default=0.1, help="mctx's completed-Q scale in network search")
    parser.add_argument("--fitted-value", default=None, help="JSON weights of benchmarks/fit_value.py")
    args, rest = parser.parse_known_args(argv)
    if args.fitted_value:
        gumbel.network_evaluator = fitted_value(args.fitted_value)
    if args.corner_prior:
        gumbel.network_evaluator = with_corner_prior(args.corner_prior)
    if args.value_scale != 0.1:
        search.make_search = functools.partial(gumbel.make_search, value_scale=args.value_scale)
    return pentobi_ladder.main(rest)


if __name__ == "__main__":
    sys.exit(main())
