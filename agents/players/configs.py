"""The training configs: every setting of a run, saved with each checkpoint (a run is reproducible from its config
and seed). `PPOConfig` for `blokus_agents.training.ppo` and `AZConfig` for `blokus_agents.training.alphazero`, both
on `RunConfig` (JSON round trip, validation, legacy defaults). Kept apart from the trainers so that
`blokus_agents.players.checkpoint_read` can read any run's config without importing a trainer; `CONFIGS` maps each
algorithm's name (the `"algorithm"` of checkpoint metadata) to its class.

Every field declares its default, range and help once (`blokus_agents.core.options.setting`); `blokus-jax train`
builds its flags from them. A leaf: it imports no implementation and no JAX (the memory estimate and the checks a run
needs before it starts are in `blokus_agents.training.checks`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from blokus_agents.core.messages import shown as _shown
from blokus_agents.core.options import NETWORK_PRIORS, PRECISION_CHOICES, Option, declared_options, setting
from blokus_agents.search.settings import SETTING_OPTIONS, SearchSettings
from blokus_jax.errors import CheckpointError, ConfigError
from blokus_jax.variants import VARIANTS

#: The largest `seed`: PRNG keys take 32 bits (larger seeds would silently collide with smaller ones).
MAX_SEED = 2**32 - 1
#: The largest `total_steps` (the CLI's open-ended time-limited runs use 10**12).
MAX_TOTAL_STEPS = 10**15
#: The largest update count a trainer's `int32` counters hold (`teacher_updates`; the learning-rate schedule's
#: horizon saturates there, `blokus_agents.training.optim.MAX_HORIZON`).
MAX_UPDATES = int(np.iinfo(np.int32).max)
#: The search of AlphaZero's self-play, declared once: its four search fields default to these values (and take the
#: ranges of `SearchSettings`' fields).
SELF_PLAY_SEARCH = SearchSettings(sims=16, k=16, considered=8, gumbel_scale=1.0)


def _search_field(name: str) -> Any:
    """A config field for search setting `name`: `SELF_PLAY_SEARCH`'s value as its default, `SearchSettings`'
    declaration (range, help) otherwise."""
    option = SETTING_OPTIONS[name]
    return setting(getattr(SELF_PLAY_SEARCH, name), option.low, option.high, doc=f"self-play search: {option.doc}")


class RunConfig:
    """JSON round trip and validation shared by the training configs (`PPOConfig`,
    `AZConfig`): frozen dataclasses whose fields are `str`, `int` or `float` and which name their training
    algorithm in `algorithm` (a class attribute, the `"algorithm"` of checkpoint metadata)."""

    algorithm: ClassVar[str]
    #: Values of fields added after runs were saved, for configs read back without them (default: the field's
    #: default).
    legacy_defaults: ClassVar[dict] = {}

    #: why a field has its lower limit, said when it is broken
    limit_reasons: ClassVar[dict[str, str]] = {"seed": "PRNG keys take 32 bits"}
    #: Whether the algorithm's value head predicts every seat's result when there are more than two players (see
    #: `value_dim`).
    per_seat_values: ClassVar[bool] = False

    @classmethod
    def value_dim(cls, num_players: int) -> int:
        """Outputs of the value head this algorithm trains for a variant of `num_players` players: 1 (the result
        of the player to move) with one or two players or when the algorithm predicts the mover's result alone
        (PPO's critic), else `num_players` (every seat's result in the mover's egocentric seat order, which
        AlphaZero's paranoid search reduces; see `blokus_agents.search.mcts.egocentric_seats`). The one rule that
        builds a run's network (trainer, checkpoints, shipped baselines)."""
        from blokus_agents.players.networks import value_size  # networks load flax; a config alone does not

        return value_size(num_players, cls.per_seat_values)

    @classmethod
    def options(cls) -> dict[str, Option]:
        """The declaration of every field (its kind, range and help), as the field carries it."""
        return declared_options(cls)

    def _check(self) -> None:
        """Check every field's type and declared range, as `blokus_jax.variants.Variant` does: an `int` field takes
        a true int (a NumPy int is accepted and stored as `int`, so that the config stays JSON; a bool, float or
        string is refused), a `float` field a finite number (stored as `float`), a `str` field a string; then
        the range each field declares (bounds that depend on the variant are checked by `check_trainable`).

        Raises:
            ConfigError: naming the field, its range and the value given.
        """
        from blokus_jax.env import REWARD_MODES  # the environment loads JAX; reading a config's fields does not

        name = type(self).__name__
        for field, option in self.options().items():
            value, kind = getattr(self, field), option.kind
            where = f"{name}.{field}"
            lo = option.low if isinstance(option.low, (int, float)) else None
            hi = option.high if isinstance(option.high, (int, float)) else None
            if kind is int:
                if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                    raise ConfigError(f"{where} must be an int, got {_shown(value)}")
                value = int(value)
                lo, hi = -(2**63) if lo is None else lo, 2**63 - 1 if hi is None else hi
                if not lo <= value <= hi:
                    wanted = {0: "a non-negative int", 1: "a positive int"}.get(lo, f"at least {lo}")
                    why = self.limit_reasons.get(field)
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
                lo, hi = -math.inf if lo is None else lo, math.inf if hi is None else hi
                if not (math.isfinite(value) and lo <= value <= hi) or (field == "learning_rate" and value == 0):
                    raise ConfigError(
                        f"{where} must be a finite number in [{lo}, {hi}]"
                        f"{' above 0' if field == 'learning_rate' else ''}, got {_shown(value)}"
                    )
            elif kind is str and not isinstance(value, str):
                raise ConfigError(f"{where} must be a string, got {_shown(value)}")
            elif option.choices is not None and value not in option.choices:
                raise ConfigError(
                    f"{where} {_shown(value)} is not a {field}; use one of {list(option.choices)} ({option.doc})"
                )
            object.__setattr__(self, field, value)
        if self.variant not in VARIANTS:
            raise ConfigError(f"{name}.variant {_shown(self.variant)} is not a variant; known: {sorted(VARIANTS)}")
        if self.reward not in REWARD_MODES:
            raise ConfigError(f"{name}.reward {_shown(self.reward)} is not a reward mode; known: {list(REWARD_MODES)}")

    @property
    def steps_per_update(self) -> int:
        """Environment steps (moves of any seat, summed over games) per update: `num_envs * num_steps`."""
        return self.num_envs * self.num_steps

    @property
    def num_updates(self) -> int:
        """Updates in the run: `total_steps // steps_per_update`, at least 1."""
        return max(1, self.total_steps // self.steps_per_update)

    def to_dict(self) -> dict[str, Any]:
        """The config as a JSON-ready dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Any:
        """A config from `to_dict` output (missing fields take their defaults); raises `CheckpointError`
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
        options = cls.options()
        for name, value in data.items():
            kind = options[name].kind
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
        """A copy with `changes` applied (validated again)."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class _SharedFields(RunConfig):
    """The fields both training algorithms declare alike (each declared here once): the variant and reward, the
    parallel games, the learning-rate schedule's ends, the network and the seed. Each algorithm's config adds its
    own fields after these."""

    variant: str = setting("simple", doc="variant to learn")
    reward: str = setting("winloss", doc="reward: winloss (+1/-1/0 at the end) or score")
    num_envs: int = setting(64, 1, 2**20, doc="games played in parallel")
    learning_rate: float = setting(1e-3, 0.0, math.inf, doc="initial learning rate")
    final_lr_fraction: float = setting(0.1, 0.0, 1.0, doc="the learning rate at the end, as a fraction of the first")
    channels: int = setting(32, 1, 1024, doc="conv channels of the network")
    blocks: int = setting(2, 0, 64, doc="residual blocks of the network")
    value_hidden: int = setting(64, 0, 2**16, doc="hidden units of the value head")
    seed: int = setting(
        0,
        0,
        MAX_SEED,
        doc="seed; the same seed and settings give the same run on CPU (with the same number of devices)",
    )
    precision: str = setting(
        "auto",
        choices=PRECISION_CHOICES,
        doc="the network's compute dtype: bf16 (parameters and optimiser state stay f32), f32, or auto (bf16 on "
        "GPU/TPU, f32 on CPU); a resumed run may change it",
    )
    prior: str = setting(
        "none",
        choices=NETWORK_PRIORS,
        doc="what the policy adds to its logits: none; model (the variant's fitted move model over the mover's "
        "observation, a fixed prior the policy head learns to correct; Duo); or tuned (the same model, its weights "
        "trained with the head)",
    )


@dataclass(frozen=True)
class PPOConfig(_SharedFields):
    """Every setting of a training run (saved with each checkpoint; a run is reproducible from it and its seed).

    `total_steps` counts environment steps (moves of any seat, summed over games) and sets the length of the
    learning-rate schedule; one update consumes `num_envs * num_steps` of them.

    `precision` is the network's compute dtype: "f32", "bf16" (parameters and optimiser state stay float32) or
    "auto" (bf16 on GPU/TPU, f32 on CPU), see `blokus_agents.players.networks.resolve_precision`.
    """

    algorithm: ClassVar[str] = "ppo"

    num_steps: int = setting(32, 1, 2**16, doc="moves of every game per update")
    total_steps: int = setting(500_000, 1, MAX_TOTAL_STEPS, doc="environment steps of the run (the schedule's length)")
    update_epochs: int = setting(4, 1, 1000, doc="passes over each update's rollout")
    num_minibatches: int = setting(4, 1, 2**16, doc="minibatches per pass, dividing num_steps")
    gamma: float = setting(1.0, 0.0, 1.0, doc="discount")
    gae_lambda: float = setting(0.95, 0.0, 1.0, doc="GAE lambda")
    clip_eps: float = setting(0.2, 0.0, math.inf, doc="PPO's clip range")
    ent_coef: float = setting(0.01, 0.0, math.inf, doc="weight of the entropy bonus")
    vf_coef: float = setting(0.5, 0.0, math.inf, doc="weight of the value loss")
    max_grad_norm: float = setting(0.5, 0.0, math.inf, doc="gradient clipping norm")
    kl_coef: float = setting(
        0.0,
        0.0,
        math.inf,
        doc="weight of the KL divergence from the starting policy (the --init-from network, or the initial one) "
        "in the loss: keeps self-play from drifting below where it started (0: off)",
    )
    opponent: str = setting(
        "",
        doc="an agent spec (e.g. minimax, mobility, mcts:sims=16) that plays the other seats of every game instead of "
        "the network, which then learns from its own moves only and plays each seat in turn (empty: self-play)",
    )

    def __post_init__(self):
        self._check()
        if self.opponent != self.opponent.strip():
            raise ConfigError(
                f"PPOConfig.opponent {_shown(self.opponent)} has spaces around it; give the agent spec alone, e.g. "
                f"'minimax' or 'mcts:sims=16' (empty: self-play)"
            )
        if "seconds=" in self.opponent:
            raise ConfigError(
                f"PPOConfig.opponent {_shown(self.opponent)}: an opponent plays a fixed budget (give sims), since a "
                f"time budget would make the run depend on the machine"
            )
        if self.num_steps % self.num_minibatches:
            raise ConfigError(
                f"num_steps ({self.num_steps}) must be a multiple of num_minibatches "
                f"({self.num_minibatches}): every minibatch takes the same share of each game's steps"
            )

    @property
    def optimizer_steps_per_update(self) -> int:
        """Optimiser steps (minibatches) per update: `update_epochs * num_minibatches`."""
        return self.update_epochs * self.num_minibatches


@dataclass(frozen=True)
class AZConfig(_SharedFields):
    """Every setting of an AlphaZero run (saved with each checkpoint; a run is reproducible from it and its seed).

    `total_steps` counts self-play moves (environment steps of any seat, summed over games) and sets the length of
    the learning-rate schedule; one update plays `num_envs * num_steps` of them. The search plays with `sims`
    simulations over `k` candidates per node and `considered` root candidates; `gumbel_scale` 1 samples moves
    by Gumbel top-k (the exploration of Gumbel AlphaZero, which needs no temperature schedule) and `root_noise`
    mixes Dirichlet(`root_alpha`) noise into the root's prior (without it, self-play on small boards collapsed to
    a single repeated game within minutes: value loss and policy KL fell to 0). The replay buffer
    keeps `games_per_env` slots per parallel game (`num_envs * (games_per_env - 1)` finished games in all, one
    slot being written); keep `num_steps` below `(games_per_env - 1)` times the shortest game, or an env can
    finish and overwrite a game before any optimiser step sees it.

    `teacher` (expert iteration; an `mcts` agent spec, empty for none) plays the self-play moves of the first
    `teacher_updates` updates with its network-free search, whose visit weights are the policy targets the network
    learns; from update `teacher_updates` on, the network's own search plays (the hand-over).

    `root_value` (two players) blends the search's root value into each position's value target:
    `(1 - root_value) * game result + root_value * root value` (0: the game result alone, AlphaZero's target).

    `reflect` is the probability that a replayed position is trained on as its reflection in the board's diagonal
    (observation, legal moves and policy targets reflected; the same value), on variants where that reflection is a
    symmetry of the game (Duo, Junior: `blokus_jax.symmetry.is_reflection_symmetric`); 0 trains on positions
    as they were played.

    `precision` is the network's compute dtype, in training and in the self-play search, as in `PPOConfig`.
    """

    algorithm: ClassVar[str] = "alphazero"
    #: Values for fields a checkpoint's config predates: runs made before `root_noise` existed trained without it.
    legacy_defaults: ClassVar[dict] = {
        "root_noise": 0.0,
        "teacher": "",
        "teacher_updates": 0,
        "root_value": 0.0,
        "reflect": 0.0,
    }
    #: 3-4 players: the value head predicts every seat's result (`RunConfig.value_dim`).
    per_seat_values: ClassVar[bool] = True

    num_steps: int = setting(8, 1, 2**16, doc="self-play moves of every game per update")
    total_steps: int = setting(500_000, 1, MAX_TOTAL_STEPS, doc="self-play moves of the run (the schedule's length)")
    sims: int = _search_field("sims")
    k: int = _search_field("k")
    considered: int = _search_field("considered")
    gumbel_scale: float = _search_field("gumbel_scale")
    root_noise: float = setting(0.25, 0.0, 1.0, doc="weight of the Dirichlet noise in the root's prior")
    root_alpha: float = setting(0.3, 0.0, math.inf, doc="concentration of the root's Dirichlet noise (above 0)")
    games_per_env: int = setting(4, 2, 4096, doc="replay slots per parallel game")
    batch_size: int = setting(
        0, 0, 2**24, doc="positions per optimiser step, a multiple of num_envs (0: 4 x num_envs, 4 per game)"
    )
    train_steps: int = setting(4, 1, 10_000, doc="optimiser steps per update")
    value_coef: float = setting(1.0, 0.0, math.inf, doc="weight of the value loss")
    max_grad_norm: float = setting(1.0, 0.0, math.inf, doc="gradient clipping norm")
    teacher: str = setting(
        "",
        doc="an mcts agent spec (e.g. mcts:sims=64,playouts=4) whose search plays the self-play moves and gives the "
        "policy targets for the first teacher_updates updates; then the network's own search plays",
    )
    teacher_updates: int = setting(
        0, 0, MAX_UPDATES, doc="with a teacher: the updates the teacher plays before it hands over to the network"
    )
    root_value: float = setting(
        0.0,
        0.0,
        1.0,
        doc="two players: value targets blend the search's root value in, (1-B) x game result + B x root value "
        "(0: the game result)",
    )
    reflect: float = setting(
        0.0,
        0.0,
        1.0,
        doc="on Duo or Junior: train on each replayed position's reflection in the board's diagonal with this "
        "probability (0.5 doubles the positions)",
    )

    limit_reasons: ClassVar[dict[str, str]] = {
        **RunConfig.limit_reasons,
        "games_per_env": "one slot is always being written",
        "sims": "simulations per move",
        "teacher_updates": "the update counter is an int32",
    }

    def __post_init__(self):
        if type(self.batch_size) is int and self.batch_size == 0 and type(self.num_envs) is int:
            object.__setattr__(self, "batch_size", 4 * self.num_envs)  # the derived default: 4 positions a game
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
        """Optimiser steps per update (`train_steps`)."""
        return self.train_steps

    def search_settings(self) -> SearchSettings:
        """The self-play search's settings: `SELF_PLAY_SEARCH` with this config's `sims`, `k`, `considered` and
        `gumbel_scale`."""
        return SELF_PLAY_SEARCH.replace(
            sims=self.sims, k=self.k, considered=self.considered, gumbel_scale=self.gumbel_scale
        )


@dataclass(frozen=True)
class PretrainSettings:
    """How the network is fitted to the teacher's positions (each field declares its default and range once).

    `reflect` trains each sampled position as its reflection in the board's diagonal with this probability, on
    variants where that is a symmetry of the game (Duo, Junior); `value_coef` weights the value loss against the
    policy's cross-entropy.
    """

    epochs: int = setting(6, 1, 10_000, doc="passes over the training positions")
    batch_size: int = setting(256, 1, 2**16, doc="positions per optimiser step")
    learning_rate: float = setting(1e-3, 0.0, math.inf, doc="initial learning rate (cosine decay to 0)")
    weight_decay: float = setting(1e-4, 0.0, math.inf, doc="AdamW's decoupled weight decay")
    value_coef: float = setting(0.5, 0.0, math.inf, doc="weight of the value loss")
    reflect: float = setting(0.5, 0.0, 1.0, doc="probability of training a position as its diagonal reflection")
    max_grad_norm: float = setting(1.0, 0.0, math.inf, doc="gradient clipping norm")
    seed: int = setting(0, 0, MAX_SEED, doc="seed of the shuffles and the network's initialisation")

    def __post_init__(self) -> None:
        for name, option in declared_options(self).items():
            value = getattr(self, name)
            kinds = (int,) if option.kind is int else (int, float)
            if isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value):
                raise ConfigError(f"PretrainSettings.{name} must be a finite {option.kind.__name__}, got {value!r}")
            if not option.low <= value <= option.high:
                raise ConfigError(
                    f"PretrainSettings.{name} must be in [{option.low}, {option.high}] ({option.doc}), got {value!r}"
                )
        if self.learning_rate <= 0:
            raise ConfigError(f"PretrainSettings.learning_rate must be above 0, got {self.learning_rate!r}")


#: algorithm name -> config class
CONFIGS: dict[str, type[RunConfig]] = {"ppo": PPOConfig, "alphazero": AZConfig}


def config_class(algorithm: str) -> type[RunConfig]:
    """The config class of `algorithm`; raises `CheckpointError` naming the known algorithms otherwise."""
    if algorithm not in CONFIGS:
        raise CheckpointError(
            f"unknown training algorithm {algorithm!r} (a run from another version?); known: {sorted(CONFIGS)}"
        )
    return CONFIGS[algorithm]


__all__ = [
    "CONFIGS",
    "MAX_SEED",
    "SELF_PLAY_SEARCH",
    "MAX_TOTAL_STEPS",
    "AZConfig",
    "PPOConfig",
    "PretrainSettings",
    "RunConfig",
    "config_class",
]
