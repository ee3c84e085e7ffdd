"""The training configs: every setting of a run, saved with each checkpoint (a run is reproducible from its config
and seed). :class:`PPOConfig` for :mod:`blokus_agents.training.ppo`, :class:`AZConfig` for
:mod:`blokus_agents.training.alphazero`, both
on :class:`RunConfig` (JSON round trip, validation, legacy defaults). Kept apart from the trainers so that
:mod:`blokus_agents.training.checkpoint` can read any run's config without importing a trainer; :data:`CONFIGS` maps
each
algorithm's name (the ``"algorithm"`` of checkpoint metadata) to its class.
"""

from __future__ import annotations

import dataclasses
import math
import os
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar

import jax
import numpy as np

from blokus_agents.core.messages import gib
from blokus_agents.core.messages import shown as _shown
from blokus_agents.core.policies import AgentSpecError
from blokus_agents.players.networks import PRECISION_CHOICES, value_size
from blokus_agents.search.mcts import teacher_memory
from blokus_agents.search.settings import SearchSettings
from blokus_agents.training.replay import empty_buffer
from blokus_jax.env import REWARD_MODES, make
from blokus_jax.errors import BlokusError, CheckpointError, ConfigError
from blokus_jax.rollout import max_game_length
from blokus_jax.variants import VARIANTS

#: The largest ``seed``: PRNG keys take 32 bits (larger seeds would silently collide with smaller ones).
MAX_SEED = 2**32 - 1
#: The largest ``total_steps`` (the CLI's open-ended time-limited runs use 10**12).
MAX_TOTAL_STEPS = 10**15
#: The largest update count a trainer's ``int32`` counters hold (``teacher_updates``; the learning-rate schedule's
#: horizon saturates there, :data:`blokus_agents.training.scaffold.MAX_HORIZON`).
MAX_UPDATES = int(np.iinfo(np.int32).max)
#: The largest search budget of an AlphaZero run (simulations per move).
MAX_SIMS = 10_000


class ReplayWarning(UserWarning):
    """An AlphaZero config whose replay ring may overwrite finished games before any optimiser step sees them."""


class RunConfig:
    """JSON round trip and validation shared by the training configs (:class:`PPOConfig`,
    :class:`blokus_agents.training.alphazero.AZConfig`): frozen dataclasses whose fields are ``str``, ``int`` or
    ``float`` and
    which name their training algorithm in ``algorithm`` (a class attribute, the ``"algorithm"`` of checkpoint
    metadata)."""

    algorithm: ClassVar[str]
    #: Values of fields added after runs were saved, for configs read back without them (default: the field's
    #: default).
    legacy_defaults: ClassVar[dict] = {}

    #: int fields -> (lowest, highest) allowed value
    int_limits: ClassVar[dict[str, tuple[int, int]]] = {}
    #: float fields -> (lowest, highest) allowed value (finite; ``learning_rate`` also above 0)
    float_limits: ClassVar[dict[str, tuple[float, float]]] = {}
    #: why a field has its lower limit, said when it is broken
    limit_reasons: ClassVar[dict[str, str]] = {"seed": "PRNG keys take 32 bits"}
    #: Whether the algorithm's value head predicts every seat's result when there are more than two players (see
    #: :meth:`value_dim`).
    per_seat_values: ClassVar[bool] = False

    @classmethod
    def value_dim(cls, num_players: int) -> int:
        """Outputs of the value head this algorithm trains for a variant of ``num_players`` players: 1 (the result
        of the player to move) with one or two players or when the algorithm predicts the mover's result alone
        (PPO's critic), else ``num_players`` (every seat's result in the mover's egocentric seat order, which
        AlphaZero's paranoid search reduces; see :func:`blokus_agents.search.mcts.egocentric_seats`). The one rule that
        builds a run's network (trainer, checkpoints, shipped baselines)."""
        return value_size(num_players, cls.per_seat_values)

    def _check(self) -> None:
        """Check every field's type and range, as :class:`~blokus_jax.variants.Variant` does: an ``int`` field takes
        a true int (a NumPy int is accepted and stored as ``int``, so that the config stays JSON; a bool, float or
        string is refused), a ``float`` field a finite number (stored as ``float``), a ``str`` field a string; then
        the ranges of :attr:`int_limits` and :attr:`float_limits`. Raises ``ConfigError`` naming the field."""
        name = type(self).__name__
        for field in dataclasses.fields(self):
            value, kind = getattr(self, field.name), type(field.default)
            where = f"{name}.{field.name}"
            if kind is int:
                if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                    raise ConfigError(f"{where} must be an int, got {_shown(value)}")
                value = int(value)
                lo, hi = self.int_limits.get(field.name, (-(2**63), 2**63 - 1))
                if not lo <= value <= hi:
                    wanted = {0: "a non-negative int", 1: "a positive int"}.get(lo, f"at least {lo}")
                    why = self.limit_reasons.get(field.name)
                    raise ConfigError(
                        f"{where} must be {wanted}, at most {hi:,}{f' ({why})' if why else ''}, got {_shown(value)}"
                    )
            elif kind is float:
                if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
                    raise ConfigError(f"{where} must be a number, got {_shown(value)}")
                try:
                    value = float(value)
                except OverflowError:
                    raise ConfigError(f"{where} must be a finite number, got {_shown(value)}") from None
                lo, hi = self.float_limits.get(field.name, (-math.inf, math.inf))
                if not (math.isfinite(value) and lo <= value <= hi) or (field.name == "learning_rate" and value == 0):
                    raise ConfigError(
                        f"{where} must be a finite number in [{lo}, {hi}]"
                        f"{' above 0' if field.name == 'learning_rate' else ''}, got {_shown(value)}"
                    )
            elif kind is str and not isinstance(value, str):
                raise ConfigError(f"{where} must be a string, got {_shown(value)}")
            object.__setattr__(self, field.name, value)
        if self.variant not in VARIANTS:
            raise ConfigError(f"{name}.variant {_shown(self.variant)} is not a variant; known: {sorted(VARIANTS)}")
        if self.reward not in REWARD_MODES:
            raise ConfigError(f"{name}.reward {_shown(self.reward)} is not a reward mode; known: {list(REWARD_MODES)}")
        if self.precision not in PRECISION_CHOICES:
            raise ConfigError(
                f"{name}.precision {_shown(self.precision)} is not a precision; use one of {list(PRECISION_CHOICES)} "
                f"(auto: bf16 compute on GPU/TPU, f32 on CPU)"
            )

    @property
    def steps_per_update(self) -> int:
        """Environment steps (moves of any seat, summed over games) per update: ``num_envs * num_steps``."""
        return self.num_envs * self.num_steps

    @property
    def num_updates(self) -> int:
        """Updates in the run: ``total_steps // steps_per_update``, at least 1."""
        return max(1, self.total_steps // self.steps_per_update)

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Any:
        """A config from :meth:`to_dict` output (missing fields take their defaults); raises ``CheckpointError``
        naming unknown fields, fields of the wrong type and invalid values."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        if not isinstance(data, dict):
            raise CheckpointError(f"a {cls.__name__} must be a JSON object, got {type(data).__name__}")
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise CheckpointError(
                f"unknown {cls.__name__} fields {unknown} (checkpoint from another version?); "
                f"valid fields are {list(fields)}"
            )
        for name, value in data.items():
            kind = type(fields[name].default)
            ok = (
                isinstance(value, str)
                if kind is str
                else (
                    isinstance(value, int) and not isinstance(value, bool)
                    if kind is int
                    else isinstance(value, (int, float)) and not isinstance(value, bool)
                )
            )
            if not ok:
                raise CheckpointError(f"{cls.__name__} field {name!r} must be a {kind.__name__}, got {value!r}")
        try:
            return cls(**{**cls.legacy_defaults, **data})
        except (TypeError, ValueError, OverflowError) as exc:
            raise CheckpointError(f"invalid {cls.__name__}: {exc}") from exc

    def replace(self, **changes) -> Any:
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class PPOConfig(RunConfig):
    """Every setting of a training run (saved with each checkpoint; a run is reproducible from it and its seed).

    ``total_steps`` counts environment steps (moves of any seat, summed over games) and sets the length of the
    learning-rate schedule; one update consumes ``num_envs * num_steps`` of them.

    ``precision`` is the network's compute dtype: "f32", "bf16" (parameters and optimiser state stay float32) or
    "auto" (bf16 on GPU/TPU, f32 on CPU), see `blokus_agents.players.networks.resolve_precision`.
    """

    algorithm: ClassVar[str] = "ppo"

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
    precision: str = "auto"

    int_limits: ClassVar[dict[str, tuple[int, int]]] = {
        "num_envs": (1, 2**20),
        "num_steps": (1, 2**16),
        "total_steps": (1, MAX_TOTAL_STEPS),
        "update_epochs": (1, 1000),
        "num_minibatches": (1, 2**16),
        "channels": (1, 1024),
        "blocks": (0, 64),
        "value_hidden": (0, 2**16),
        "seed": (0, MAX_SEED),
    }
    float_limits: ClassVar[dict[str, tuple[float, float]]] = {
        "learning_rate": (0.0, math.inf),
        "final_lr_fraction": (0.0, 1.0),
        "gamma": (0.0, 1.0),
        "gae_lambda": (0.0, 1.0),
        "clip_eps": (0.0, math.inf),
        "ent_coef": (0.0, math.inf),
        "vf_coef": (0.0, math.inf),
        "max_grad_norm": (0.0, math.inf),
    }

    def __post_init__(self):
        self._check()
        if self.num_steps % self.num_minibatches:
            raise ConfigError(
                f"num_steps ({self.num_steps}) must be a multiple of num_minibatches "
                f"({self.num_minibatches}): every minibatch takes the same share of each game's steps"
            )

    @property
    def optimizer_steps_per_update(self) -> int:
        """Optimiser steps (minibatches) per update: ``update_epochs * num_minibatches``."""
        return self.update_epochs * self.num_minibatches


@dataclass(frozen=True)
class AZConfig(RunConfig):
    """Every setting of an AlphaZero run (saved with each checkpoint; a run is reproducible from it and its seed).

    ``total_steps`` counts self-play moves (environment steps of any seat, summed over games) and sets the length of
    the learning-rate schedule; one update plays ``num_envs * num_steps`` of them. The search plays with ``sims``
    simulations over ``k`` candidates per node and ``considered`` root candidates; ``gumbel_scale`` 1 samples moves
    by Gumbel top-k (the exploration of Gumbel AlphaZero, which needs no temperature schedule) and ``root_noise``
    mixes Dirichlet(``root_alpha``) noise into the root's prior (without it, self-play on small boards collapsed to
    a single repeated game within minutes: value loss and policy KL fell to 0). The replay buffer
    keeps ``games_per_env`` slots per parallel game (``num_envs * (games_per_env - 1)`` finished games in all, one
    slot being written); keep ``num_steps`` below ``(games_per_env - 1)`` times the shortest game, or an env can
    finish and overwrite a game before any optimiser step sees it.

    ``teacher`` (expert iteration; an ``mcts`` agent spec, empty for none) plays the self-play moves of the first
    ``teacher_updates`` updates with its network-free search, whose visit weights are the policy targets the network
    learns; from update ``teacher_updates`` on, the network's own search plays (the hand-over).

    ``root_value`` (two players) blends the search's root value into each position's value target:
    ``(1 - root_value) * game result + root_value * root value`` (0: the game result alone, AlphaZero's target).

    ``reflect`` is the probability that a replayed position is trained on as its reflection in the board's diagonal
    (observation, legal moves and policy targets reflected; the same value), on variants where that reflection is a
    symmetry of the game (Duo, Junior: :func:`blokus_jax.symmetry.is_reflection_symmetric`); 0 trains on positions
    as they were played.

    ``precision`` is the network's compute dtype, in training and in the self-play search, as in `PPOConfig`.
    """

    algorithm: ClassVar[str] = "alphazero"
    #: Values for fields a checkpoint's config predates: runs made before ``root_noise`` existed trained without it.
    legacy_defaults: ClassVar[dict] = {
        "root_noise": 0.0,
        "teacher": "",
        "teacher_updates": 0,
        "root_value": 0.0,
        "reflect": 0.0,
    }
    #: 3-4 players: the value head predicts every seat's result (:meth:`RunConfig.value_dim`).
    per_seat_values: ClassVar[bool] = True

    variant: str = "simple"
    reward: str = "winloss"
    num_envs: int = 64
    num_steps: int = 8
    total_steps: int = 500_000
    sims: int = 16
    k: int = 16
    considered: int = 8
    gumbel_scale: float = 1.0
    root_noise: float = 0.25
    root_alpha: float = 0.3
    games_per_env: int = 4
    batch_size: int = 256
    train_steps: int = 4
    learning_rate: float = 1e-3
    final_lr_fraction: float = 0.1
    value_coef: float = 1.0
    max_grad_norm: float = 1.0
    channels: int = 32
    blocks: int = 2
    value_hidden: int = 64
    seed: int = 0
    teacher: str = ""
    teacher_updates: int = 0
    root_value: float = 0.0
    reflect: float = 0.0
    precision: str = "auto"

    int_limits: ClassVar[dict[str, tuple[int, int]]] = {
        "num_envs": (1, 2**20),
        "num_steps": (1, 2**16),
        "total_steps": (1, MAX_TOTAL_STEPS),
        "sims": (1, MAX_SIMS),
        "teacher_updates": (0, MAX_UPDATES),
        "k": (1, 4096),
        "considered": (1, 4096),
        "games_per_env": (2, 4096),
        "batch_size": (1, 2**24),
        "train_steps": (1, 10_000),
        "channels": (1, 1024),
        "blocks": (0, 64),
        "value_hidden": (0, 2**16),
        "seed": (0, MAX_SEED),
    }
    float_limits: ClassVar[dict[str, tuple[float, float]]] = {
        "gumbel_scale": (0.0, math.inf),
        "root_noise": (0.0, 1.0),
        "root_alpha": (0.0, math.inf),
        "learning_rate": (0.0, math.inf),
        "final_lr_fraction": (0.0, 1.0),
        "value_coef": (0.0, math.inf),
        "max_grad_norm": (0.0, math.inf),
        "root_value": (0.0, 1.0),
        "reflect": (0.0, 1.0),
    }

    limit_reasons: ClassVar[dict[str, str]] = {
        **RunConfig.limit_reasons,
        "games_per_env": "one slot is always being written",
        "sims": "simulations per move",
        "teacher_updates": "the update counter is an int32",
    }

    def __post_init__(self):
        self._check()
        if not self.root_alpha > 0:
            raise ConfigError(
                f"AZConfig.root_alpha must be a positive Dirichlet concentration, got {self.root_alpha!r}"
            )
        teacher = self.teacher
        if teacher != teacher.strip():
            raise ConfigError(
                f"AZConfig.teacher {_shown(self.teacher)} has spaces around it; give the agent spec alone, e.g. "
                f"'mcts:sims=64,playouts=4'"
            )
        if teacher and teacher.partition(":")[0] != "mcts":
            raise ConfigError(
                f"AZConfig.teacher {_shown(self.teacher)} must be an 'mcts' agent spec (e.g. "
                f"'mcts:sims=64,playouts=4'), the network-free search the network learns from; leave it empty for none"
            )
        if bool(teacher) != (self.teacher_updates > 0):
            raise ConfigError(
                f"AZConfig.teacher and teacher_updates go together: a teacher plays the first teacher_updates "
                f"updates (>= 1), no teacher plays none; got teacher={_shown(self.teacher)}, "
                f"teacher_updates={self.teacher_updates}"
            )
        if self.batch_size % self.num_envs:
            raise ConfigError(
                f"batch_size ({self.batch_size}) must be a multiple of num_envs ({self.num_envs}): every env "
                f"contributes the same number of samples from its own buffer slots"
            )

    @property
    def optimizer_steps_per_update(self) -> int:
        """Optimiser steps per update (``train_steps``)."""
        return self.train_steps

    def search_settings(self) -> SearchSettings:
        """The self-play search's settings (``sims``, ``k``, ``considered``, ``gumbel_scale``; the others keep their
        defaults): the search agents' :class:`~blokus_agents.search.settings.SearchSettings`."""
        return SearchSettings(sims=self.sims, k=self.k, considered=self.considered, gumbel_scale=self.gumbel_scale)


def _nbytes(tree: Any) -> int:
    return sum(int(np.prod(x.shape)) * np.dtype(x.dtype).itemsize for x in jax.tree.leaves(tree))


def estimate_memory(config: RunConfig, eval_games: int = 0) -> dict[str, tuple[int, tuple[str, ...]]]:
    """A lower estimate of the device memory (bytes) that training ``config`` needs, by part: ``{part: (bytes,
    fields that scale it)}``. Counts the arrays the update keeps alive at once (games, rollout or replay buffer,
    search tree and a teacher's, network activations and logits of a batch); XLA's temporaries come on top, so a
    run that is refused for memory would certainly not fit. ``eval_games`` adds the evaluation's games, played all
    at once. Shapes come from ``jax.eval_shape`` (nothing is allocated)."""
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


def memory_limit() -> tuple[int, str]:
    """``(bytes, what)``: the memory training can use here: the local accelerators' memory (summed), or the
    machine's RAM when JAX runs on the CPU."""
    devices = jax.local_devices()
    stats = [d.memory_stats() or {} for d in devices] if devices[0].platform != "cpu" else []
    if stats and all("bytes_limit" in st for st in stats):
        total = sum(int(st["bytes_limit"]) for st in stats)
        return total, f"the memory of {len(devices)} {devices[0].platform.upper()} device(s)"
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"), "this machine's RAM"
    except (ValueError, OSError, AttributeError):
        return 2**62, "unknown memory"


def _gb(n: int) -> str:
    return gib(n, mib_below=2**27)


def check_candidates(config: Any, env: Any) -> None:
    """Raise ``ConfigError`` when an AlphaZero config's ``k`` (search candidates a node, and the width of the replay
    buffer's targets) is more than the placements of ``env``'s variant (its actions but the pass)."""
    placements = env.pass_action
    if config.k > placements:
        raise ConfigError(
            f"AZConfig.k={config.k} is more than the {placements:,} placements of {config.variant!r}; give k at "
            f"most {placements}"
        )


def check_trainable(config: RunConfig, limit: int | None = None, eval_games: int = 0) -> None:
    """Checks a run needs before anything is compiled or written: ``config`` is a config of a known variant, an
    AlphaZero ``k`` is at most the variant's number of placements (:func:`check_candidates`), its replay ring keeps
    games until they are trained on (``ConfigError`` when every update would lose some, :class:`ReplayWarning` when
    short games would), and the memory estimate (:func:`estimate_memory`, plus ``eval_games`` evaluation games played
    at once) fits ``limit`` bytes (default :func:`memory_limit`); ``ConfigError`` naming the fields and the limit
    otherwise."""
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
        raise ConfigError(f"eval_games (--eval-games) must be from 1 to {2**20:,} games, got {_shown(eval_games)}")
    parts = estimate_memory(config, int(eval_games))
    total = sum(size for size, _ in parts.values())
    available, what = memory_limit() if limit is None else (int(limit), "the given limit")
    if total > available:
        part, (size, fields) = max(parts.items(), key=lambda item: item[1][0])
        values = {f: eval_games if f == "eval_games" else getattr(config, f) for f in fields}
        shown = ", ".join(f"{f}={v:,}" if isinstance(v, int) else f"{f}={v!r}" for f, v in values.items())
        raise ConfigError(
            f"{name} needs at least {_gb(total)} of memory ({part}: {_gb(size)} with {shown}), more than the "
            f"{_gb(available)} of {what}; lower {' or '.join(fields)}"
        )


#: algorithm name -> config class
CONFIGS: dict[str, type[RunConfig]] = {"ppo": PPOConfig, "alphazero": AZConfig}


def config_class(algorithm: str) -> type[RunConfig]:
    """The config class of ``algorithm``; raises ``CheckpointError`` naming the known algorithms otherwise."""
    if algorithm not in CONFIGS:
        raise CheckpointError(
            f"unknown training algorithm {algorithm!r} (a run from another version?); known: {sorted(CONFIGS)}"
        )
    return CONFIGS[algorithm]


__all__ = [
    "CONFIGS",
    "MAX_SEED",
    "MAX_SIMS",
    "MAX_TOTAL_STEPS",
    "AZConfig",
    "PPOConfig",
    "ReplayWarning",
    "RunConfig",
    "check_candidates",
    "check_trainable",
    "config_class",
    "estimate_memory",
    "memory_limit",
]
