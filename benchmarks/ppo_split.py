"""Where a PPO update's time goes, stage by stage, against each stage's FLOP count and the core's measured peak.

    taskset -c 0 python benchmarks/ppo_split.py                    # blokus-jax train --variant duo's defaults
    taskset -c 0 python benchmarks/ppo_split.py --channels 32 --blocks 2 --update-epochs 4 --prior none
    taskset -c 0 python benchmarks/ppo_split.py --json split.json  # the rows as JSON too

Each stage is jitted on its own and timed over one update's worth of positions (`num_envs * num_steps`), after one
compiling call, as the median of ``--repeats`` calls:

- the environment: `step_autoreset` of every game for `num_steps` moves (the actions drawn from the packed legal
  bits, no network), the observations, and the legal mask unpacked from its bits;
- the network's forward pass in three parts: the conv trunk with the value head (`prior none`), the move model's
  placement scores (with `--prior model`/`tuned`), and the whole network;
- sampling: the masked log-softmax and one draw per position;
- one minibatch's loss gradient and one optimiser step (Adam with clipping), each times the update's optimiser steps;
- the whole update (`PPOTrainer.update`) and the rollout (`PPOTrainer.rollout`).

For each stage the script prints XLA's FLOP count (``cost_analysis``), the achieved GFLOP/s, and the share of the
peak: the GFLOP/s of a large float32 matmul on the same device, measured first. Memory-bound stages (gathers,
softmax over every action) do few FLOPs, so their "bytes" column (XLA's estimate of bytes accessed) against the
measured read bandwidth says more. Never asserts on time: a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import jax
import jax.numpy as jnp

from blokus_agents.core.masking import sample_masked
from blokus_agents.players.configs import PPOConfig
from blokus_agents.training.ppo import make_train


def _time(fn, args, repeats: int) -> tuple[float, float]:
    """(median seconds per call, seconds of the first, compiling, call) of ``fn(*args)``."""
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times), first


def _cost(fn, args) -> tuple[float, float]:
    """(FLOPs, bytes accessed) of one call of jitted ``fn(*args)``, from XLA's cost analysis (0 where unknown)."""
    try:
        cost = fn.lower(*args).compile().cost_analysis()
    except Exception:  # noqa: BLE001 - cost analysis is best effort on every backend
        return 0.0, 0.0
    cost = cost[0] if isinstance(cost, list) else cost
    return float(cost.get("flops", 0.0)), float(cost.get("bytes accessed", 0.0))


def machine_peak(repeats: int = 5) -> tuple[float, float]:
    """(GFLOP/s of a 2048 x 2048 float32 matmul, GB/s of reading a 256 MiB float32 array) on the first device."""
    a = jnp.ones((2048, 2048), jnp.float32)
    matmul = jax.jit(lambda a, b: a @ b)
    seconds, _ = _time(matmul, (a, a), repeats)
    x = jnp.ones((64 * 1024 * 1024,), jnp.float32)
    read = jax.jit(lambda x: jnp.sum(x * 1.0001))
    read_seconds, _ = _time(read, (x,), repeats)
    return 2 * 2048**3 / seconds / 1e9, x.nbytes / read_seconds / 1e9


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="duo")
    defaults = PPOConfig(variant="duo")
    for flag in ("num_envs", "num_steps", "update_epochs", "num_minibatches", "channels", "blocks"):
        parser.add_argument("--" + flag.replace("_", "-"), type=int, default=getattr(defaults, flag))
    parser.add_argument("--precision", default=defaults.precision)
    parser.add_argument("--prior", default=defaults.prior, help="the network's prior (see PPOConfig.prior)")
    parser.add_argument("--kl-coef", type=float, default=defaults.kl_coef)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the rows to this JSON file")
    args = parser.parse_args(argv)

    config = PPOConfig(
        variant=args.variant,
        num_envs=args.num_envs,
        num_steps=args.num_steps,
        update_epochs=args.update_epochs,
        num_minibatches=args.num_minibatches,
        channels=args.channels,
        blocks=args.blocks,
        precision=args.precision,
        prior=args.prior,
        kl_coef=args.kl_coef,
    )
    peak, bandwidth = machine_peak()
    trainer = make_train(config)
    env, network = trainer.env, trainer.network
    fixed = trainer.init(jax.random.key(0))  # the stages' inputs (update donates its own runner's buffers)
    params, env_state = fixed.params, fixed.env_state
    runner = trainer.init(jax.random.key(0))
    steps = config.steps_per_update
    optimizer_steps = config.optimizer_steps_per_update
    minibatch = steps // config.num_minibatches

    rollout = jax.jit(trainer.rollout)
    _, traj = rollout(params, env_state, jax.random.key(1))
    flat = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:]), traj)  # [T * N, ...]
    observe = jax.vmap(env.observe)
    env_step = jax.vmap(env.step_autoreset)
    sample_bits = jax.vmap(env.sample_action)

    @jax.jit
    def env_only(states, key):
        def one(states, key):
            states, _, _ = env_step(states, sample_bits(jax.random.split(key, config.num_envs), states))
            return states, None

        return jax.lax.scan(one, states, jax.random.split(key, config.num_steps))[0]

    states = jax.tree.map(lambda x: jnp.repeat(x, config.num_steps, axis=0), env_state)  # one update's positions
    observations = jax.jit(observe)
    masks = jax.jit(lambda s: s.legal_action_mask)
    trunk_net = network.clone(prior="none", variant="")
    trunk = jax.jit(
        lambda p, obs: trunk_net.apply({"params": {k: v for k, v in p["params"].items() if k != "move_model"}}, obs)
    )
    forward = jax.jit(lambda p, obs: network.apply(p, obs))
    logits, _ = forward(params, flat.obs)
    sample = jax.jit(lambda key, logits, mask: sample_masked(key, logits, mask))
    batch = jax.tree.map(lambda x: x[:minibatch], flat)
    ones = jnp.ones((minibatch,))
    # the batch is an argument: closed over, XLA would constant-fold whatever depends on it alone
    grad = jax.jit(
        jax.grad(
            lambda p, batch, adv: trainer.loss(
                p, batch, adv, adv, adv > 0, *((p,) if hasattr(defaults, "kl_coef") else ())
            )[0]
        )
    )
    grads = grad(params, batch, ones)
    opt_state = trainer.optimizer.init(params)
    opt_step = jax.jit(lambda g, s, p: trainer.optimizer.update(g, s, p))

    def update():
        nonlocal runner
        runner, metrics = trainer.update(runner)
        return metrics

    stages = [
        ("env: step_autoreset, moves from the bits", env_only, (env_state, jax.random.key(3)), 1),
        ("env: observations", observations, (states,), 1),
        ("env: legal masks unpacked", masks, (states,), 1),
        ("network: trunk and heads, no prior", trunk, (params, flat.obs), 1),
        ("network: whole forward", forward, (params, flat.obs), 1),
        ("sampling: masked log-softmax and a draw", sample, (jax.random.key(4), logits, flat.mask), 1),
        ("one minibatch's loss gradient", grad, (params, batch, ones), optimizer_steps),
        ("one optimiser step", opt_step, (grads, opt_state, params), optimizer_steps),
    ]
    rows = []
    total, total_first = _time(update, (), args.repeats)
    rows.append(dict(stage="whole update", seconds=total, calls=1, first=total_first, flops=0.0, bytes=0.0))
    seconds, first = _time(rollout, (params, env_state, jax.random.key(2)), args.repeats)
    flops, nbytes = _cost(rollout, (params, env_state, jax.random.key(2)))
    rows.append(
        dict(
            stage="rollout (env + forward + sampling)", seconds=seconds, calls=1, first=first, flops=flops, bytes=nbytes
        )
    )
    for name, fn, fn_args, calls in stages:
        seconds, first = _time(fn, fn_args, args.repeats)
        flops, nbytes = _cost(fn, fn_args)
        rows.append(dict(stage=name, seconds=seconds, calls=calls, first=first, flops=flops, bytes=nbytes))

    print(
        f"PPO on {config.variant}: {config.num_envs} games x {config.num_steps} steps, {config.update_epochs} epochs "
        f"x {config.num_minibatches} minibatches of {minibatch}, network {config.channels} x {config.blocks} "
        f"(prior {config.prior}, kl_coef {config.kl_coef}), conv {network.conv}, precision {network.precision}, "
        f"{jax.devices()[0].device_kind}; peak {peak:.1f} GFLOP/s (f32 matmul), {bandwidth:.1f} GB/s read; "
        f"median of {args.repeats} calls after a compiling one\n"
    )
    print(
        "| stage | s per call | calls per update | s per update | share of the update | GFLOP per call "
        "| GFLOP/s | share of peak | GB accessed per call |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        s, calls = row["seconds"], row["calls"]
        rate = row["flops"] / s / 1e9 if s else 0.0
        print(
            f"| {row['stage']} | {s:.3f} | {calls} | {s * calls:.2f} | {s * calls / total:.0%} | "
            f"{row['flops'] / 1e9:.2f} | {rate:.1f} | {rate / peak:.0%} | {row['bytes'] / 1e9:.2f} |"
        )
    rollout_s = rows[1]["seconds"]
    print(
        f"\nepochs (update less rollout): {total - rollout_s:.2f} s ({(total - rollout_s) / total:.0%}); "
        f"{steps / total:,.0f} env-steps/s per update"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                dict(
                    config=config.to_dict(),
                    peak_gflops=peak,
                    read_gbs=bandwidth,
                    env_steps_per_s=steps / total,
                    device=jax.devices()[0].device_kind,
                    rows=rows,
                ),
                f,
                indent=1,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
