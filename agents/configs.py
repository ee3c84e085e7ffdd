"""The training configs: every setting of a run, saved with each checkpoint (a run is reproducible from its config
and seed). :class:`PPOConfig` for :mod:`blokus_agents.ppo`, :class:`AZConfig` for :mod:`blokus_agents.alphazero`, both
on :class:`RunConfig` (JSON round trip, validation, legacy defaults). Kept apart from the trainers so that
:mod:`blokus_agents.checkpoint` can read any run's config without importing a trainer; :data:`CONFIGS` maps each
algorithm's name (the ``"algorithm"`` of checkpoint metadata) to its class.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

from blokus_jax.errors import CheckpointError


class RunConfig:
    """JSON round trip and validation shared by the training configs (:class:`PPOConfig`,
    :class:`blokus_agents.alphazero.AZConfig`): frozen dataclasses whose fields are ``str``, ``int`` or ``float`` and
    which name their training algorithm in ``algorithm`` (a class attribute, the ``"algorithm"`` of checkpoint
    metadata)."""

    algorithm: ClassVar[str]
    #: Values of fields added after runs were saved, for configs read back without them (default: the field's
    #: default).
    legacy_defaults: ClassVar[dict] = {}

    def _check(
        self,
        positive: tuple[str, ...] = (),
        nonnegative: tuple[str, ...] = (),
        ranges: tuple[tuple[str, float, float], ...] = (),
    ) -> None:
        """Raise ``ValueError`` naming the first field that is not a positive int (``positive``), a non-negative int
        (``nonnegative``) or a finite number in ``[lo, hi]`` (``ranges``; ``learning_rate`` must also be above 0)."""
        name = type(self).__name__
        for field in positive:
            if int(getattr(self, field)) < 1:
                raise ValueError(f"{name}.{field} must be a positive int, got {getattr(self, field)!r}")
        for field in nonnegative:
            if int(getattr(self, field)) < 0:
                raise ValueError(f"{name}.{field} must be a non-negative int, got {getattr(self, field)!r}")
        for field, lo, hi in ranges:
            value = float(getattr(self, field))
            if not (math.isfinite(value) and lo <= value <= hi) or (field == "learning_rate" and value == 0):
                raise ValueError(
                    f"{name}.{field} must be a finite number in [{lo}, {hi}]"
                    f"{' above 0' if field == 'learning_rate' else ''}, got {getattr(self, field)!r}"
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
        except (TypeError, ValueError) as exc:
            raise CheckpointError(f"invalid {cls.__name__}: {exc}") from exc

    def replace(self, **changes) -> Any:
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True)
class PPOConfig(RunConfig):
    """Every setting of a training run (saved with each checkpoint; a run is reproducible from it and its seed).

    ``total_steps`` counts environment steps (moves of any seat, summed over games) and sets the length of the
    learning-rate schedule; one update consumes ``num_envs * num_steps`` of them.
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

    def __post_init__(self):
        self._check(
            positive=("num_envs", "num_steps", "total_steps", "update_epochs", "num_minibatches", "channels"),
            nonnegative=("blocks", "value_hidden", "seed"),
            ranges=(
                ("learning_rate", 0.0, math.inf),
                ("final_lr_fraction", 0.0, 1.0),
                ("gamma", 0.0, 1.0),
                ("gae_lambda", 0.0, 1.0),
                ("clip_eps", 0.0, math.inf),
                ("ent_coef", 0.0, math.inf),
                ("vf_coef", 0.0, math.inf),
                ("max_grad_norm", 0.0, math.inf),
            ),
        )
        if self.num_steps % self.num_minibatches:
            raise ValueError(
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
    """

    algorithm: ClassVar[str] = "alphazero"
    #: Values for fields a checkpoint's config predates: runs made before ``root_noise`` existed trained without it.
    legacy_defaults: ClassVar[dict] = {"root_noise": 0.0}

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

    def __post_init__(self):
        self._check(
            positive=("num_envs", "num_steps", "total_steps", "sims", "k", "considered", "batch_size", "train_steps"),
            nonnegative=("blocks", "value_hidden", "seed"),
            ranges=(
                ("gumbel_scale", 0.0, math.inf),
                ("root_noise", 0.0, 1.0),
                ("root_alpha", 0.0, math.inf),
                ("learning_rate", 0.0, math.inf),
                ("final_lr_fraction", 0.0, 1.0),
                ("value_coef", 0.0, math.inf),
                ("max_grad_norm", 0.0, math.inf),
            ),
        )
        if not float(self.root_alpha) > 0:
            raise ValueError(f"AZConfig.root_alpha must be a positive Dirichlet concentration, got {self.root_alpha!r}")
        if int(self.channels) < 1:
            raise ValueError(f"AZConfig.channels must be a positive int, got {self.channels!r}")
        if int(self.games_per_env) < 2:
            raise ValueError(
                f"AZConfig.games_per_env must be at least 2 (one slot is always being written), "
                f"got {self.games_per_env!r}"
            )
        if self.batch_size % self.num_envs:
            raise ValueError(
                f"batch_size ({self.batch_size}) must be a multiple of num_envs ({self.num_envs}): every env "
                f"contributes the same number of samples from its own buffer slots"
            )

    @property
    def optimizer_steps_per_update(self) -> int:
        """Optimiser steps per update (``train_steps``)."""
        return self.train_steps


#: algorithm name -> config class
CONFIGS: dict[str, type[RunConfig]] = {"ppo": PPOConfig, "alphazero": AZConfig}


def config_class(algorithm: str) -> type[RunConfig]:
    """The config class of ``algorithm``; raises ``CheckpointError`` naming the known algorithms otherwise."""
    if algorithm not in CONFIGS:
        raise CheckpointError(
            f"unknown training algorithm {algorithm!r} (a run from another version?); known: {sorted(CONFIGS)}"
        )
    return CONFIGS[algorithm]


__all__ = ["CONFIGS", "AZConfig", "PPOConfig", "RunConfig", "config_class"]
