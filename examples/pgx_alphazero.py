"""AlphaZero on Blokus written only against Pgx's API and mctx, in the style of Pgx's own AlphaZero example.

    python examples/pgx_alphazero.py                      # a few updates on `simple`
    python examples/pgx_alphazero.py --variant duo --updates 50 --batch 256 --simulations 32 --max-num-steps 48

Nothing here is Blokus-specific: the loop uses ``env.init``, ``env.step``, ``state.observation``,
``state.legal_action_mask``, ``state.current_player``, ``state.rewards`` and ``state.terminated`` of any two-player
``pgx.Env`` (only the ``PgxEnv`` line names Blokus). Self-play runs ``mctx.gumbel_muzero_policy`` whose recurrent
function is the real ``env.step``; the search value is negated across a step only when the player to move changes
(in Blokus a player whose opponent has passed moves again). Targets: the search's ``action_weights`` for the policy
and the game outcome from the mover's point of view for the value. Network: a small convolutional net in flax.
"""

from __future__ import annotations

import argparse
from typing import NamedTuple

import flax.linen as nn
import jax
import jax.numpy as jnp
import mctx
import optax

from blokus_jax.adapters.pgx import PgxEnv


class Config(NamedTuple):
    """Hyper-parameters (the defaults are tiny: a smoke run on ``simple``)."""

    variant: str = "simple"
    seed: int = 0
    updates: int = 3
    batch: int = 16  # self-play games per update
    simulations: int = 8
    channels: int = 16
    learning_rate: float = 1e-3
    minibatch: int = 64
    epochs: int = 1
    max_num_steps: int = 24  # self-play steps per game (simple ends within 20; use 48 for duo, 88 for classic)


class Net(nn.Module):
    """Policy logits over every action and a value in [-1, 1] from the observation planes."""

    num_actions: int
    channels: int

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = obs.astype(jnp.float32)
        for _ in range(2):
            x = nn.relu(nn.Conv(self.channels, (3, 3))(x))
        x = x.reshape((x.shape[0], -1))
        logits = nn.Dense(self.num_actions)(x)
        value = jnp.tanh(nn.Dense(1)(nn.relu(nn.Dense(64)(x))))[:, 0]
        return logits, value


class Sample(NamedTuple):
    """One self-play step of a batch of games (leading axes ``[T, B]`` once stacked)."""

    observation: jax.Array
    policy: jax.Array  # search action weights
    reward: jax.Array  # reward of the step to the player who moved
    same_player: jax.Array  # the same player moves after this step
    live: jax.Array  # the game was not over before this step


def make_functions(env, config: Config):
    """The jitted ``selfplay(params, key) -> Sample`` and ``update(params, opt_state, key, samples)``."""
    net = Net(env.num_actions, config.channels)
    optimizer = optax.adam(config.learning_rate)
    state = env.init(jax.random.key(0))
    num_steps = config.max_num_steps

    def evaluate(params, observation, mask):
        logits, value = net.apply(params, observation)
        return jnp.where(mask, logits - logits.max(axis=-1, keepdims=True), jnp.finfo(jnp.float32).min), value

    def recurrent_fn(params, key, action, state):
        del key
        mover = state.current_player
        state = jax.vmap(env.step)(state, action)
        logits, value = evaluate(params, state.observation, state.legal_action_mask)
        reward = state.rewards[jnp.arange(action.shape[0]), mover]
        sign = jnp.where(state.current_player == mover, 1.0, -1.0)
        discount = jnp.where(state.terminated, 0.0, sign)
        value = jnp.where(state.terminated, 0.0, value)
        return mctx.RecurrentFnOutput(reward=reward, discount=discount, prior_logits=logits, value=value), state

    def selfplay(params, key):
        states = jax.vmap(env.init)(jax.random.split(key, config.batch))

        def one_step(states, key):
            logits, value = evaluate(params, states.observation, states.legal_action_mask)
            root = mctx.RootFnOutput(prior_logits=logits, value=value, embedding=states)
            out = mctx.gumbel_muzero_policy(
                params,
                key,
                root,
                recurrent_fn,
                num_simulations=config.simulations,
                invalid_actions=~states.legal_action_mask,
            )
            mover = states.current_player
            live = ~states.terminated
            after = jax.vmap(env.step)(states, out.action)
            reward = after.rewards[jnp.arange(config.batch), mover]
            sample = Sample(states.observation, out.action_weights, reward, after.current_player == mover, live)
            return after, sample

        _, samples = jax.lax.scan(one_step, states, jax.random.split(key, num_steps))
        return samples

    def value_targets(samples: Sample) -> jax.Array:
        """The outcome of each game from the point of view of the player to move at each step."""

        def back(next_value, s):
            value = s.reward + jnp.where(s.same_player, 1.0, -1.0) * next_value
            value = jnp.where(s.live, value, 0.0)
            return value, value

        _, targets = jax.lax.scan(back, jnp.zeros(config.batch), samples, reverse=True)
        return targets

    def loss_fn(params, observation, policy, target, weight):
        logits, value = net.apply(params, observation)
        policy_loss = optax.softmax_cross_entropy(logits, policy)
        value_loss = (value - target) ** 2
        total = (weight * (policy_loss + value_loss)).sum() / jnp.maximum(weight.sum(), 1.0)
        return total, (
            (weight * policy_loss).sum() / jnp.maximum(weight.sum(), 1.0),
            (weight * value_loss).sum() / jnp.maximum(weight.sum(), 1.0),
        )

    def update(params, opt_state, key, samples: Sample):
        targets = value_targets(samples)
        flat = jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])), (samples, targets))
        samples, targets = flat
        n = targets.shape[0]
        per_epoch = n // config.minibatch

        def sgd(carry, idx):
            params, opt_state = carry
            (loss, parts), grads = jax.value_and_grad(loss_fn, has_aux=True)(
                params,
                samples.observation[idx],
                samples.policy[idx],
                targets[idx],
                samples.live[idx].astype(jnp.float32),
            )
            updates, opt_state = optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), (loss, *parts)

        order = jnp.concatenate([jax.random.permutation(k, n) for k in jax.random.split(key, config.epochs)])
        batches = order[: config.epochs * per_epoch * config.minibatch].reshape((-1, config.minibatch))
        (params, opt_state), losses = jax.lax.scan(sgd, (params, opt_state), batches)
        return params, opt_state, jax.tree.map(jnp.mean, losses)

    def init(key):
        params = net.init(key, state.observation[None])
        return params, optimizer.init(params)

    return init, jax.jit(selfplay), jax.jit(update), jax.jit(loss_fn), value_targets


def train(config: Config, verbose: bool = True) -> dict:
    """Run ``config.updates`` rounds of self-play and training; returns the final parameters, the per-update
    losses (total, policy, value) and the loss on the first self-play batch before and after training."""
    env = PgxEnv(config.variant)
    init, selfplay, update, loss_fn, value_targets = make_functions(env, config)
    key = jax.random.key(config.seed)
    key, sub = jax.random.split(key)
    params, opt_state = init(sub)
    history, first = [], None
    for step in range(config.updates):
        key, play_key, train_key = jax.random.split(key, 3)
        samples = selfplay(params, play_key)
        if first is None:
            first = samples
            flat = jax.tree.map(lambda x: x.reshape((-1, *x.shape[2:])), (samples, value_targets(samples)))
            args = (flat[0].observation, flat[0].policy, flat[1], flat[0].live.astype(jnp.float32))
            before = float(loss_fn(params, *args)[0])
        params, opt_state, losses = update(params, opt_state, train_key, samples)
        history.append(tuple(float(x) for x in losses))
        if verbose:
            total, policy, value = history[-1]
            moves = int(samples.live.sum())
            print(f"update {step}: loss {total:.3f} (policy {policy:.3f}, value {value:.3f}), {moves} self-play moves")
    after = float(loss_fn(params, *args)[0])
    return {"params": params, "losses": history, "first_batch_loss": (before, after)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for field, default in Config._field_defaults.items():
        parser.add_argument(f"--{field.replace('_', '-')}", type=type(default), default=default)
    args = parser.parse_args()
    train(Config(**{k.replace("-", "_"): v for k, v in vars(args).items()}))


if __name__ == "__main__":
    main()
