"""Policy head benchmark: what the policy head's gather and its backward pass cost next to the whole network.

    python benchmarks/policy_head.py                      # duo, batch 256, the CLI's network (32 x 2)
    taskset -c 0 python benchmarks/policy_head.py --variant duo --batch 256 --repeats 20

The policy head is a 1x1 convolution to one plane per orientation (``[N, H, W, O]``), padded, then read at each
placement's centre cell into ``O * H * W`` logits (`blokus_agents.players.networks.PolicyValueNet`). This script
times, on the first JAX device, the whole network's forward pass and its forward+backward (the gradient of a loss
on logits and value), and the head alone (its input is the trunk's output) in each of its equivalent forms
(`blokus_agents.players.networks.HEAD_FORMS`), checking that every form gives the same logits. Prints one Markdown
table; rates are the median of ``--repeats`` timed calls after one compiling call. Never asserts on time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

import blokus_jax
from blokus_agents.players import networks
from blokus_jax.observe import Observation


class _Head(nn.Module):
    """The policy head alone: the 1x1 convolution and `place_logits` in one form."""

    centres: tuple
    form: str
    dtype: object

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        planes = nn.Dense(len(self.centres), dtype=self.dtype, param_dtype=jnp.float32)(x)
        return networks.place_logits(planes, self.centres, self.form).astype(jnp.float32)


def _time(fn, args, repeats: int) -> tuple[float, float]:
    """(median seconds per call, compile seconds) of ``fn(*args)``."""
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    compile_s = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return statistics.median(times), compile_s


def observations(env, batch: int, seed: int = 0) -> Observation:
    """``batch`` observations of positions after a few random moves."""
    states = jax.vmap(env.init)(jax.random.split(jax.random.key(seed), batch))
    step = jax.jit(jax.vmap(env.step_autoreset))
    keys = jax.random.split(jax.random.key(seed + 1), 6)
    for key in keys:
        logits = jnp.where(states.legal_action_mask, 0.0, -jnp.inf)
        states, _, _ = step(states, jax.random.categorical(key, logits))
    return jax.vmap(env.observe)(states)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", default="duo")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--channels", type=int, default=32)
    parser.add_argument("--blocks", type=int, default=2)
    parser.add_argument("--precision", default="auto", choices=networks.PRECISION_CHOICES)
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)

    env = blokus_jax.make(args.variant)
    obs = observations(env, args.batch)
    rows = []
    reference = None
    for form in networks.HEAD_FORMS:
        net = networks.make_network(env, args.channels, args.blocks, precision=args.precision, head=form)
        params = net.init(jax.random.key(0), jax.tree.map(lambda x: x[:1], obs))
        weights = jax.random.normal(jax.random.key(1), (args.batch, env.num_actions))

        def loss(params, obs, weights, net=net):
            logits, value = net.apply(params, obs)
            return jnp.sum(logits * weights) + jnp.sum(value)

        forward = jax.jit(net.apply)
        backward = jax.jit(jax.grad(loss))  # weights are an argument: a constant cotangent would be folded away

        # the head alone, on the trunk's output
        trunk = jax.random.normal(jax.random.key(2), (args.batch, *env.board_shape, args.channels))
        head = _Head(net.centres, form, networks.PRECISION_DTYPES[net.precision])
        head_params = head.init(jax.random.key(3), trunk)
        head_fwd = jax.jit(head.apply)
        head_bwd = jax.jit(jax.grad(lambda p, x, w: jnp.sum(head.apply(p, x) * w), argnums=(0, 1)))
        for what, fn, fargs in (
            ("network forward", forward, (params, obs)),
            ("network forward+backward", backward, (params, obs, weights)),
            ("head forward", head_fwd, (head_params, trunk)),
            ("head forward+backward", head_bwd, (head_params, trunk, weights[:, :-1])),
        ):
            seconds, compile_s = _time(fn, fargs, args.repeats)
            if what == "network forward":
                logits = np.asarray(forward(params, obs)[0])
                reference = logits if reference is None else reference
                same = float(np.max(np.abs(logits - reference)))
            rows.append((form, what, seconds * 1e3, args.batch / seconds, compile_s, same))
    print(
        f"{args.variant}, batch {args.batch}, {args.channels} x {args.blocks}, precision {net.precision}, conv "
        f"{net.conv}, {jax.devices()[0].device_kind}; median of {args.repeats} calls\n"
    )
    print("| head form | what | ms per call | samples/s | compile s | max abs logit diff vs first form |")
    print("|---|---|---:|---:|---:|---:|")
    for form, what, ms, rate, compile_s, same in rows:
        print(f"| {form} | {what} | {ms:.2f} | {rate:,.0f} | {compile_s:.1f} | {same:.2g} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
