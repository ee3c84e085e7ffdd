"""Bot strength and speed: a round robin per variant (arena table + head-to-head matrix) and each bot's moves/s.

Usage::

    python benchmarks/strength.py --variants duo classic --agents random greedy corners mobility --games 1000
    python benchmarks/strength.py --variants duo --agents mobility minimax --games 200 --speed-batch 0

Prints a rich/plain table per variant and a markdown block ready for ``benchmarks/RESULTS.md``. Speed is measured on
positions reached by 10 uniformly random moves from the start, at ``--speed-batch`` games (0 skips it); the best
of ``--repeats`` timed calls after one compile call. Nothing here asserts on time.
"""

from __future__ import annotations

import argparse
import sys
import time

import jax

from blokus_agents import resolve_agent
from blokus_agents.cli.common import print_table
from blokus_agents.engines.arena import round_robin
from blokus_agents.players.bots import BOTS
from blokus_jax import make, variant_names


def bot_speed(env, spec: str, batch: int, repeats: int, seed: int = 0) -> dict:
    """Moves per second of agent ``spec`` choosing for ``batch`` games at once; returns a result row."""
    init_keys = jax.random.split(jax.random.key(seed), batch)
    states = jax.vmap(env.init)(init_keys)
    step, sample = jax.jit(jax.vmap(env.step)), jax.jit(jax.vmap(env.sample_action))
    for t in range(10):
        states = step(states, sample(jax.random.split(jax.random.key(seed + 1 + t), batch), states))
    policy = jax.jit(jax.vmap(resolve_agent(spec, env)))
    keys = jax.random.split(jax.random.key(seed + 100), batch)
    start = time.perf_counter()
    jax.block_until_ready(policy(keys, states))
    compile_s = time.perf_counter() - start
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(policy(keys, states))
        best = min(best, time.perf_counter() - start)
    return {
        "variant": env.variant.name,
        "agent": spec,
        "batch": batch,
        "device": jax.devices()[0].platform,
        "moves_per_s": batch / best,
        "compile_s": compile_s,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the round robins and speed measurements described by the command line; returns 0."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variants", nargs="+", default=["duo", "classic"], choices=variant_names())
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["random", "greedy", "corners", "mobility"],
        help=f"bot names {sorted(BOTS)} (options as name:key=value) or checkpoint directories",
    )
    parser.add_argument(
        "--games",
        type=int,
        nargs="+",
        default=[1000],
        help="games per pairing, one value for all variants or one per variant",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--speed-batch", type=int, default=1024, help="batch for the moves/s table (0: skip)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    games = args.games * len(args.variants) if len(args.games) == 1 else args.games
    if len(games) != len(args.variants):
        parser.error(f"--games needs one value or one per variant ({len(args.variants)}), got {args.games}")

    blocks = []
    for variant, n in zip(args.variants, games):
        env = make(variant)
        agents = [a for a in args.agents if not (a.startswith("minimax") and env.num_players != 2)]
        start = time.perf_counter()
        report = round_robin(env, {a: resolve_agent(a, env) for a in agents}, n, seed=args.seed)
        elapsed = time.perf_counter() - start
        print_table(report.rows(), f"{variant}: {n} games per pairing, seed {args.seed}", sys.stdout)
        blocks.append(
            f"### {variant}: {report.games_per_pairing} games per pairing (seat-rotated), seed {args.seed}, "
            f"{elapsed:.0f} s on {jax.devices()[0].platform}\n\n{report.markdown()}"
        )

    if args.speed_batch > 0:
        rows = [
            bot_speed(make(v), a, args.speed_batch, args.repeats)
            for v in args.variants
            for a in args.agents
            if not (a.startswith("minimax") and make(v).num_players != 2)
        ]
        table = [["variant", "agent", "batch", "device", "moves/s", "compile s"]]
        table += [
            [r["variant"], r["agent"], str(r["batch"]), r["device"], f"{r['moves_per_s']:.0f}", f"{r['compile_s']:.1f}"]
            for r in rows
        ]
        print_table(table, "bot speed", sys.stdout)
        blocks.append(
            "### Bot speed\n\n"
            + "\n".join(
                ["| " + " | ".join(table[0]) + " |", "|" + "---|" * len(table[0])]
                + ["| " + " | ".join(r) + " |" for r in table[1:]]
            )
        )

    print("\n<!-- markdown for benchmarks/RESULTS.md -->\n")
    print("\n\n".join(blocks))
    return 0


if __name__ == "__main__":
    sys.exit(main())
