"""Throughput of the Gymnasium and PettingZoo adapters (host-side API loops, one device call per step).

    python benchmarks/adapters.py                        # duo: single env, vector env at N=64/1024, SyncVectorEnv, AEC
    python benchmarks/adapters.py --variant classic --steps 200 --sync-max 64

Rows: ``gym single`` (BlokusGymEnv.step; one learner step also plays the opponent replies), ``gym vector``
(BlokusVectorEnv: one jitted, vmapped call per batch step), ``gym sync`` (gymnasium's SyncVectorEnv over N single
envs, for comparison) and ``pettingzoo`` (the AEC loop: ``last()`` + ``step()`` per move). ``learner steps/s``
counts calls of ``step`` times the batch size; ``moves/s`` counts every core move (placements and passes of all
players, from ``State.step_count``). Only the time inside the env's ``step`` is measured; picking the random legal
action from the mask is excluded. Compilation happens before timing. Numbers depend on the machine's load; the
script never asserts on time.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np


def _random_actions(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """One uniformly random legal action per row of ``int8[N, A]`` masks (0 for an all-zero row)."""
    counts = masks.sum(axis=1)
    pick = (rng.random(len(masks)) * np.maximum(counts, 1)).astype(np.int64)
    return np.argmax(np.cumsum(masks, axis=1, dtype=np.int32) > pick[:, None], axis=1)


def _moves(state) -> int:
    return int(np.asarray(state.step_count).sum())


def bench_single(variant: str, steps: int) -> tuple[float, float]:
    """``(learner steps/s, moves/s)`` of one ``BlokusGymEnv``."""
    from blokus_jax.adapters.gymnasium import BlokusGymEnv

    env = BlokusGymEnv(variant)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=0)
    env.step(_random_actions(rng, info["action_mask"][None])[0])  # compile
    elapsed, moves, done = 0.0, 0, True
    for _ in range(steps):
        if done:
            moves += _moves(env.state)
            obs, info = env.reset()
            moves -= _moves(env.state)
        action = _random_actions(rng, info["action_mask"][None])[0]
        t = time.perf_counter()
        obs, _, term, trunc, info = env.step(action)
        elapsed += time.perf_counter() - t
        done = term or trunc
    moves += _moves(env.state)
    return steps / elapsed, moves / elapsed


def bench_vector(variant: str, num_envs: int, steps: int, sync: bool) -> tuple[float, float]:
    """``(learner steps/s, moves/s)`` of ``BlokusVectorEnv`` or of ``SyncVectorEnv`` over ``BlokusGymEnv``."""
    from gymnasium.vector import SyncVectorEnv

    from blokus_jax.adapters.gymnasium import BlokusGymEnv, BlokusVectorEnv

    envs = (
        SyncVectorEnv([lambda: BlokusGymEnv(variant) for _ in range(num_envs)])
        if sync
        else BlokusVectorEnv(num_envs, variant)
    )
    rng = np.random.default_rng(0)
    obs, info = envs.reset(seed=0)
    obs, *_, info = envs.step(_random_actions(rng, info["action_mask"]))  # compile
    elapsed, moves = 0.0, 0
    for _ in range(steps):
        actions = _random_actions(rng, info["action_mask"])
        before = _move_counts(envs, sync)
        t = time.perf_counter()
        obs, _, term, trunc, info = envs.step(actions)
        elapsed += time.perf_counter() - t
        after = _move_counts(envs, sync)
        moves += int(np.where(after >= before, after - before, after).sum())  # a restarted game counts from 0
    return steps * num_envs / elapsed, moves / elapsed


def _move_counts(envs, sync: bool) -> np.ndarray:
    """``int[N]`` moves played so far in each sub-env's current game."""
    if sync:
        return np.asarray([int(e.unwrapped.state.step_count) for e in envs.envs])
    return np.asarray(envs.state.step_count)


def bench_pettingzoo(variant: str, steps: int) -> tuple[float, float]:
    """``(moves/s, moves/s)`` of the wrapped AEC env in the standard ``agent_iter`` loop with random agents."""
    from blokus_jax.adapters.pettingzoo import env as aec_env

    game = aec_env(variant)
    rng = np.random.default_rng(0)

    def play_game(seed: int) -> tuple[int, float]:
        game.reset(seed=seed)
        moves, elapsed = 0, 0.0
        for _ in game.agent_iter():
            obs, _, terminated, truncated, _ = game.last()
            action = None if terminated or truncated else int(_random_actions(rng, obs["action_mask"][None])[0])
            t = time.perf_counter()
            game.step(action)
            if action is not None:
                elapsed += time.perf_counter() - t
                moves += 1
        return moves, elapsed

    play_game(0)  # compiles; not counted
    moves, elapsed = 0, 0.0
    while moves < steps:
        m, e = play_game(moves)
        moves, elapsed = moves + m, elapsed + e
    return moves / elapsed, moves / elapsed


def main(argv: list[str] | None = None) -> None:
    """Parse arguments, run each benchmark row and print a markdown table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variant", default="duo")
    parser.add_argument("--steps", type=int, default=100, help="timed steps per row (default 100)")
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[64, 1024])
    parser.add_argument("--sync-max", type=int, default=64, help="largest N run with SyncVectorEnv (default 64)")
    args = parser.parse_args(argv)
    device = jax.devices()[0].platform
    rows = [("gym single", 1, *bench_single(args.variant, args.steps))]
    for n in args.batch_sizes:
        rows.append(("gym vector", n, *bench_vector(args.variant, n, args.steps, sync=False)))
        if n <= args.sync_max:
            rows.append(("gym sync", n, *bench_vector(args.variant, n, max(args.steps // 4, 5), sync=True)))
    rows.append(("pettingzoo", 1, *bench_pettingzoo(args.variant, args.steps)))
    print("| adapter | variant | N | device | learner steps/s | moves/s |\n|---|---|---|---|---|---|")
    for name, n, rate, moves in rows:
        print(f"| {name} | {args.variant} | {n} | {device} | {rate:,.0f} | {moves:,.0f} |")


if __name__ == "__main__":
    main()
