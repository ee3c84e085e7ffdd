"""AlphaZero self-play for blokus-jax: search-guided self-play, a replay buffer and the network update, all on device.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct
from jax.sharding import Mesh

from blokus_agents.core.masking import masked_logits
from blokus_agents.core.policies import AgentSpecError
from blokus_agents.players.configs import AZConfig
from blokus_agents.players.networks import PolicyValueNet
from blokus_agents.search.gumbel import SearchOutput, make_search, network_evaluator
from blokus_agents.search.mcts import teacher_search
from blokus_agents.training.checks import check_candidates
from blokus_agents.training.replay import Buffer, Sample, buffer_finish, buffer_sample, buffer_write, empty_buffer
from blokus_agents.training.scaffold import fresh_runner_fields, jit_trainer, make_parts, param_norm
from blokus_jax import rules, symmetry
from blokus_jax.env import Env, State
from blokus_jax.errors import ConfigError


class AZRunner(struct.PyTreeNode):
    """Everything that changes during AlphaZero training, the whole state a checkpoint stores (the fields of
    `blokus_agents.training.ppo.Runner` plus the replay `buffer`). `key` is a raw `uint32[2]` PRNG key; `update` counts
    completed updates; `opt_state` holds the learning-rate schedule."""

    params: Any
    opt_state: Any
    env_state: State
    buffer: Buffer
    key: jax.Array
    update: jax.Array


@dataclass(frozen=True, eq=False)
class AZTrainer:
    """What `make_train` returns (the same surface as `blokus_agents.training.ppo.PPOTrainer`): `init(key) -> AZRunner`
    and `update(runner) -> (runner, metrics)` jitted (`init_pure`/`update_pure` unjitted), `train(key)` every update of
    the config in one jitted `lax.scan`; `search` the batched self-play search `(params, key, states) -> SearchOutput`
    (`teacher` the teacher's, or `None`), `play_step(params, key, states, buffer)` one self-play move of every game and
    `loss(params, sample)`, exposed for tests and benchmarks. `update` donates its runner (pass each runner once and use
    the one returned). With `mesh` the games and their buffer slots are split across its devices as `shardings` says."""

    config: AZConfig
    env: Env
    network: PolicyValueNet
    optimizer: optax.GradientTransformation
    mesh: Mesh | None
    search: Callable[[Any, jax.Array, State], SearchOutput]
    play_step: Callable[..., tuple]
    init_pure: Callable[[jax.Array], AZRunner]
    init: Callable[[jax.Array], AZRunner]
    update_pure: Callable[[AZRunner], tuple[AZRunner, dict]]
    update: Callable[[AZRunner], tuple[AZRunner, dict]]
    loss: Callable[..., tuple[jax.Array, dict]]
    train: Callable[[jax.Array], tuple[AZRunner, dict]]
    shardings: AZRunner | None = None
    teacher: Callable[[Any, jax.Array, State], SearchOutput] | None = None

    def __call__(self, key: jax.Array) -> tuple[AZRunner, dict[str, jax.Array]]:
        return self.train(key)


def make_searches(config: AZConfig, env: Env, network: PolicyValueNet) -> tuple[Callable, Callable | None]:
    """`(search, teacher)` of a run: the network's batched self-play search with `config`'s settings and
    exploration, and the teacher's network-free search (`None` without a teacher).

    Args:
        config: The AlphaZero run's config (its search settings, exploration, `teacher` and `root_value`).
        env: The environment.
        network: The network whose `apply` the self-play search evaluates positions with.

    Returns:
        `(search, teacher)`, each a batched `(params, key, states) -> SearchOutput`; `teacher` is `None`
        in a run without a teacher.

    Raises:
        ConfigError: A bad teacher spec, a `k` above the variant's placements (the replay buffer's targets are `k`
            wide) or a `root_value` blend with a per-seat value head.
    """
    c = config
    check_candidates(c, env)
    o = c.search_settings()
    search = make_search(
        env,
        network_evaluator(env, network.apply),
        sims=o.sims,
        k=o.k,
        considered=o.considered,
        gumbel_scale=o.gumbel_scale,
        root_noise=c.root_noise,
        root_alpha=c.root_alpha,
    )
    teacher = None
    if c.teacher:
        try:
            teacher = teacher_search(
                env, c.teacher, k=c.k, gumbel_scale=c.gumbel_scale, root_noise=c.root_noise, root_alpha=c.root_alpha
            )
        except AgentSpecError as exc:
            raise ConfigError(f"AZConfig.teacher: {exc}") from exc
    if c.root_value and network.value_dim != 1:
        raise ConfigError(
            f"AZConfig.root_value={c.root_value} blends the search's root value into scalar value targets, but "
            f"{c.variant!r} has {env.num_players} players, whose value head predicts every seat's result; use 0"
        )
    return search, teacher


def make_loss(config: AZConfig, network: PolicyValueNet, width: int) -> Callable[..., tuple[jax.Array, dict]]:
    """Step 3 of `make_train`: the AlphaZero loss `loss(params, batch)` of `config` on `network`.

    Args:
        config: The AlphaZero run's config (its `value_coef`).
        network: The network trained.
        width: The board's width in cells, to unpack the stored legal moves.

    Returns:
        `loss(params, batch) -> (total, terms)`: the policy cross-entropy against the search weights (positions
        with a choice only) plus `value_coef` times the value's squared error; `terms` holds `policy_loss`,
        `value_loss`, `policy_kl` and `valid_fraction`.
    """
    c = config

    def loss(params: Any, batch: Sample) -> tuple[jax.Array, dict[str, jax.Array]]:
        """AlphaZero loss on a batch (any leading shape): policy cross-entropy against the search weights over the
        candidates (positions with a choice only) plus `value_coef` times the value head's squared error (a
        per-seat head: its mean over the seats). Returns `(total, terms)`; `policy_kl` is the cross-entropy
        minus the targets' entropy."""
        logits, value = network.apply(params, batch.obs)
        mask = rules.legal_mask(batch.legal_bits, width)
        log_probs = jax.nn.log_softmax(masked_logits(logits, mask), axis=-1)
        chosen = jnp.take_along_axis(log_probs, batch.candidates, axis=-1)
        cross = -jnp.sum(jnp.where(batch.weights > 0, batch.weights * chosen, 0.0), axis=-1)
        entropy = -jnp.sum(jnp.where(batch.weights > 0, batch.weights * jnp.log(batch.weights), 0.0), axis=-1)
        choice = batch.valid & (jnp.sum(mask, axis=-1) > 1)
        w_pi, w_v = choice.astype(jnp.float32), batch.valid.astype(jnp.float32)
        mean = lambda x, w: jnp.sum(x * w) / jnp.maximum(jnp.sum(w), 1.0)  # noqa: E731
        policy_loss = mean(cross, w_pi)
        error = (value - batch.value) ** 2
        value_loss = mean(error if error.ndim == w_v.ndim else error.mean(axis=-1), w_v)
        total = policy_loss + c.value_coef * value_loss
        return total, dict(
            policy_loss=policy_loss,
            value_loss=value_loss,
            policy_kl=mean(cross - entropy, w_pi),
            valid_fraction=w_v.mean(),
        )

    return loss


def make_reflect(config: AZConfig, env: Env) -> Callable[[jax.Array, Sample], Sample] | None:
    """The augmentation of replayed batches that `config.reflect` asks for: `reflect(key, batch)` trains each
    position as its reflection in the board's diagonal with probability `reflect` (observation, packed legal
    moves and candidate ids reflected; weights and values unchanged), or `None` at `reflect=0`. Raises
    `ConfigError` on a variant where that reflection is not a symmetry of the game."""
    if not config.reflect:
        return None
    if not symmetry.is_reflection_symmetric(env.variant):
        raise ConfigError(
            f"AZConfig.reflect={config.reflect}: reflecting {env.variant.name!r}'s board in its diagonal is not a "
            f"symmetry of the game (its start cells move); use 0, or a variant where it is (duo, junior)"
        )
    actions = jnp.asarray(symmetry.reflected_actions(env.variant))

    def reflect(key: jax.Array, batch: Sample) -> Sample:
        flip = jax.random.bernoulli(key, config.reflect, batch.valid.shape)
        mirrored = batch.replace(
            obs=symmetry.reflect_observation(batch.obs),
            legal_bits=symmetry.reflect_legal_bits(env.variant, batch.legal_bits),
            candidates=actions[batch.candidates],
        )
        return jax.tree.map(
            lambda new, old: jnp.where(flip.reshape(flip.shape + (1,) * (new.ndim - flip.ndim)), new, old),
            mirrored,
            batch,
        )

    return reflect


def make_optimise(
    config: AZConfig, optimizer: optax.GradientTransformation, loss: Callable, reflect: Callable | None
) -> Callable:
    """Step 2 of `make_train`: the `train_steps` optimiser steps of one update, each on `batch_size` positions
    replayed evenly from every env's finished games.

    Args:
        config: The AlphaZero run's config (its `batch_size`, `num_envs` and `train_steps`).
        optimizer: The optimiser.
        loss: `loss(params, batch) -> (total, terms)`, from `make_loss`.
        reflect: The augmentation of replayed batches (`make_reflect`), or `None`.

    Returns:
        `optimise(params, opt_state, buffer, key) -> (params, opt_state, terms)`; `terms` are the loss
        terms of every step.
    """
    c = config
    per_env = c.batch_size // c.num_envs

    def step(buf: Buffer, carry: tuple, step_key: jax.Array) -> tuple[tuple, dict]:
        params, opt_state = carry
        batch = jax.vmap(buffer_sample, in_axes=(0, 0, None))(jax.random.split(step_key, c.num_envs), buf, per_env)
        if reflect is not None:
            batch = reflect(jax.random.fold_in(step_key, 1), batch)
        (_, terms), grads = jax.value_and_grad(loss, has_aux=True)(params, batch)
        steps, opt_state = optimizer.update(grads, opt_state, params)
        return (optax.apply_updates(params, steps), opt_state), terms

    def optimise(params: Any, opt_state: Any, buf: Buffer, key: jax.Array) -> tuple[Any, Any, dict]:
        (params, opt_state), terms = jax.lax.scan(
            functools.partial(step, buf), (params, opt_state), jax.random.split(key, c.train_steps)
        )
        return params, opt_state, terms

    return optimise


def make_train(config: AZConfig, mesh: Mesh | None = None) -> AZTrainer:
    """The `AZTrainer` of `config`; `make_train(config)(key)` trains. The nested functions below are one
    update in order: self-play (search, store, step), then the optimiser steps on replayed positions (the loss
    is `make_loss`, the searches `make_searches`)."""
    c = config
    parts = make_parts(c, mesh)
    env, network, optimizer = parts
    reflect = make_reflect(c, env)  # a replayed position as its mirror image, where that is the same game
    search, teacher = make_searches(c, env, network)
    observe, env_step = jax.vmap(env.observe), jax.vmap(env.step_autoreset)
    loss = make_loss(c, network, env.board_shape[1])  # 3. the loss
    optimise = make_optimise(c, optimizer, loss, reflect)

    def init(key: jax.Array) -> AZRunner:
        return AZRunner(
            **fresh_runner_fields(parts, c.num_envs, key),
            buffer=empty_buffer(env, c.num_envs, c.games_per_env, c.k, network.value_dim),
        )

    def play_step(params: Any, key: jax.Array, states: State, buf: Buffer, by: Callable | None = None):
        """One self-play move of every game: search (the network's, or the search `by`, e.g. the teacher's), store
        the position and its targets, step (auto-reset), and finish the games that ended. Returns `(states, buffer,
        rewards, done, root_value)`."""
        out = (by or search)(params, key, states)
        buf = jax.vmap(buffer_write)(
            buf,
            observe(states),
            states.legal_bits,
            out.candidates,
            out.candidate_weights,
            states.current_player,
            out.value if c.root_value else None,
        )
        states, rewards, done = env_step(states, out.action)
        finish = functools.partial(buffer_finish, blend=c.root_value)
        return states, jax.vmap(finish)(buf, rewards, done), rewards, done, out.value

    def update(runner: AZRunner) -> tuple[AZRunner, dict[str, jax.Array]]:
        key, play_key, train_key = jax.random.split(runner.key, 3)

        # 1. self-play with the current network (or, for the first teacher_updates updates, with the teacher)
        def self_play(by: Callable, carry: tuple) -> tuple:
            def play(carry, step_key):
                states, buf, rewards, done, value = play_step(runner.params, step_key, *carry, by=by)
                return (states, buf), (done, value)

            return jax.lax.scan(play, carry, jax.random.split(play_key, c.num_steps))

        carry = (runner.env_state, runner.buffer)
        taught = runner.update < c.teacher_updates
        if teacher is None:
            (env_state, buf), (done, root_value) = self_play(search, carry)
        else:
            (env_state, buf), (done, root_value) = jax.lax.cond(
                taught, functools.partial(self_play, teacher), functools.partial(self_play, search), carry
            )

        # 2. optimiser steps on positions replayed from every env's finished games
        params, opt_state, terms = optimise(runner.params, runner.opt_state, buf, train_key)
        metrics = {k: v.mean() for k, v in terms.items()}
        metrics.update(
            learning_rate=opt_state.hyperparams["learning_rate"],
            games_finished=jnp.sum(done),
            buffer_positions=jnp.sum(buf.length),
            root_value=jnp.mean(root_value),
            param_norm=param_norm(params),
        )
        if teacher is not None:
            metrics["by_teacher"] = taught.astype(jnp.float32)
        runner = runner.replace(
            params=params, opt_state=opt_state, env_state=env_state, buffer=buf, key=key, update=runner.update + 1
        )
        return runner, metrics

    jitted = jit_trainer(init, update, c.num_updates, mesh)
    return AZTrainer(
        config=c,
        env=env,
        network=network,
        optimizer=optimizer,
        mesh=mesh,
        search=search,
        play_step=play_step,
        init_pure=init,
        init=jitted.init,
        update_pure=update,
        update=jitted.update,
        loss=loss,
        train=jitted.train,
        shardings=jitted.shardings,
        teacher=teacher,
    )


__all__ = [
    "AZConfig",
    "AZRunner",
    "AZTrainer",
    "Buffer",
    "Sample",
    "buffer_finish",
    "buffer_sample",
    "buffer_write",
    "empty_buffer",
    "make_train",
]
