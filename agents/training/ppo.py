"""PPO self-play for blokus-jax, PureJaxRL style: everything from the rollout to the optimiser step runs on device.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import optax
from flax import struct
from jax.sharding import Mesh

from blokus_agents.core.masking import masked_logits, sample_masked
from blokus_agents.core.policies import resolve_agent
from blokus_agents.players.configs import PPOConfig
from blokus_agents.players.networks import PolicyValueNet, model_scores
from blokus_agents.training.optim import lr_schedule
from blokus_agents.training.scaffold import fresh_runner_fields, jit_trainer, make_parts, param_norm
from blokus_jax.env import Env, State
from blokus_jax.errors import BlokusError, ConfigError
from blokus_jax.observe import Observation


class Transition(NamedTuple):
    """One rollout step of every game (leading axes `[T, N]` after the scan)."""

    obs: Observation
    mask: jax.Array  # bool[A] legal actions
    action: jax.Array  # int32
    log_prob: jax.Array  # f32 under the acting policy
    value: jax.Array  # f32 value of the seat to move
    player: jax.Array  # int32 seat that moved
    rewards: jax.Array  # f32[num_players] rewards of this step
    done: jax.Array  # bool: the game ended on this step
    prior: jax.Array | None = None  # f32[A - 1] the fixed move model's scores (prior="model"), else None


class Runner(struct.PyTreeNode):
    """Everything that changes during training: the whole state a checkpoint stores.

    `key` is a raw `uint32[2]` PRNG key; `update` counts completed updates. The optimiser state `opt_state`
    also holds the learning-rate schedule's position and horizon (see `lr_horizon`). `ref_params` is the policy
    the KL term (`PPOConfig.kl_coef`) holds the network near: the parameters the run started from, fixed; `None`
    without that term.
    """

    params: Any
    opt_state: Any
    env_state: State
    key: jax.Array
    update: jax.Array
    ref_params: Any = None

    @property
    def lr_horizon(self) -> jax.Array:
        """Updates over which the learning rate decays (kept in the schedule's state inside `opt_state`)."""
        return self.opt_state.hyperparams_states["learning_rate"].horizon


# ------------------------------------------------------------------------------------------------------- trainer
@dataclass(frozen=True, eq=False)
class PPOTrainer:
    """What `make_train` returns: the environment, network and optimiser of one config and its functions.

    `trainer(key)` runs all `config.num_updates` updates in one jitted call (metrics stacked per update);
    `init(key) -> Runner` and `update(runner) -> (runner, metrics)` are the same pieces jitted separately for the
    host loop (`update` donates its runner: pass each runner once and use the one returned; `init_pure` and
    `update_pure` are their unjitted forms, e.g. for `jax.eval_shape`); `rollout`
    and `loss` are the pure stages, exposed for tests. With `mesh` the games are split across its devices
    (`init` and `update` place their outputs accordingly, as `shardings` says; `None` without a mesh).
    """

    config: PPOConfig
    env: Env
    network: PolicyValueNet
    optimizer: optax.GradientTransformation
    mesh: Mesh | None
    init_pure: Callable[[jax.Array], Runner]
    init: Callable[[jax.Array], Runner]
    rollout: Callable[..., tuple[State, Transition]]
    update_pure: Callable[[Runner], tuple[Runner, dict]]
    update: Callable[[Runner], tuple[Runner, dict]]
    loss: Callable[..., tuple[jax.Array, dict]]
    train: Callable[[jax.Array], tuple[Runner, dict]]
    shardings: Runner | None = None

    def __call__(self, key: jax.Array) -> tuple[Runner, dict[str, jax.Array]]:
        return self.train(key)

    def learning_rate(self, update: jax.Array, horizon: jax.Array) -> jax.Array:
        """Learning rate of update number `update` when it decays over `horizon` updates."""
        return lr_schedule(self.config).at(update, horizon)


def make_loss(config: PPOConfig, network: PolicyValueNet) -> Callable[..., tuple[jax.Array, dict[str, jax.Array]]]:
    """Step 5 of `make_train`: the PPO loss `loss(params, batch, advantages, targets, valid)` of `config`'s
    coefficients on `network`."""
    c = config

    def loss(
        params: Any,
        batch: Transition,
        advantages: jax.Array,
        targets: jax.Array,
        valid: jax.Array,
        ref_params: Any = None,
    ) -> tuple[jax.Array, dict[str, jax.Array]]:
        """PPO loss on a minibatch (any leading shape); returns `(total, terms)` with the policy, value and entropy
        terms, approximate KL and clip fraction. `valid` weights every term; the policy terms also skip forced
        moves (one legal action). With `kl_coef` above 0, `ref_params` is the starting policy and the loss adds
        `kl_coef` times `KL(policy || starting policy)` over the legal moves (the term `kl_ref`)."""
        logits, value = network.apply(params, batch.obs, batch.prior)
        log_probs = jax.nn.log_softmax(masked_logits(logits, batch.mask), axis=-1)
        log_prob = jnp.take_along_axis(log_probs, batch.action[..., None], axis=-1)[..., 0]
        choice = valid & (jnp.sum(batch.mask, axis=-1) > 1)
        w_pi, w_v = choice.astype(jnp.float32), valid.astype(jnp.float32)
        mean = lambda x, w: jnp.sum(x * w) / jnp.maximum(jnp.sum(w), 1.0)  # noqa: E731

        adv_mean = mean(advantages, w_pi)
        adv = (advantages - adv_mean) / (jnp.sqrt(mean((advantages - adv_mean) ** 2, w_pi)) + 1e-8)
        log_ratio = log_prob - batch.log_prob
        ratio = jnp.exp(log_ratio)
        policy_loss = mean(-jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - c.clip_eps, 1 + c.clip_eps) * adv), w_pi)
        clipped_value = batch.value + jnp.clip(value - batch.value, -c.clip_eps, c.clip_eps)
        value_loss = 0.5 * mean(jnp.maximum((value - targets) ** 2, (clipped_value - targets) ** 2), w_v)
        entropy = mean(-jnp.sum(jnp.exp(log_probs) * log_probs, axis=-1), w_pi)
        total = policy_loss + c.vf_coef * value_loss - c.ent_coef * entropy
        extra = {}
        if c.kl_coef > 0:
            ref_logits, _ = network.apply(jax.lax.stop_gradient(ref_params), batch.obs, batch.prior)
            ref_log_probs = jax.nn.log_softmax(masked_logits(ref_logits, batch.mask), axis=-1)
            kl_ref = mean(jnp.sum(jnp.exp(log_probs) * (log_probs - ref_log_probs), axis=-1), w_pi)
            total = total + c.kl_coef * kl_ref
            extra["kl_ref"] = kl_ref
        terms = dict(
            policy_loss=policy_loss,
            value_loss=value_loss,
            entropy=entropy,
            approx_kl=mean((ratio - 1) - log_ratio, w_pi),
            clip_fraction=mean((jnp.abs(ratio - 1) > c.clip_eps).astype(jnp.float32), w_pi),
            **extra,
        )
        return total, terms

    return loss


def _update_metrics(
    terms: dict[str, jax.Array], traj: Transition, targets: jax.Array, valid: jax.Array, opt_state: Any, params: Any
) -> dict[str, jax.Array]:
    """The scalar metrics of one PPO update: the loss terms averaged over its optimiser steps, the value head's
    explained variance, the learning rate, games finished, the share of valid steps and the parameter norm."""
    w = valid.astype(jnp.float32)
    residual = jnp.sum(w * (targets - traj.value) ** 2) / jnp.maximum(w.sum(), 1)
    centred = jnp.sum(w * (targets - jnp.sum(w * targets) / jnp.maximum(w.sum(), 1)) ** 2) / jnp.maximum(w.sum(), 1)
    metrics = {k: v.mean() for k, v in terms.items()}
    metrics.update(
        explained_variance=1.0 - residual / jnp.maximum(centred, 1e-8),
        learning_rate=opt_state.hyperparams["learning_rate"],
        games_finished=jnp.sum(traj.done),
        valid_fraction=w.mean(),
        param_norm=param_norm(params),
    )
    return metrics


def network_seats(player: jax.Array, num_players: int, *, against_opponent: bool) -> jax.Array:
    """Whether the network plays seat `player` (`[..., N]`, game `i` last): every seat in self-play; against an
    opponent, game `i`'s seat `i % num_players`, so the network plays each seat in as many games (its seat stays its
    own when a game restarts).

    Args:
        player: Seats, `[..., N]` int, the games on the last axis.
        num_players: The variant's number of seats.
        against_opponent: Whether the run has an opponent (`PPOConfig.opponent`).

    Returns:
        `[..., N]` bool.
    """
    if not against_opponent:
        return jnp.ones(player.shape, bool)
    return player == jnp.arange(player.shape[-1], dtype=player.dtype) % num_players


def batch_seat_gae(
    traj: Transition, last_player: jax.Array, last_value: jax.Array, gamma: float, gae_lambda: float
) -> tuple[jax.Array, jax.Array]:
    """`seat_gae` over the games of a `[T, N]` rollout.

    Args:
        traj: The rollout.
        last_player: `[N]`, the seat to move after it.
        last_value: `[N]`, the value of the position after it (for that seat).
        gamma: Discount.
        gae_lambda: GAE's lambda.

    Returns:
        `(advantages, valid)`, each `[T, N]`.
    """
    return jax.vmap(seat_gae, in_axes=(1, 1, 1, 1, 0, 0, None, None), out_axes=1)(
        traj.player, traj.rewards, traj.done, traj.value, last_player, last_value, gamma, gae_lambda
    )


def make_train(config: PPOConfig, mesh: Mesh | None = None) -> PPOTrainer:
    """PureJaxRL's entry point: the `PPOTrainer` of `config`; `make_train(config)(key)` trains. The nested
    functions below are one update in order: rollout, per-seat GAE, epochs, minibatches (the loss is
    `make_loss`). The environment, network, optimiser, shardings and jit wiring come from
    `blokus_agents.training.scaffold`, `blokus_agents.training.optim` and `blokus_agents.training.mesh`."""
    c = config
    parts = make_parts(c, mesh)
    env, network, optimizer = parts
    observe = jax.vmap(env.observe)
    env_step = jax.vmap(env.step_autoreset)
    loss = make_loss(c, network)  # 5. the loss
    # forward-only passes (acting, the last value) use the native convolution: the same function and parameters,
    # whatever form the loss's `network` has (on CPU "hybrid", whose forward pass is this one, or an explicit
    # "im2col", 4-8x slower forward)
    actor = network.clone(conv="native")
    opponent = opponent_policy(c, env)

    def learning(player: jax.Array) -> jax.Array:
        return network_seats(player, env.num_players, against_opponent=opponent is not None)

    def init(key: jax.Array) -> Runner:
        fields = fresh_runner_fields(parts, c.num_envs, key)
        return Runner(**fields, ref_params=fields["params"] if c.kl_coef > 0 else None)

    # 1. rollout
    def rollout(params: Any, env_state: State, key: jax.Array) -> tuple[State, Transition]:
        """Play `num_steps` steps in every game (the network's own moves, and the opponent's at its seats);
        returns the final states and the `[T, N]` batch."""

        def one(states, step_key):
            obs = observe(states)
            mask = states.legal_action_mask
            # a fixed move-model prior is computed once a position here and stored for the epochs' passes
            prior = model_scores(c.variant, params["params"]["move_model"], obs) if c.prior == "model" else None
            logits, value = actor.apply(params, obs, prior)
            action, log_prob = sample_masked(step_key, logits, mask)
            if opponent is not None:  # the opponent's moves where the network does not play (masked out of the loss)
                theirs = jax.vmap(opponent)(jax.random.split(jax.random.fold_in(step_key, 1), c.num_envs), states)
                action = jnp.where(learning(states.current_player), action, theirs)
            next_states, rewards, done = env_step(states, action)
            player = states.current_player
            return next_states, Transition(obs, mask, action, log_prob, value, player, rewards, done, prior)

        return jax.lax.scan(one, env_state, jax.random.split(key, c.num_steps))

    def update(runner: Runner) -> tuple[Runner, dict[str, jax.Array]]:
        """One update; returns the new runner and scalar metrics (means over the update's optimiser steps)."""
        key, rollout_key, shuffle_key = jax.random.split(runner.key, 3)

        env_state, traj = rollout(runner.params, runner.env_state, rollout_key)

        # 2. per-seat GAE (see seat_gae below)
        _, last_value = actor.apply(runner.params, observe(env_state))
        advantages, valid = batch_seat_gae(traj, env_state.current_player, last_value, c.gamma, c.gae_lambda)
        targets = advantages + traj.value
        valid = valid & learning(traj.player)  # against an opponent, the network learns from its own moves only

        # 3. epochs: each reshuffles the rollout into minibatches. Game-major layout [N, T, ...]: minibatches index
        # the time axis only, so the games' split across devices is kept.
        data = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), (traj, advantages, targets, valid))

        def epoch(carry, epoch_key):
            perms = jax.vmap(lambda k: jax.random.permutation(k, c.num_steps))(
                jax.random.split(epoch_key, c.num_envs)
            )  # [N, T]

            def split(x):
                x = jnp.take_along_axis(x, perms.reshape(perms.shape + (1,) * (x.ndim - 2)), axis=1)
                x = x.reshape(c.num_envs, c.num_minibatches, -1, *x.shape[2:])
                return jnp.swapaxes(x, 0, 1)  # [M, N, T/M, ...]

            return jax.lax.scan(minibatch, carry, jax.tree.map(split, data))

        # 4. minibatches: one optimiser step each
        def minibatch(carry, batch):
            params, opt_state = carry
            (_, terms), grads = jax.value_and_grad(loss, has_aux=True)(params, *batch, runner.ref_params)
            steps, opt_state = optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, steps), opt_state), terms

        (params, opt_state), terms = jax.lax.scan(
            epoch, (runner.params, runner.opt_state), jax.random.split(shuffle_key, c.update_epochs)
        )
        metrics = _update_metrics(terms, traj, targets, valid, opt_state, params)
        runner = runner.replace(
            params=params, opt_state=opt_state, env_state=env_state, key=key, update=runner.update + 1
        )
        return runner, metrics

    jitted = jit_trainer(init, update, c.num_updates, mesh)
    return PPOTrainer(
        config=c,
        env=env,
        network=network,
        optimizer=optimizer,
        mesh=mesh,
        init_pure=init,
        init=jitted.init,
        rollout=rollout,
        update_pure=update,
        update=jitted.update,
        loss=loss,
        train=jitted.train,
        shardings=jitted.shardings,
    )


def opponent_policy(config: PPOConfig, env: Env) -> Callable[[jax.Array, State], jax.Array] | None:
    """The policy `(key, state) -> action` of `config.opponent` on `env` (`None` in self-play).

    Args:
        config: The run's config.
        env: Its environment.

    Returns:
        The opponent's policy (a bot, a search, a network: any agent spec `resolve_agent` takes), or `None`.

    Raises:
        ConfigError: A spec `resolve_agent` refuses, said as the config's.
    """
    if not config.opponent:
        return None
    try:
        return resolve_agent(config.opponent, env)
    except BlokusError as exc:
        raise ConfigError(f"PPOConfig.opponent: {exc}") from exc


# ------------------------------------------------------------------------------------------- per-seat GAE
def seat_gae(
    players: jax.Array,
    rewards: jax.Array,
    dones: jax.Array,
    values: jax.Array,
    last_player: jax.Array,
    last_value: jax.Array,
    gamma: float,
    lam: float,
) -> tuple[jax.Array, jax.Array]:
    """Per-seat generalised advantage estimates for one game stream (see the module docstring for the method).

    Args:
        players: `int32[T]`, the seat that moved at each step.
        rewards: `f32[T, num_players]`, the rewards of each step.
        dones: `bool[T]`, the game ended on that step (the next step starts a new game).
        values: `f32[T]`, the value of the mover's position.
        last_player: The seat to move after the last step.
        last_value: The value of `last_player`'s position after the last step.
        gamma: The discount factor.
        lam: The GAE lambda.

    Returns:
        `(advantages f32[T], valid bool[T])`; `valid` is false for decisions that have no bootstrap value (their
        seat does not move again before the rollout ends and the game is still running); their advantage is 0.
    """
    num_players = rewards.shape[-1]
    seats = jnp.arange(num_players)
    init = (
        jnp.where(seats == last_player, last_value, 0.0),  # value of each seat's next decision
        jnp.zeros((num_players,)),  # advantage of each seat's next decision
        jnp.zeros((num_players,)),  # rewards received since each seat last moved
        seats == last_player,
    )  # whether that next value is known

    def back(carry, step):
        next_value, next_adv, reward_sum, known = carry
        player, reward, done, value = step
        next_value, next_adv, reward_sum = (jnp.where(done, 0.0, x) for x in (next_value, next_adv, reward_sum))
        known = known | done
        reward_sum = reward_sum + reward
        delta = reward_sum[player] + gamma * next_value[player] - value
        adv = jnp.where(known[player], delta + gamma * lam * next_adv[player], 0.0)
        mine = seats == player
        carry = (
            jnp.where(mine, value, next_value),
            jnp.where(mine, adv, next_adv),
            jnp.where(mine, 0.0, reward_sum),
            known | mine,
        )
        return carry, (adv, known[player])

    _, (advantages, valid) = jax.lax.scan(back, init, (players, rewards, dones, values), reverse=True)
    return advantages, valid


__all__ = [
    "PPOConfig",
    "PPOTrainer",
    "Runner",
    "Transition",
    "make_train",
    "opponent_policy",
    "seat_gae",
]
