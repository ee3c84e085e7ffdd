"""Where a PPO update's time goes: the rollout (env steps and the network's forward pass) against the minibatch
epochs (forward and backward), on the first JAX device.

    taskset -c 0 python benchmarks/ppo_split.py                    # blokus-jax train --variant duo's defaults
    taskset -c 0 python benchmarks/ppo_split.py --num-minibatches 2 --update-epochs 2

Times, after one compiling call each: the whole update (`PPOTrainer.update`), the rollout alone
(`PPOTrainer.rollout`), the env alone over the same steps (random legal moves, no network), the network's forward
pass over one rollout's observations, and one optimiser step's gradient (`PPOTrainer.loss` on one minibatch); the
epochs' share is the update less the rollout. Prints one Markdown table; each time is the median of ``--repeats``
calls. Never asserts on time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import jax
import jax.numpy as jnp

from blokus_agents.training.configs import PPOConfig
from blokus_agents.training.ppo import make_train


def _time(fn, repeats: int) -> tuple[float, float]:
    """(median seconds per call, seconds of the first, compiling, call) of ``fn()``."""
    start = time.perf_counter()
    jax.block_until_ready(fn())
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn())
        times.append(time.perf_counter() - start)
    return statistics.median(times), first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="duo")
    parser.add_argument("--num-envs", type=int, default=PPOConfig.num_envs)
    parser.add_argument("--num-steps", type=int, default=PPOConfig.num_steps)
    parser.add_argument("--update-epochs", type=int, default=PPOConfig.update_epochs)
    parser.add_argument("--num-minibatches", type=int, default=PPOConfig.num_minibatches)
    parser.add_argument("--channels", type=int, default=PPOConfig.channels)
    parser.add_argument("--blocks", type=int, default=PPOConfig.blocks)
    parser.add_argument("--precision", default="auto")
    parser.add_argument("--prior", default="none", help="the network's prior: none or model (see PPOConfig.prior)")
    parser.add_argument("--repeats", type=int, default=2)
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
    )
    trainer = make_train(config)
    env, network = trainer.env, trainer.network
    fixed = trainer.init(jax.random.key(0))  # the parts' inputs (update donates its own runner's buffers)
    params, env_state = fixed.params, fixed.env_state
    runner = trainer.init(jax.random.key(0))
    rows = []

    rollout = jax.jit(trainer.rollout)
    state_and_traj = rollout(params, env_state, jax.random.key(1))
    traj = state_and_traj[1]

    def update():
        nonlocal runner
        runner, metrics = trainer.update(runner)
        return metrics

    step = jax.vmap(env.step_autoreset)

    @jax.jit
    def env_only(states, key):
        def one(states, key):
            action = jax.random.categorical(key, jnp.where(states.legal_action_mask, 0.0, -jnp.inf))
            states, _, _ = step(states, action)
            return states, None

        return jax.lax.scan(one, states, jax.random.split(key, config.num_steps))[0]

    forward = jax.jit(lambda p, obs: network.apply(p, obs))
    minibatch = config.num_envs * config.num_steps // config.num_minibatches
    batch = jax.tree.map(lambda x: x.reshape(-1, *x.shape[2:])[:minibatch], traj)
    ones = jnp.ones((minibatch,))
    # the batch is an argument: closed over, XLA would constant-fold whatever depends on it alone
    grad = jax.jit(jax.grad(lambda p, batch, adv: trainer.loss(p, batch, adv, adv, adv > 0)[0]))

    total, total_first = _time(update, args.repeats)
    for what, fn, calls in (
        ("rollout (env + forward)", lambda: rollout(params, env_state, jax.random.key(2)), 1),
        ("env alone (random legal moves)", lambda: env_only(env_state, jax.random.key(3)), 1),
        ("forward over the rollout's positions", lambda: forward(params, traj.obs), 1),
        ("one minibatch's loss gradient", lambda: grad(params, batch, ones), config.optimizer_steps_per_update),
    ):
        seconds, first = _time(fn, args.repeats)
        rows.append((what, seconds, calls, first))
    rows.insert(0, ("whole update", total, 1, total_first))
    steps = config.steps_per_update
    print(
        f"PPO on {config.variant}: {config.num_envs} games x {config.num_steps} steps, {config.update_epochs} epochs "
        f"x {config.num_minibatches} minibatches of {minibatch}, network {config.channels} x {config.blocks} "
        f"(prior {config.prior}), "
        f"conv {network.conv}, precision {network.precision}, {jax.devices()[0].device_kind}; median of "
        f"{args.repeats} calls after a compiling one\n"
    )
    print("| part | s per call | calls per update | s per update | share of the update | first call s |")
    print("|---|---:|---:|---:|---:|---:|")
    for what, seconds, calls, first in rows:
        print(
            f"| {what} | {seconds:.3f} | {calls} | {seconds * calls:.2f} | {seconds * calls / total:.0%} "
            f"| {first:.1f} |"
        )
    rollout_s = rows[1][1]
    print(
        f"\nepochs (update less rollout): {total - rollout_s:.2f} s ({(total - rollout_s) / total:.0%}); "
        f"{steps / total:,.0f} env-steps/s per update"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
