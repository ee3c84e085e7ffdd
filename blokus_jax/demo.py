"""Batched random-play demo: `python -m blokus_jax.demo [--variant duo] [--games 1024]`.

Plays a batch of complete games with uniformly random legal moves, all on device in the one batched play loop
(`blokus_jax.rollout.make_rollout`), then prints a table (games/s, compile time, mean scores, win shares), the
throughput in placements/s as `blokus-jax bench` measures it (`blokus_jax.benchmark.measure` at the same batch: a
fixed number of steps with finished games restarted, the median of a few runs; a batch of complete games would
also count the steps where finished games wait for the longest one) and the final board of the first game.
"""

from __future__ import annotations

import argparse
import sys
import time

import jax
import numpy as np

from blokus_jax import benchmark, rules
from blokus_jax.env import Env, State, make
from blokus_jax.io.render import to_text
from blokus_jax.rollout import make_rollout
from blokus_jax.variants import variant_names


def play_random_games(env: Env, key: jax.Array, num_games: int) -> State:
    """Play `num_games` complete uniformly random games in one batched computation and return the final states.

    Args:
        env: The environment.
        key: The PRNG key of the batch.
        num_games: Games played at once.

    Returns:
        The final states, leading axis `num_games`.
    """
    return make_rollout(env, num_games)(key)[0]


def main(argv: list[str] | None = None) -> int:
    """Run the demo and print its table and a board."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", default="duo", choices=variant_names())
    parser.add_argument("--games", type=int, default=1024, help="games played in parallel (default 1024)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    env = make(args.variant)
    run = jax.jit(lambda k: play_random_games(env, k, args.games))
    key = jax.random.key(args.seed)
    start = time.perf_counter()
    compiled = run.lower(key).compile()
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    states = jax.block_until_ready(compiled(key))
    elapsed = time.perf_counter() - start

    finished = np.asarray(states.terminated)
    placements = int(np.asarray(states.pieces_placed).sum())
    player_scores = np.asarray(jax.vmap(env.player_scores)(states))
    win_share = np.asarray(rules.win_shares(player_scores))  # ties split evenly
    print(f"blokus-jax random play: {args.games} games of {args.variant!r} on {jax.devices()[0].device_kind}\n")
    print("| games | finished | games/s | placements | compile s | run s |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {args.games} | {finished.sum()} | {args.games / elapsed:,.0f} | {placements:,} | "
        f"{compile_s:.1f} | {elapsed:.2f} |\n"
    )
    row = benchmark.measure(env, args.games, benchmark.BENCH_STEPS, benchmark.BENCH_REPEATS, seed=args.seed)
    print(
        f"Throughput: {row['placements_per_s']:,.0f} placements/s at batch {args.games}, as `blokus-jax bench` "
        f"measures it ({benchmark.BENCH_STEPS} steps with finished games restarted, median of "
        f"{benchmark.BENCH_REPEATS} runs; {row['compile_s']:.1f} s to compile).\n"
    )
    print("| player | mean score | win share |")
    print("|---:|---:|---:|")
    for p in range(env.num_players):
        print(f"| {p} | {player_scores[:, p].mean():.1f} | {win_share[:, p].mean():.3f} |")
    print("\nFinal position of game 0:\n")
    print(to_text(jax.tree.map(lambda x: x[0], states), env))
    return 0


if __name__ == "__main__":
    sys.exit(main())
