"""Time per move of agents at batch 1: what "the same time per move" means when comparing search agents.

    python benchmarks/move_time.py --variant duo --agents mcts "az:runs/az_duo60,sims=64" "az:runs/az_duo60,sims=256"

Every agent spec (anything ``--agents`` accepts) is jitted once (compile time reported separately) and then asked
for one move in each of ``--positions`` positions taken from random games at several depths (early, middle and late
game); the table gives the median and the maximum seconds per move over those positions, after ``--repeats`` timed
calls each (median per position). Prints a markdown table with the device; never asserts on time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax

import blokus_jax
from blokus_agents.core.policies import resolve_agent


def sample_positions(env, count: int, seed: int = 0) -> list:
    """``count`` positions from random games at depths spread over a game (0 to about 70 % of its placements)."""
    longest = env.num_colors * env.num_pieces
    depths = [round(i * 0.7 * longest / max(count - 1, 1)) for i in range(count)]
    step, sample = jax.jit(env.step), jax.jit(env.sample_action)
    out = []
    for i, depth in enumerate(depths):
        key = jax.random.key(seed * 1000 + i)
        state = env.init()
        for _ in range(depth):
            key, sub = jax.random.split(key)
            nxt = step(state, sample(sub, state))
            if bool(nxt.terminated):
                break
            state = nxt
        out.append(state)
    return out


def time_agent(env, spec: str, positions: list, repeats: int) -> dict:
    """Compile seconds, and median / max over ``positions`` of the median seconds per move of ``spec``."""
    act = jax.jit(resolve_agent(spec, env))
    t0 = time.perf_counter()
    jax.block_until_ready(act(jax.random.key(0), positions[0]))
    compile_s = time.perf_counter() - t0
    per_position = []
    for i, state in enumerate(positions):
        runs = []
        for r in range(repeats):
            t0 = time.perf_counter()
            jax.block_until_ready(act(jax.random.key(i * repeats + r), state))
            runs.append(time.perf_counter() - t0)
        per_position.append(statistics.median(runs))
    return {
        "agent": spec,
        "compile_s": compile_s,
        "median_s": statistics.median(per_position),
        "max_s": max(per_position),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", default="duo")
    parser.add_argument("--agents", nargs="+", default=["mcts"])
    parser.add_argument("--positions", type=int, default=6, help="positions per agent (default 6)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per position (default 3)")
    args = parser.parse_args(argv)
    env = blokus_jax.make(args.variant)
    positions = sample_positions(env, args.positions)
    device = jax.devices()[0]
    print(f"\n{args.variant}, batch 1, {len(positions)} positions x {args.repeats} calls on {device.device_kind}\n")
    print("| agent | compile s | median s/move | max s/move |")
    print("|---|---|---|---|")
    for spec in args.agents:
        row = time_agent(env, spec, positions, args.repeats)
        print(f"| `{spec}` | {row['compile_s']:.1f} | {row['median_s']:.3f} | {row['max_s']:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
