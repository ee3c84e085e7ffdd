"""Training benchmark: learning curve of PPO self-play against fixed bots, training speed, and where the time goes;
and the speed of the AlphaZero update by batch size.

    python benchmarks/training.py --variant simple --minutes 10 --out runs/bench_simple
    python benchmarks/training.py --variant duo --minutes 60 --num-envs 128 --out runs/bench_duo
    python benchmarks/training.py --variant duo --az-speed 16 64 256     # AlphaZero rows only, no training run

Trains from scratch with :func:`blokus_agents.training.train.run` (evaluating against random and greedy in the arena),
then prints a markdown table of the win-rate curve and a speed table: training env-steps/s, and the share of an update
spent in the environment (a rollout of the same batch with uniformly random actions, no network) versus the rest
(network forward passes in the rollout, GAE and the minibatch epochs). Never asserts on time.

``--az-speed N ...`` instead times the AlphaZero update (:mod:`blokus_agents.training.alphazero`) at each ``num_envs``
N: compile time, median seconds per update, self-play moves/s and training samples/s of the whole update, and the
share of it spent in self-play (the search and the env steps alone, timed separately).
"""

from __future__ import annotations

import argparse
import json
import time

import jax

from blokus_agents.players.configs import AZConfig, PPOConfig
from blokus_agents.training.alphazero import make_train as make_az_train
from blokus_agents.training.ppo import PPOTrainer, make_train
from blokus_agents.training.rundir import read_metrics
from blokus_agents.training.train import run


def env_only_seconds(trainer: PPOTrainer, repeats: int = 3) -> float:
    """Seconds for ``num_steps`` auto-reset steps of ``num_envs`` games with random legal actions (no network)."""
    env, c = trainer.env, trainer.config
    sample, step = jax.vmap(env.sample_action), jax.vmap(env.step_autoreset)

    @jax.jit
    def rollout(states, key):
        def one(states, k):
            states, rewards, done = step(states, sample(jax.random.split(k, c.num_envs), states))
            return states, done

        return jax.lax.scan(one, states, jax.random.split(key, c.num_steps))

    states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), c.num_envs))
    jax.block_until_ready(rollout(states, jax.random.key(1)))
    best = float("inf")
    for i in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(rollout(states, jax.random.key(i)))
        best = min(best, time.perf_counter() - t0)
    return best


def _median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - t0)
    return sorted(times)[len(times) // 2]


def alphazero_speed(config: AZConfig, repeats: int = 3) -> dict:
    """Speed of one AlphaZero update of ``config``: compile seconds, median seconds per update, self-play moves/s
    and training samples/s of the update, and the share of the update spent in self-play (search + env steps)."""
    trainer = make_az_train(config)
    runner = trainer.init(jax.random.PRNGKey(0))
    t0 = time.perf_counter()
    update = trainer.update.lower(runner).compile()
    compile_s = time.perf_counter() - t0
    runner, _ = update(runner)  # fill the buffer a little so the timed updates train on real samples
    runners = [runner]

    def chained():  # the update donates its runner: each timed call continues from the previous one's
        runners[0], metrics = update(runners[0])
        return metrics

    update_s = _median_seconds(chained, repeats)
    runner = runners[0]
    env_step = jax.vmap(trainer.env.step_autoreset)

    @jax.jit
    def self_play(params, states, key):
        def one(states, k):
            out = trainer.search(params, k, states)
            return env_step(states, out.action)[0], out.value

        return jax.lax.scan(one, states, jax.random.split(key, config.num_steps))

    jax.block_until_ready(self_play(runner.params, runner.env_state, jax.random.PRNGKey(1)))
    play_s = _median_seconds(lambda: self_play(runner.params, runner.env_state, jax.random.PRNGKey(2)), repeats)
    return {
        "num_envs": config.num_envs,
        "compile_s": compile_s,
        "update_s": update_s,
        "moves_per_s": config.steps_per_update / update_s,
        "samples_per_s": config.train_steps * config.batch_size / update_s,
        "self_play_share": min(play_s / update_s, 1.0),
    }


def print_alphazero_speed(variant: str, batch_sizes: list[int], sims: int, repeats: int) -> None:
    """Print the markdown table of :func:`alphazero_speed` for each ``num_envs`` in ``batch_sizes``."""
    device = jax.devices()[0]
    print(f"\n## AlphaZero update speed, {variant}, sims={sims}, on {device.platform} ({device.device_kind})\n")
    print("| num_envs | moves/update | samples/update | compile s | s/update | self-play moves/s | train samples/s |")
    print("|---|---|---|---|---|---|---|")
    for n in batch_sizes:
        config = AZConfig(variant=variant, num_envs=n, batch_size=4 * n, sims=sims, total_steps=10**9)
        row = alphazero_speed(config, repeats)
        print(
            f"| {n} | {config.steps_per_update} | {config.train_steps * config.batch_size} | {row['compile_s']:.1f} | "
            f"{row['update_s']:.2f} | {row['moves_per_s']:.0f} ({row['self_play_share']:.0%} of the time) | "
            f"{row['samples_per_s']:.0f} |",
            flush=True,
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="simple")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--num-steps", type=int, default=32)
    parser.add_argument("--channels", type=int, default=32)
    parser.add_argument("--blocks", type=int, default=2)
    parser.add_argument("--eval-every", type=int, default=25)
    parser.add_argument("--eval-games", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=None, help="run directory (default runs/bench_<variant>)")
    parser.add_argument(
        "--az-speed", nargs="+", type=int, metavar="N", help="only time the AlphaZero update at these num_envs"
    )
    parser.add_argument("--sims", type=int, default=16, help="AlphaZero simulations per move (--az-speed)")
    parser.add_argument("--repeats", type=int, default=3, help="timed updates per row (--az-speed)")
    args = parser.parse_args(argv)
    if args.az_speed:
        print_alphazero_speed(args.variant, args.az_speed, args.sims, args.repeats)
        return
    out = args.out or f"runs/bench_{args.variant}"
    config = PPOConfig(
        variant=args.variant,
        num_envs=args.num_envs,
        num_steps=args.num_steps,
        total_steps=10**12,
        channels=args.channels,
        blocks=args.blocks,
        seed=args.seed,
    )
    summary = run(config, out, minutes=args.minutes, eval_every=args.eval_every, eval_games=args.eval_games)
    env_s = env_only_seconds(make_train(config))
    update_s = config.steps_per_update / summary["steps_per_s"]
    device = jax.devices()[0]
    print(
        f"\n## {args.variant}: {summary['updates']} updates, {summary['env_steps']} env steps in "
        f"{summary['seconds'] / 60:.1f} min on {device.platform} ({device.device_kind})\n"
    )
    print("| update | env steps | minutes | " + " | ".join(f"vs {b}" for b in ("random", "greedy")) + " |")
    print("|---|---|---|---|---|")
    for r in read_metrics(out):
        if "win_rate_vs_random" in r:
            print(
                f"| {r['update']} | {r['env_steps']} | {r['time_s'] / 60:.1f} | {r['win_rate_vs_random']:.2f} | "
                f"{r.get('win_rate_vs_greedy', float('nan')):.2f} |"
            )
    print("\n| variant | num_envs x num_steps | device | train env-steps/s | env share | network+learning share |")
    print("|---|---|---|---|---|---|")
    share = min(env_s / update_s, 1.0)
    print(
        f"| {args.variant} | {config.num_envs} x {config.num_steps} | {device.platform} | "
        f"{summary['steps_per_s']:.0f} | {share:.1%} | {1 - share:.1%} |"
    )
    print("\nsummary: " + json.dumps(summary))


if __name__ == "__main__":
    main()
