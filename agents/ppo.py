"""PPO self-play for blokus-jax, PureJaxRL style: everything from the rollout to the optimiser step runs on device.

``make_train(config)(key)`` is the whole training run as one jitted function (``lax.scan`` over updates);
:class:`PPOTrainer` exposes the same jitted ``update`` to the host loop in :mod:`agents.train` (progress bar,
evaluation, checkpoints). One update is:

1. **Rollout**: ``num_steps`` steps of ``num_envs`` games in parallel (``vmap`` of ``env.step_autoreset``), every move
   sampled from the one shared network for whichever seat is to move (self-play), illegal actions masked out.
2. **Per-seat GAE** (:func:`seat_gae`, the credit assignment). A seat's decisions form their own chain: the reward of
   a decision is everything that seat receives until its *own* next decision (in Blokus: its terminal +-1, which
   usually arrives on another seat's move), and it bootstraps from the value of its own next decision, or 0 when the
   game ends first. Other seats' moves in between are part of the environment. A decision whose seat has no later
   decision inside the rollout and whose game has not ended is left out of the loss (no bootstrap value exists;
   the seat to move at the end of the rollout is bootstrapped from the final state's value instead). Forced passes
   are decisions of their seat (their value is trained) but carry no policy gradient: their only action has
   log-probability 0, so they are also left out of the policy loss and its advantage normalisation.
3. **Optimisation**: ``update_epochs`` passes over ``num_minibatches`` minibatches; clipped policy loss, clipped value
   loss, entropy bonus; advantages normalised per minibatch; gradients clipped by global norm, Adam, learning rate
   decaying linearly to ``final_lr_fraction`` over the run.

Data parallelism: with a :class:`jax.sharding.Mesh` (see :func:`make_mesh`), the batch of games is split across the
devices along the ``"data"`` axis and parameters are replicated; XLA's SPMD partitioner turns the loss mean into
per-device partial sums plus an all-reduce, i.e. gradients are averaged across devices. Minibatches take the same
share of time steps from *every* game (a per-game random permutation of the rollout's time axis), so they never move
data between devices and the algorithm does not depend on the device count. For several hosts, call
``jax.distributed.initialize()`` on every host before building the trainer and pass ``make_mesh(jax.devices())``:
each host then steps its own share of the games (not tested here, as there is one host).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import struct
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from agents.arena import ParamPolicy
from agents.bots import Policy
from agents.networks import PolicyValueNet, make_network, masked_logits, sample_masked
from blokus_jax.env import Env, State, make
from blokus_jax.errors import CheckpointError
from blokus_jax.observe import Observation


@dataclass(frozen=True)
class PPOConfig:
    """Every setting of a training run (saved with each checkpoint; a run is reproducible from it and its seed).

    ``total_steps`` counts environment steps (moves of any seat, summed over games) and sets the length of the
    learning-rate schedule; one update consumes ``num_envs * num_steps`` of them.
    """

    variant: str = "simple"
    reward: str = "winloss"
    num_envs: int = 64
    num_steps: int = 32
    total_steps: int = 500_000
    update_epochs: int = 4
    num_minibatches: int = 4
    learning_rate: float = 1e-3
    final_lr_fraction: float = 0.1
    gamma: float = 1.0
    gae_lambda: float = 0.95
    clip_eps: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    channels: int = 32
    blocks: int = 2
    value_hidden: int = 64
    seed: int = 0

    def __post_init__(self):
        for name in ("num_envs", "num_steps", "total_steps", "update_epochs", "num_minibatches", "channels"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"PPOConfig.{name} must be a positive int, got {getattr(self, name)!r}")
        if self.num_steps % self.num_minibatches:
            raise ValueError(f"num_steps ({self.num_steps}) must be a multiple of num_minibatches "
                             f"({self.num_minibatches}): every minibatch takes the same share of each game's steps")

    @property
    def steps_per_update(self) -> int:
        """Environment steps collected per update (``num_envs * num_steps``)."""
        return self.num_envs * self.num_steps

    @property
    def num_updates(self) -> int:
        """Updates in the run: ``total_steps // steps_per_update``, at least 1."""
        return max(1, self.total_steps // self.steps_per_update)

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PPOConfig":
        """A config from :meth:`to_dict` output; raises ``CheckpointError`` naming unknown fields."""
        unknown = sorted(set(data) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise CheckpointError(f"unknown PPOConfig fields {unknown} (checkpoint from another version?); "
                                  f"valid fields are {[f.name for f in dataclasses.fields(cls)]}")
        return cls(**data)

    def replace(self, **changes) -> "PPOConfig":
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)


class Transition(NamedTuple):
    """One rollout step of every game (leading axes ``[T, N]`` after the scan)."""

    obs: Observation
    mask: jax.Array        # bool[A] legal actions
    action: jax.Array      # int32
    log_prob: jax.Array    # f32 under the acting policy
    value: jax.Array       # f32 value of the seat to move
    player: jax.Array      # int32 seat that moved
    rewards: jax.Array     # f32[num_players] rewards of this step
    done: jax.Array        # bool: the game ended on this step


class Runner(struct.PyTreeNode):
    """Everything that changes during training: the whole state a checkpoint stores.

    ``key`` is a raw ``uint32[2]`` PRNG key; ``update`` counts completed updates; ``lr_horizon`` is the number of
    updates over which the learning rate decays (fixed when the run starts).
    """

    params: Any
    opt_state: Any
    env_state: State
    key: jax.Array
    update: jax.Array
    lr_horizon: jax.Array


# ------------------------------------------------------------------------------------------- credit assignment
def seat_gae(players: jax.Array, rewards: jax.Array, dones: jax.Array, values: jax.Array, last_player: jax.Array,
             last_value: jax.Array, gamma: float, lam: float) -> tuple[jax.Array, jax.Array]:
    """Per-seat generalised advantage estimates for one game stream (see the module docstring for the method).

    Args: ``players`` ``int32[T]`` seat that moved at each step; ``rewards`` ``f32[T, num_players]`` rewards of each
    step; ``dones`` ``bool[T]`` the game ended on that step (the next step starts a new game); ``values`` ``f32[T]``
    value of the mover's position; ``last_player``/``last_value``: seat to move after the last step and its value.
    Returns ``(advantages f32[T], valid bool[T])``; ``valid`` is false for decisions that have no bootstrap value
    (their seat does not move again before the rollout ends and the game is still running); their advantage is 0.
    """
    num_players = rewards.shape[-1]
    seats = jnp.arange(num_players)
    init = (jnp.where(seats == last_player, last_value, 0.0),     # value of each seat's next decision
            jnp.zeros((num_players,)),                            # advantage of each seat's next decision
            jnp.zeros((num_players,)),                            # rewards received since each seat last moved
            seats == last_player)                                 # whether that next value is known

    def back(carry, step):
        next_value, next_adv, reward_sum, known = carry
        player, reward, done, value = step
        next_value, next_adv, reward_sum = (jnp.where(done, 0.0, x) for x in (next_value, next_adv, reward_sum))
        known = known | done
        reward_sum = reward_sum + reward
        delta = reward_sum[player] + gamma * next_value[player] - value
        adv = jnp.where(known[player], delta + gamma * lam * next_adv[player], 0.0)
        mine = seats == player
        carry = (jnp.where(mine, value, next_value), jnp.where(mine, adv, next_adv),
                 jnp.where(mine, 0.0, reward_sum), known | mine)
        return carry, (adv, known[player])

    _, (advantages, valid) = jax.lax.scan(back, init, (players, rewards, dones, values), reverse=True)
    return advantages, valid


# ------------------------------------------------------------------------------------------------------ sharding
def make_mesh(devices: list | None = None) -> Mesh:
    """A one-axis (``"data"``) mesh over ``devices`` (default: every local device) for data-parallel training."""
    devices = jax.local_devices() if devices is None else list(devices)
    return Mesh(np.asarray(devices), ("data",))


def runner_shardings(runner: Runner, mesh: Mesh) -> Runner:
    """Shardings of a :class:`Runner` on ``mesh``: the games' states split along their batch axis, the rest
    replicated. Returns a pytree of ``NamedSharding`` with the runner's structure."""
    split, whole = NamedSharding(mesh, PartitionSpec("data")), NamedSharding(mesh, PartitionSpec())
    return runner.replace(params=jax.tree.map(lambda _: whole, runner.params),
                          opt_state=jax.tree.map(lambda _: whole, runner.opt_state),
                          env_state=jax.tree.map(lambda _: split, runner.env_state),
                          key=whole, update=whole, lr_horizon=whole)


# ------------------------------------------------------------------------------------------------------ trainer
class PPOTrainer:
    """The environment, network, optimiser and jitted functions of one training configuration.

    ``init(key) -> Runner`` starts a run; ``update(runner) -> (runner, metrics)`` is one jitted PPO update (rollout,
    per-seat GAE, minibatch epochs). With ``mesh`` the games are split across its devices (``num_envs`` must be a
    multiple of the mesh size).
    """

    def __init__(self, config: PPOConfig, mesh: Mesh | None = None):
        self.config = config
        self.env: Env = make(config.variant, reward=config.reward)
        self.network: PolicyValueNet = make_network(self.env, config.channels, config.blocks, config.value_hidden)
        self.optimizer = optax.chain(optax.clip_by_global_norm(config.max_grad_norm), optax.scale_by_adam(eps=1e-5))
        self.mesh = mesh
        if mesh is not None and config.num_envs % mesh.size:
            raise ValueError(f"num_envs ({config.num_envs}) must be a multiple of the number of devices "
                             f"({mesh.size}) to split the games evenly")
        self._observe = jax.vmap(self.env.observe)
        self._step = jax.vmap(self.env.step_autoreset)
        shardings = None if mesh is None else runner_shardings(jax.eval_shape(self._init, jax.random.PRNGKey(0)), mesh)
        self.init = jax.jit(self._init, out_shardings=shardings)
        self.update = jax.jit(self.update_step, out_shardings=None if mesh is None else (shardings, None))

    # -------------------------------------------------------------------------------------------- pure functions
    def _init(self, key: jax.Array) -> Runner:
        init_key, key = jax.random.split(key)
        env_state = jax.vmap(self.env.init)(jax.random.split(init_key, self.config.num_envs))
        params = self.network.init(init_key, jax.tree.map(lambda x: x[:1], self._observe(env_state)))
        return Runner(params=params, opt_state=self.optimizer.init(params), env_state=env_state, key=key,
                      update=jnp.int32(0), lr_horizon=jnp.int32(self.config.num_updates))

    def learning_rate(self, update: jax.Array, horizon: jax.Array) -> jax.Array:
        """Learning rate of update number ``update``: linear decay from ``learning_rate`` to ``final_lr_fraction``
        of it over ``horizon`` updates, constant after."""
        c = self.config
        progress = jnp.minimum(update / jnp.maximum(horizon, 1), 1.0)
        return c.learning_rate * (1.0 - (1.0 - c.final_lr_fraction) * progress)

    def rollout(self, params: Any, env_state: State, key: jax.Array) -> tuple[State, Transition]:
        """Play ``num_steps`` self-play steps in every game; returns the final states and the ``[T, N]`` batch."""
        def one(carry, step_key):
            states = carry
            obs = self._observe(states)
            mask = states.legal_action_mask
            logits, value = self.network.apply(params, obs)
            action, log_prob = sample_masked(step_key, logits, mask)
            next_states, rewards, done = self._step(states, action)
            return next_states, Transition(obs, mask, action, log_prob, value, states.current_player, rewards, done)

        return jax.lax.scan(one, env_state, jax.random.split(key, self.config.num_steps))

    def loss(self, params: Any, batch: Transition, advantages: jax.Array, targets: jax.Array,
             valid: jax.Array) -> tuple[jax.Array, dict[str, jax.Array]]:
        """PPO loss on a minibatch (any leading shape); returns ``(total, terms)`` with the policy, value and entropy
        terms, approximate KL and clip fraction. ``valid`` weights every term; the policy terms also skip forced
        moves (one legal action)."""
        c = self.config
        logits, value = self.network.apply(params, batch.obs)
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
        terms = dict(policy_loss=policy_loss, value_loss=value_loss, entropy=entropy,
                     approx_kl=mean((ratio - 1) - log_ratio, w_pi),
                     clip_fraction=mean((jnp.abs(ratio - 1) > c.clip_eps).astype(jnp.float32), w_pi))
        return total, terms

    def update_step(self, runner: Runner) -> tuple[Runner, dict[str, jax.Array]]:
        """One PPO update (pure; :attr:`update` is its jitted form); returns the new runner and scalar metrics."""
        c = self.config
        key, rollout_key, shuffle_key = jax.random.split(runner.key, 3)
        env_state, traj = self.rollout(runner.params, runner.env_state, rollout_key)
        _, last_value = self.network.apply(runner.params, self._observe(env_state))
        advantages, valid = jax.vmap(seat_gae, in_axes=(1, 1, 1, 1, 0, 0, None, None), out_axes=1)(
            traj.player, traj.rewards, traj.done, traj.value, env_state.current_player, last_value,
            c.gamma, c.gae_lambda)
        targets = advantages + traj.value
        # Game-major layout [N, T, ...]: minibatches index the time axis only, so the games' split is kept.
        data = jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), (traj, advantages, targets, valid))
        lr = self.learning_rate(runner.update, runner.lr_horizon)
        grad_fn = jax.value_and_grad(self.loss, has_aux=True)

        def epoch(carry, epoch_key):
            def minibatch(carry, mb):
                params, opt_state = carry
                (_, terms), grads = grad_fn(params, *mb)
                updates, opt_state = self.optimizer.update(grads, opt_state, params)
                params = optax.apply_updates(params, jax.tree.map(lambda u: -lr * u, updates))
                return (params, opt_state), terms

            perms = jax.vmap(lambda k: jax.random.permutation(k, c.num_steps))(
                jax.random.split(epoch_key, c.num_envs))                                 # [N, T]
            def split(x):
                x = jnp.take_along_axis(x, perms.reshape(perms.shape + (1,) * (x.ndim - 2)), axis=1)
                x = x.reshape(c.num_envs, c.num_minibatches, -1, *x.shape[2:])
                return jnp.swapaxes(x, 0, 1)                                             # [M, N, T/M, ...]
            return jax.lax.scan(minibatch, carry, jax.tree.map(split, data))

        (params, opt_state), terms = jax.lax.scan(epoch, (runner.params, runner.opt_state),
                                                  jax.random.split(shuffle_key, c.update_epochs))
        w = valid.astype(jnp.float32)
        residual = jnp.sum(w * (targets - traj.value) ** 2) / jnp.maximum(w.sum(), 1)
        centred = jnp.sum(w * (targets - jnp.sum(w * targets) / jnp.maximum(w.sum(), 1)) ** 2) / jnp.maximum(
            w.sum(), 1)
        metrics = {k: v.mean() for k, v in terms.items()}
        metrics.update(explained_variance=1.0 - residual / jnp.maximum(centred, 1e-8), learning_rate=lr,
                       games_finished=jnp.sum(traj.done), valid_fraction=w.mean())
        runner = runner.replace(params=params, opt_state=opt_state, env_state=env_state, key=key,
                                update=runner.update + 1)
        return runner, metrics

    # ------------------------------------------------------------------------------------------------- policies
    def policy(self, params: Any, greedy: bool = True) -> Policy:
        """An arena policy ``(key, state) -> int32`` that plays ``params``: the most likely legal action when
        ``greedy``, else a sample from the masked policy."""
        return network_policy(self.env, self.network, params, greedy)


def network_policy(env: Env, network: PolicyValueNet, params: Any, greedy: bool = True) -> ParamPolicy:
    """A pure policy ``(key, state) -> int32`` for one (unbatched) state of ``env`` from a network and its params:
    argmax of the masked logits when ``greedy``, else a masked sample. The action is always legal. It is an arena
    :class:`~agents.arena.ParamPolicy`, so evaluating new params reuses the compiled match."""
    return ParamPolicy(_network_policy_fn(env, network, greedy), params)


@functools.lru_cache(maxsize=32)
def _network_policy_fn(env: Env, network: PolicyValueNet, greedy: bool):
    def policy(params: Any, key: jax.Array, state: State) -> jax.Array:
        logits, _ = network.apply(params, env.observe(state))
        mask = state.legal_action_mask
        if greedy:
            return jnp.argmax(masked_logits(logits, mask)).astype(jnp.int32)
        return sample_masked(key, logits, mask)[0]

    return policy


def make_train(config: PPOConfig, mesh: Mesh | None = None):
    """PureJaxRL entry point: returns a jitted ``train(key) -> (runner, metrics)`` that runs all
    ``config.num_updates`` updates in one ``lax.scan`` (metrics stacked per update). Shares
    :meth:`PPOTrainer.update_step` with the host loop of :mod:`agents.train`."""
    trainer = PPOTrainer(config, mesh)

    def train(key: jax.Array) -> tuple[Runner, dict[str, jax.Array]]:
        runner = trainer.init(key)
        return jax.lax.scan(lambda r, _: trainer.update_step(r), runner, None, config.num_updates)

    return jax.jit(train)


def load_policy(path: str, env: Env, greedy: bool = True) -> Policy:
    """The policy of the latest checkpoint in run directory ``path`` (see :mod:`agents.checkpoint`), for ``env``;
    raises ``CheckpointError`` when there is none, it is corrupt, or it was trained on another variant."""
    from agents import checkpoint

    config, params = checkpoint.load_params(path)
    if config.variant != env.variant.name:
        raise CheckpointError(f"checkpoint {path!r} was trained on variant {config.variant!r}, not "
                              f"{env.variant.name!r}; use --variant {config.variant}")
    network = make_network(env, config.channels, config.blocks, config.value_hidden)
    return network_policy(env, network, params, greedy)


__all__ = ["PPOConfig", "PPOTrainer", "Runner", "Transition", "load_policy", "make_mesh", "make_train",
           "network_policy", "runner_shardings", "seat_gae"]
