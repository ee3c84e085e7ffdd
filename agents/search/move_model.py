"""The fitted log-linear move model: the search's prior and the policy network's fixed or tuned prior.

The *move model* scores a placement by a weighted sum of its features (`blokus_agents.search.move_features`), with
one weight vector per phase of the game (the mover's pieces already placed); its softmax over the legal placements is
a move distribution. `MoveModel` reads and writes the weights as a small JSON file with its provenance (the fit is
`blokus_agents.search.move_fit`); the shipped Duo model is `move_model_duo.json` beside this module. `move_prior`
gives, for an agent spec, the scores by which that agent's search ranks and picks its candidates.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp

from blokus_agents.search.move_features import INPUTS, feature_names, phase_of, placement_scores, position_planes
from blokus_jax.env import Env, State
from blokus_jax.errors import BlokusError, ConfigError
from blokus_jax.tables import Tables

#: Format tag and version of a move-model file.
FORMAT = "blokus-jax move model"
VERSION = 1
#: Largest move-model file read (bytes); the shipped ones are a few kB.
MAX_FILE_BYTES = 1 << 20


class MoveModelError(BlokusError, ValueError):
    """A move-model file or weight table that cannot be used: unreadable, malformed, for another variant, or with
    features that this version of the code does not compute."""


@dataclass(frozen=True)
class MoveModel:
    """A fitted log-linear move model: score(placement) = `weights[phase] . features(placement)`.

    Attributes:
        variant: name of the variant it was fitted on.
        features: the feature names, in the order of `feature_names` for that variant.
        phases: the phase boundaries (pieces placed by the mover), ascending, the first 0.
        weights: `[len(phases)][len(features)]` weights.
        network: the agent spec whose network's logit is the feature `network` (`"baseline:duo"`), or `""`.
        provenance: how it was fitted (command, data, date, held-out recall), for people.
        inputs: what its planes are computed from, one of `INPUTS`: "observation" models score what the mover's
            observation shows (no newest-piece planes) and take no network logit, so a policy network can carry
            them.
    """

    variant: str
    features: tuple[str, ...]
    phases: tuple[int, ...]
    weights: tuple[tuple[float, ...], ...]
    network: str = ""
    provenance: dict[str, Any] = field(default_factory=dict)
    inputs: str = "state"

    def __post_init__(self) -> None:
        if self.inputs not in INPUTS:
            raise MoveModelError(f"inputs must be one of {list(INPUTS)}, got {self.inputs!r}")
        if self.inputs == "observation" and self.network:
            raise MoveModelError("a model over observation planes takes no network logit (its network carries it)")
        if not self.phases or self.phases[0] != 0 or list(self.phases) != sorted(set(self.phases)):
            raise MoveModelError(f"phases must be ascending distinct piece counts starting at 0, got {self.phases}")
        if len(self.weights) != len(self.phases) or any(len(w) != len(self.features) for w in self.weights):
            raise MoveModelError(
                f"weights must be {len(self.phases)} rows of {len(self.features)} numbers (one row a phase, one "
                f"number a feature)"
            )
        if not all(math.isfinite(x) for row in self.weights for x in row):
            raise MoveModelError("weights must be finite numbers")

    def check(self, tables: Tables) -> None:
        """Raise `MoveModelError` unless this model fits `tables`' variant and the features this code computes."""
        expected = feature_names(tables, bool(self.network))
        if self.variant != tables.variant.name or tuple(self.features) != expected:
            raise MoveModelError(
                f"the move model is for variant {self.variant!r} with {len(self.features)} features; variant "
                f"{tables.variant.name!r} with this version of blokus-jax computes {len(expected)} "
                f"({'same names' if tuple(self.features) == expected else 'different names'}): refit it with "
                f"benchmarks/fit_move_model.py"
            )

    def scores(self, tables: Tables, state: State, network_logits: jax.Array | None = None) -> jax.Array:
        """`f32[A]`: the model's score of every action in `state`, `-inf` for illegal ones (the pass scores 0
        when it is the only legal action). Pure and jittable; vmap it for a batch.

        Args:
            tables: the variant's tables (checked against the model when it is built, see `check`).
            state: one position.
            network_logits: the network's logits for this position when the model has the `network` feature.

        Returns:
            The scores, higher preferred.
        """
        weights = jnp.asarray(self.weights, jnp.float32)[phase_of(self.phases, state)]
        placement = placement_scores(tables, position_planes(tables, state, self.inputs), weights)
        if self.network:
            if network_logits is None:
                raise MoveModelError(f"this move model needs the logits of {self.network!r}; pass network_logits")
            logits = jnp.asarray(network_logits, jnp.float32)[: tables.num_actions - 1]
            placement = placement + weights[-1] * jnp.clip(jnp.nan_to_num(logits, nan=-1e4), -1e4, 1e4)
        legal = state.legal_action_mask
        scores = jnp.concatenate([placement, jnp.zeros((1,), jnp.float32)])
        return jnp.where(legal, scores, -jnp.inf)

    # --------------------------------------------------------------------------------------------------- files
    def to_json(self) -> str:
        """The model as the text of a move-model file."""
        return json.dumps(
            {
                "format": FORMAT,
                "version": VERSION,
                "variant": self.variant,
                "network": self.network,
                "inputs": self.inputs,
                "phases": list(self.phases),
                "features": list(self.features),
                "weights": [[round(float(x), 6) for x in row] for row in self.weights],
                "provenance": self.provenance,
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str, source: str = "move model") -> MoveModel:
        """Read a move-model file's text, checking every field.

        Args:
            text: the file's text.
            source: what to call it in error messages (its path).

        Returns:
            The model.

        Raises:
            MoveModelError: the text is not a move-model file of this version or a field is malformed.
        """
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise MoveModelError(f"{source}: not JSON ({exc}); write it with MoveModel.to_json") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("version") != VERSION:
            raise MoveModelError(f"{source}: not a {FORMAT!r} file of version {VERSION}")
        expect = {"variant": str, "network": str, "phases": list, "features": list, "weights": list}
        for key, kind in expect.items():
            if not isinstance(data.get(key), kind):
                raise MoveModelError(f"{source}: field {key!r} must be a {kind.__name__}")
        if not all(isinstance(p, int) and not isinstance(p, bool) and 0 <= p < 10_000 for p in data["phases"]):
            raise MoveModelError(f"{source}: 'phases' must be small non-negative integers")
        if not all(isinstance(f, str) and len(f) < 100 for f in data["features"]):
            raise MoveModelError(f"{source}: 'features' must be names")
        rows = data["weights"]
        if not all(
            isinstance(r, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in r)
            for r in rows
        ):
            raise MoveModelError(f"{source}: 'weights' must be lists of numbers")
        provenance = data.get("provenance", {})
        inputs = data.get("inputs", "state")
        if inputs not in INPUTS:
            raise MoveModelError(f"{source}: 'inputs' must be one of {list(INPUTS)}")
        if not isinstance(provenance, dict):
            raise MoveModelError(f"{source}: 'provenance' must be an object")
        try:
            return cls(
                data["variant"],
                tuple(data["features"]),
                tuple(data["phases"]),
                tuple(tuple(float(x) for x in r) for r in rows),
                data["network"],
                provenance,
                inputs,
            )
        except MoveModelError as exc:
            raise MoveModelError(f"{source}: {exc}") from None

    @classmethod
    def load(cls, path: str | os.PathLike) -> MoveModel:
        """Read a move-model file (at most `MAX_FILE_BYTES`); raises `MoveModelError` naming the file."""
        path = Path(path)
        try:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise MoveModelError(f"cannot read move model {path}: {exc.strerror or exc}") from None
        if len(raw) > MAX_FILE_BYTES:
            raise MoveModelError(f"{path}: larger than {MAX_FILE_BYTES} bytes; not a move-model file")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise MoveModelError(f"{path}: not UTF-8 text; not a move-model file") from None
        return cls.from_json(text, str(path))


#: The folder of the shipped move models (`move_model_VARIANT.json`).
SHIPPED = Path(__file__).resolve().parent


def shipped_model(variant: str, inputs: str = "state") -> MoveModel:
    """The move model shipped for `variant` over `inputs` (`move_model_VARIANT.json` for the search's prior,
    `move_model_VARIANT_observation.json` for a policy network's); raises `ConfigError` when there is none."""
    if inputs not in INPUTS:
        raise ConfigError(f"unknown move-model inputs {inputs!r}; use one of {list(INPUTS)}")
    path = SHIPPED / f"move_model_{variant}{'' if inputs == 'state' else '_' + inputs}.json"
    if not path.is_file():
        have = sorted(p.stem.removeprefix("move_model_") for p in SHIPPED.glob("move_model_*.json"))
        raise ConfigError(f"no move model over {inputs} planes is shipped for variant {variant!r}; shipped: {have}")
    model = MoveModel.load(path)
    if model.inputs != inputs:
        raise ConfigError(f"{path.name} is a model over {model.inputs} planes, not {inputs}")
    return model


def model_evaluator(env: Env, evaluator: Callable, model: MoveModel) -> Callable:
    """A search evaluator whose prior logits are `model`'s scores over `evaluator`'s (a network evaluator's
    logits are the model's `network` feature); the leaf value is `evaluator`'s.

    Args:
        env: the environment.
        evaluator: `(params, key, state, root_player) -> (logits f32[A - 1], value)`.
        model: a move model of `env`'s variant (checked here).

    Returns:
        An evaluator of the same signature.

    Raises:
        MoveModelError: the model does not fit the variant.
    """
    model.check(env.tables)

    def evaluate(params, key: jax.Array, state: State, root_player: jax.Array):
        logits, value = evaluator(params, key, state, root_player)
        scores = model.scores(env.tables, state, logits)[: env.pass_action]
        # illegal placements: a finite floor, as the search's candidate ranking expects finite logits
        return jnp.where(jnp.isfinite(scores), scores, -1e4), value

    return evaluate


__all__ = [
    "MoveModel",
    "MoveModelError",
    "model_evaluator",
    "shipped_model",
]
