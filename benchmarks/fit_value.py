"""A leaf value for two-player search fitted on the outcomes of a strong player's games (a prototype for
``search_variant_ladder.py --fitted-value``).

Every position with a choice in Pentobi's self-play games (``benchmarks/fit_move_model.py collect``) is labelled by
the mover's final result (1 win, 0 tie, -1 loss); the value is ``tanh`` of a weighted sum of 14 board features, one
weight row a phase (the mover's pieces placed, as the move model's phases): for the mover and its opponent, the log
of one plus its legal placements, its attach points, the squares of its pieces that still have a legal placement and
its squares left (each /10), their differences, the score difference /10 and a constant. Fitted by least squares on
the ``tanh`` (optax Adam, a small L2), reported on held-out games against the network's value head.

    python benchmarks/fit_value.py --data benchmarks/data/prior --held-out 'l6_chunk01*' --out value_duo.json
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from blokus_agents.search.move_features import DEFAULT_PHASES, phase_of
from blokus_jax import rules

#: The phases of the weight rows: the move model's (the mover's pieces placed).
PHASES = DEFAULT_PHASES
FEATURES = (
    "own_log_mobility",
    "own_attach/10",
    "own_placeable_squares/10",
    "own_squares_left/10",
    "opp_log_mobility",
    "opp_attach/10",
    "opp_placeable_squares/10",
    "opp_squares_left/10",
    "diff_log_mobility",
    "diff_attach/10",
    "diff_placeable_squares/10",
    "diff_squares_left/10",
    "score_diff/10",
    "bias",
)


def _colour_features(env, state, color):
    tables = env.tables
    sizes = jnp.asarray([p.size for p in tables.variant.pieces], jnp.float32)
    bits = env.placement_bits(state, color)
    per_orientation = rules.popcount(bits).sum(-1)
    own = rules.pack_rows(state.board == (color + 1).astype(jnp.int8))
    occupied = rules.pack_rows(state.board != 0)
    first = rules.is_first_move(state.pieces_placed, color)
    _, corners = rules.forbidden_and_corners(tables, own, occupied, first, color)
    per_piece = jax.ops.segment_sum(
        per_orientation, jnp.asarray(tables.orientation_piece), num_segments=tables.variant.num_pieces
    )
    placeable = jnp.sum((per_piece > 0) * sizes)
    left = jnp.sum(state.remaining[color] * sizes)
    mobility = jnp.log1p(per_orientation.sum().astype(jnp.float32))
    attach = rules.popcount(corners).sum().astype(jnp.float32)
    return jnp.stack([mobility, attach / 10.0, placeable / 10.0, left / 10.0])


def value_features(env, state) -> jax.Array:
    """``f32[len(FEATURES)]`` of one two-player position, seen from the colour to move (pure, jittable)."""
    mover = state.current_color
    opponent = 1 - mover
    mine, theirs = _colour_features(env, state, mover), _colour_features(env, state, opponent)
    score = (state.scores[mover] - state.scores[opponent]).astype(jnp.float32) / 10.0
    return jnp.concatenate([mine, theirs, mine - theirs, jnp.stack([score, jnp.float32(1.0)])])


def main(argv: list[str] | None = None) -> None:
    import optax

    import blokus_jax
    from blokus_agents.players.baselines import load_baseline
    from blokus_agents.search.gumbel import network_side_value
    from blokus_agents.search.positions import labelled_positions

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="duo")
    parser.add_argument("--data", default="benchmarks/data/prior")
    parser.add_argument("--held-out", default="l6_chunk01*")
    parser.add_argument("--network", default="duo", help="the baseline whose value head is compared")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    env = blokus_jax.make(args.variant)
    paths = sorted(Path(args.data).glob("*.blksgf"))
    fit_paths = [p for p in paths if not fnmatch.fnmatch(p.name, args.held_out)]
    held_paths = [p for p in paths if fnmatch.fnmatch(p.name, args.held_out)]
    train = labelled_positions(env, fit_paths)
    held = labelled_positions(env, held_paths, first_game=int(train.game.max()) + 1)
    network, params, _ = load_baseline(args.network, env)

    def one(state):
        _, value = network.apply(params, env.observe(state))
        side_value = network_side_value(value, state.current_player, state.current_player)
        return value_features(env, state), phase_of(PHASES, state), side_value

    batched = jax.jit(jax.vmap(one))

    def build(positions):
        parts = [
            batched(positions.take(np.arange(lo, min(len(positions), lo + 256))).states)
            for lo in range(0, len(positions), 256)
        ]
        return tuple(np.concatenate([np.asarray(p[i]) for p in parts]) for i in range(3))

    x_fit, p_fit, _ = build(train)
    x_held, p_held, v_held = build(held)
    y_fit, y_held = train.outcome, held.outcome
    optimiser = optax.adam(0.02)

    def loss(w):
        pred = jnp.tanh(jnp.sum(x_fit * w[p_fit], -1))
        return jnp.mean((pred - y_fit) ** 2) + 1e-4 * jnp.sum(w**2)

    @jax.jit
    def update(w, state):
        grad = jax.grad(loss)(w)
        updates, state = optimiser.update(grad, state)
        return optax.apply_updates(w, updates), state

    w = jnp.zeros((len(PHASES), len(FEATURES)))
    state = optimiser.init(w)
    for _ in range(args.steps):
        w, state = update(w, state)
    pred = np.tanh(np.sum(x_held * np.asarray(w)[p_held], -1))
    report = {}
    for name, m in (
        ("all", held.move >= 0),
        ("moves 1-10", held.move < 10),
        ("moves 11-20", (held.move >= 10) & (held.move < 20)),
        ("moves 21+", held.move >= 20),
    ):
        report[name] = {
            "fitted_mse": round(float(np.mean((pred[m] - y_held[m]) ** 2)), 3),
            "network_mse": round(float(np.mean((v_held[m] - y_held[m]) ** 2)), 3),
            "constant_mse": round(float(np.mean(y_held[m] ** 2)), 3),
            "fitted_sign": round(float(np.mean(np.sign(pred[m]) == np.sign(y_held[m]))), 3),
            "network_sign": round(float(np.mean(np.sign(v_held[m]) == np.sign(y_held[m]))), 3),
        }
        print(name, report[name])
    out = {
        "variant": args.variant,
        "phases": list(PHASES),
        "features": list(FEATURES),
        "weights": np.asarray(w).round(6).tolist(),
        "fit_positions": len(train),
        "held_out_positions": len(held),
        "held_out": report,
        "command": " ".join(["python", *sys.argv]),
    }
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
