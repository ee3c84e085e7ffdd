"""The checks a run passes before anything is compiled or written (`check_trainable`): a config of a known
variant, an AlphaZero `k` within the variant's placements (`check_candidates`), a replay ring that keeps games until
they are trained on (`ReplayWarning`), and a memory estimate (`estimate_memory`) within the memory here.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import warnings
from typing import Any

import jax
import numpy as np

from blokus_agents.core.messages import gib
from blokus_agents.core.messages import shown as _shown
from blokus_agents.core.options import machine_memory
from blokus_agents.core.policies import AgentSpecError
from blokus_agents.players.configs import AZConfig, RunConfig
from blokus_agents.search.mcts import teacher_memory
from blokus_agents.training.replay import empty_buffer
from blokus_jax.env import Env, make
from blokus_jax.errors import BlokusError, ConfigError
from blokus_jax.rollout import max_game_length


class ReplayWarning(UserWarning):
    """An AlphaZero config whose replay ring may overwrite finished games before any optimiser step sees them."""


def _nbytes(tree: Any) -> int:
    return sum(int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize for x in jax.tree.leaves(tree))


def estimate_memory(config: RunConfig, eval_games: int = 0) -> dict[str, tuple[int, tuple[str, ...]]]:
    """A lower estimate of the device memory (bytes) that training `config` needs, by part: `{part: (bytes,
    fields that scale it)}`. Counts the arrays the update keeps alive at once (games, rollout or replay buffer,
    search tree and a teacher's, network activations and logits of a batch); XLA's temporaries come on top, so a
    run that is refused for memory would certainly not fit. `eval_games` adds the evaluation's games, played all
    at once. Shapes come from `jax.eval_shape` (nothing is allocated)."""
    env = make(config.variant)
    state = jax.eval_shape(env.init)
    state_bytes = _nbytes(state)
    obs_bytes = _nbytes(jax.eval_shape(env.observe, state))
    rows, cols = env.board_shape
    actions = env.num_actions
    # activations of one position through the network (kept for the backward pass), and its logits
    forward = 4 * (config.channels * rows * cols * (2 * config.blocks + 2) + config.value_hidden + 2 * actions)
    games = config.num_envs * 2 * state_bytes
    evaluation = {"evaluation games": (eval_games * (2 * state_bytes + forward), ("eval_games",))} if eval_games else {}
    if config.algorithm == "ppo":
        minibatch = config.num_envs * config.num_steps // config.num_minibatches
        return {
            **evaluation,
            "games": (games, ("num_envs",)),
            "rollout": (
                config.num_envs * config.num_steps * (obs_bytes + actions + 32),
                ("num_envs", "num_steps"),
            ),
            "minibatch": (3 * minibatch * forward, ("num_envs", "num_steps", "num_minibatches", "channels")),
        }
    value_dim = config.value_dim(env.num_players)
    buffer = jax.eval_shape(lambda: empty_buffer(env, config.num_envs, config.games_per_env, config.k, value_dim))
    teacher = {}
    if config.teacher:
        try:
            per_game = teacher_memory(env, config.teacher, config.k)
        except AgentSpecError as exc:
            raise ConfigError(f"AZConfig.teacher: {exc}") from exc
        teacher = {"teacher search": (config.num_envs * per_game, ("teacher", "num_envs"))}
    return {
        **evaluation,
        **teacher,
        "games": (games, ("num_envs",)),
        "search tree": (
            config.num_envs * (config.sims + 1) * (state_bytes + 24 * min(config.k, actions) + 64),
            ("sims", "num_envs"),
        ),
        "search evaluations": (config.num_envs * (forward + 16 * actions), ("num_envs",)),
        "replay buffer": (_nbytes(buffer), ("games_per_env", "num_envs")),
        "training batch": (3 * config.batch_size * (forward + obs_bytes + actions), ("batch_size",)),
    }


def _gb(n: int) -> str:
    return gib(n, mib_below=2**27)


def check_candidates(config: AZConfig, env: Env) -> None:
    """Raise `ConfigError` when an AlphaZero config's `k` (search candidates a node, and the width of the replay
    buffer's targets) is more than the placements of `env`'s variant (its actions but the pass)."""
    placements = env.pass_action
    if config.k > placements:
        raise ConfigError(
            f"AZConfig.k={config.k} is more than the {placements:,} placements of {config.variant!r}; give k at "
            f"most {placements}"
        )


def check_trainable(config: RunConfig, limit: int | None = None, eval_games: int = 0) -> None:
    """Checks a run needs before anything is compiled or written: `config` is a config of a known variant, an
    AlphaZero `k` is at most the variant's number of placements (`check_candidates`), its replay ring keeps games
    until they are trained on (`ReplayWarning` when short games would lose some), and the memory estimate
    (`estimate_memory`) fits the limit.

    Args:
        config: The run's config, a `PPOConfig` or `AZConfig`.
        limit: The memory limit in bytes; default the memory of this process's devices
            (`blokus_agents.core.options.machine_memory`).
        eval_games: Evaluation games played at once, added to the memory estimate.

    Raises:
        ConfigError: `config` is not a run config or names an unknown variant, an AlphaZero `k` is too large,
            every update would overwrite finished games before they are trained on, `eval_games` is not an int
            in range, or the memory estimate is over the limit (naming the fields and the limit).
    """
    if not isinstance(config, RunConfig):
        raise ConfigError(f"a training config must be a PPOConfig or AZConfig, got {type(config).__name__}")
    name = type(config).__name__
    try:
        env = make(config.variant)
    except BlokusError as exc:
        raise ConfigError(f"{name}.variant: {exc}") from exc
    if config.algorithm == "alphazero":
        check_candidates(config, env)
        length, slots = max_game_length(env.variant), config.games_per_env
        if config.num_steps >= slots * length:
            raise ConfigError(
                f"AZConfig.num_steps={config.num_steps} with games_per_env={slots}: a {config.variant} game takes "
                f"at most {length} moves, so every update would overwrite finished games before any optimiser "
                f"step sees them; give num_steps below {slots * length} or more games_per_env"
            )
        if config.num_steps > (slots - 1) * -(-length // 2):
            warnings.warn(
                f"AZConfig.num_steps={config.num_steps} with games_per_env={slots}: an env that finishes games "
                f"shorter than {config.num_steps / (slots - 1):.0f} moves ({config.variant} games take up to "
                f"{length}) overwrites some before any optimiser step sees them; lower num_steps or raise "
                f"games_per_env",
                ReplayWarning,
                stacklevel=2,
            )
    if isinstance(eval_games, (bool, np.bool_)) or not isinstance(eval_games, (int, np.integer)):
        raise ConfigError(f"eval_games (--eval-games) must be an int, got {_shown(eval_games)}")
    if not 0 <= eval_games <= 2**20:
        raise ConfigError(
            f"eval_games (--eval-games) must be from 0 to {2**20:,} games (0: no evaluation), got {_shown(eval_games)}"
        )
    parts = estimate_memory(config, int(eval_games))
    total = sum(size for size, _ in parts.values())
    available, what = machine_memory(every_device=True) if limit is None else (int(limit), "the given limit")
    if total > available:
        part, (size, fields) = max(parts.items(), key=lambda item: item[1][0])
        values = {f: eval_games if f == "eval_games" else getattr(config, f) for f in fields}
        shown = ", ".join(f"{f}={v:,}" if isinstance(v, int) else f"{f}={v!r}" for f, v in values.items())
        raise ConfigError(
            f"{name} needs at least {_gb(total)} of memory ({part}: {_gb(size)} with {shown}), more than the "
            f"{_gb(available)} of {what}; lower {' or '.join(fields)}"
        )


__all__ = [
    "ReplayWarning",
    "check_candidates",
    "check_trainable",
    "estimate_memory",
]
