"""Recall of strong moves by a search's prior: how often the move a strong player chose ranks among the top 1, 8, 32
and 64 of the scores by which an agent's search picks its candidates (`blokus_agents.move_prior`), on held-out
labelled positions, overall and by phase of the game.

    python benchmarks/prior_recall.py --data benchmarks/data/prior --files 'l6_chunk01*' \
        --spec strong --spec baseline:duo,prior=model --spec mcts:centre=1

The positions come from ``benchmarks/fit_move_model.py collect`` (Pentobi self-play); the files named by ``--files``
must be held out of the model's fit (its ``provenance.held_out_files``). Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys
import time
from pathlib import Path

import jax
import numpy as np

KS = (1, 8, 32, 64)
#: Phases of a game by move number (both colours counted, the first move 1): (label, first, last).
PHASES = (("moves 1-10", 1, 10), ("moves 11-20", 11, 20), ("moves 21+", 21, 10**6))


def scores_of(prior, positions, batch: int = 64) -> np.ndarray:
    """``f32[N, A]`` scores of ``prior`` (``state -> f32[A]``) on every position, with a progress line."""
    fn = jax.jit(jax.vmap(prior))
    out = []
    n = len(positions)
    start = time.perf_counter()
    for lo in range(0, n, batch):
        idx = np.arange(lo, min(n, lo + batch))
        out.append(np.asarray(fn(positions.take(idx).states)))
        done = idx[-1] + 1
        rate = done / (time.perf_counter() - start)
        print(f"\r  {done}/{n} positions, {rate:.0f}/s, ETA {(n - done) / rate:.0f} s", end="", file=sys.stderr)
    print(file=sys.stderr)
    return np.concatenate(out)


def recall_table(scores: np.ndarray, positions) -> dict[str, dict[int, float]]:
    """``{phase label or "all": {k: recall}}`` of ``scores`` against the chosen moves."""
    from blokus_agents.search.move_fit import recall_at

    table = {"all": recall_at(scores, positions.chosen, KS)}
    number = positions.move + 1
    for label, first, last in PHASES:
        mask = (number >= first) & (number <= last)
        if mask.any():
            table[label] = recall_at(scores[mask], positions.chosen[mask], KS)
    return table


def spec_recall(env, spec_or_model, positions) -> dict[str, dict[int, float]]:
    """The recall table of an agent spec's prior, or of a `MoveModel` (its network feature from its own spec)."""
    from blokus_agents import move_prior
    from blokus_agents.search.move_model import MoveModel

    if isinstance(spec_or_model, MoveModel):
        model = spec_or_model
        base = move_prior(model.network, env) if model.network else None

        def prior(state):
            logits = base(state) if base is not None else None
            return model.scores(env.tables, state, logits)

    else:
        prior = move_prior(spec_or_model, env)
    return recall_table(scores_of(prior, positions), positions)


def markdown(rows: dict[str, dict[str, dict[int, float]]], count: int) -> str:
    """The tables of several specs as one Markdown table (``count`` positions)."""
    phases = ["all"] + [label for label, _, _ in PHASES]
    head = "| prior (spec) | phase | " + " | ".join(f"top-{k}" for k in KS) + " |"
    lines = [head, "|---|---|" + "---:|" * len(KS)]
    for spec, table in rows.items():
        for phase in phases:
            if phase in table:
                cells = " | ".join(f"{table[phase][k]:.3f}" for k in KS)
                lines.append(f"| `{spec}` | {phase} | {cells} |")
    return "\n".join(lines) + f"\n\n{count} held-out positions."


def main(argv: list[str] | None = None) -> None:
    import blokus_jax
    from blokus_agents.search.positions import labelled_positions

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="duo")
    parser.add_argument("--data", default="benchmarks/data/prior")
    parser.add_argument("--files", default="l6_chunk01*", help="glob of the held-out record files")
    parser.add_argument("--spec", action="append", help="agent spec (repeat); default: strong and the model")
    args = parser.parse_args(argv)
    env = blokus_jax.make(args.variant)
    paths = [p for p in sorted(Path(args.data).glob("*.blksgf")) if fnmatch.fnmatch(p.name, args.files)]
    if not paths:
        sys.exit(f"no .blksgf files match {args.files!r} in {args.data}")
    positions = labelled_positions(env, paths)
    specs = args.spec or ["strong", f"baseline:{args.variant},prior=model", "mcts"]
    rows = {}
    for spec in specs:
        print(f"{spec}:", file=sys.stderr)
        rows[spec] = spec_recall(env, spec, positions)
    print(markdown(rows, len(positions)))


if __name__ == "__main__":
    main()
