"""Declared options of agent specs: a type and a range for every `name:key=value` option, and memory estimates.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: The largest magnitude of an int option without a declared range: an `int32` (JAX's default integer).
INT32_MAX = 2**31 - 1
#: The compute precisions of the policy-value network, declared once: the training configs' `precision` field (and
#: so `blokus-jax train --precision`) and `blokus_agents.players.networks.resolve_precision` read them ("auto":
#: bf16 on GPU/TPU, f32 on CPU).
PRECISION_CHOICES = ("auto", "f32", "bf16")

#: What a policy network adds to its placement logits (the training configs' `prior`, so `blokus-jax train
#: --prior`): "none"; "model": the variant's fitted move model over the mover's observation, a fixed prior that the
#: policy head learns to correct (`blokus_agents.players.networks.PolicyValueNet`); or "tuned": the same model, whose
#: weights training tunes along with the head.
NETWORK_PRIORS = ("none", "model", "tuned")
#: The `NETWORK_PRIORS` that carry the fitted move model: held fixed ("model") or tuned by training ("tuned").
MODEL_PRIORS = ("model", "tuned")


def PLACEMENTS(env: Any) -> int:
    """Bound: the number of placement actions of `env`'s variant (every action but the pass)."""
    return int(env.pass_action)


PLACEMENTS.describe = "the number of placement actions of"  # type: ignore[attr-defined]

Bound = int | float | Callable[[Any], float] | None


def _bound(bound: Bound, env: Any) -> float | None:
    return bound(env) if callable(bound) else bound


def _describe(bound: Bound, env: Any) -> str:
    value = _bound(bound, env)
    shown = f"{value:g}" if isinstance(value, float) else str(value)
    return f"{shown} ({bound.describe} {env.variant.name!r})" if callable(bound) else shown


@dataclass(frozen=True)
class Option:
    """The declaration of one agent-spec option: its `kind` (`int`, `float`, `bool` or `str`), an
    inclusive range `[low, high]` (numbers or `env -> number` functions such as `PLACEMENTS`; `None`
    for no bound), the allowed `choices` of a text option, and `doc`, one line shown in error messages."""

    kind: type
    low: Bound = None
    high: Bound = None
    choices: tuple[str, ...] | None = None
    doc: str = ""

    def check(self, value: Any, env: Any) -> str | None:
        """`None` when `value` (already of `kind`) is allowed for `env`, else what is wrong with it (a phrase
        such as `"must be at most 100000"`)."""
        if self.choices is not None and value not in self.choices:
            return f"must be one of {list(self.choices)}"
        if self.kind not in (int, float) or isinstance(value, bool):
            return None
        low, high = _bound(self.low, env), _bound(self.high, env)
        if low is not None and high is not None and not low <= value <= high:
            return f"must be between {_describe(self.low, env)} and {_describe(self.high, env)}"
        if low is not None and value < low:
            return f"must be at least {_describe(self.low, env)}"
        if high is not None and value > high:
            return f"must be at most {_describe(self.high, env)}"
        return None


def setting(
    default: Any = dataclasses.MISSING,
    low: Bound = None,
    high: Bound = None,
    *,
    doc: str,
    choices: tuple[str, ...] | None = None,
    kind: type | None = None,
    default_factory: Callable[[], Any] | Any = dataclasses.MISSING,
) -> Any:
    """A dataclass field that carries its own declaration: its `default` (or `default_factory`) and, as an
    `Option` in the field's metadata, its kind (`type(default)` unless `kind` is given), its inclusive range
    `[low, high]`, its `choices` and `doc`, one line for help texts and error messages. The one place a
    setting's default and limits live; `declared_options` reads them back.

    Args:
        default: The default value.
        low: The lowest allowed value (a number, an `env -> number` function, or `None`).
        high: The highest allowed value (likewise).
        doc: What the setting is, one line.
        choices: The allowed values of a text setting.
        kind: The type, when it is not `type(default)`.
        default_factory: A function giving the default instead of `default`.

    Returns:
        A `dataclasses.field` for a frozen dataclass.
    """
    example = default_factory() if default is dataclasses.MISSING else default
    option = Option(kind or type(example), low, high, choices, doc)
    return dataclasses.field(default=default, default_factory=default_factory, metadata={"option": option})


def declared_options(cls: Any) -> dict[str, Option]:
    """The `Option` of every field of dataclass `cls` declared with `setting`, by field name, in declaration
    order.

    Args:
        cls: A dataclass (or an instance of one).

    Returns:
        `{field name: Option}`.
    """
    return {f.name: f.metadata["option"] for f in dataclasses.fields(cls) if "option" in f.metadata}


def default_check(kind: type, value: Any) -> str | None:
    """The check of an undeclared option of a number type: ints must fit an `int32` (a 20-digit number would end
    in an `OverflowError` deep inside JAX), floats must be finite (checked when the text is converted)."""
    if kind is int and not isinstance(value, bool) and abs(value) > INT32_MAX:
        return f"must be between {-INT32_MAX} and {INT32_MAX}"
    return None


# ------------------------------------------------------------------------------------------------------- memory
@functools.lru_cache(maxsize=64)
def state_bytes(env: Any) -> int:
    """Bytes of one game state of `env` (from the shapes of `env.init()`, nothing is computed)."""
    import jax  # the estimates load JAX; the declarations above stay importable without it

    shapes = jax.eval_shape(env.init)
    return int(sum(math.prod(leaf.shape) * leaf.dtype.itemsize for leaf in jax.tree_util.tree_leaves(shapes)))


def legal_bits_bytes(env: Any) -> int:
    """Bytes of the packed legal placements of every colour of one state (what mobility-style lookahead builds)."""
    orientations = len(env.tables.orientation_size)
    return 4 * env.num_colors * orientations * env.board_shape[0]


#: Working copies XLA keeps beside the arrays a computation holds (loop carries, temporaries); the estimates below
#: multiply by it so that a refused budget is one that could not have fit.
XLA_OVERHEAD = 2


def search_bytes(env: Any, sims: int, k: int, playouts: int = 0) -> int:
    """Estimated bytes of one batched-search tree for one game: mctx holds `sims + 1` nodes, each with its
    embedding (an exact game state plus the `k` candidate slots) and six `k`-wide child arrays; the rollout
    evaluator adds `playouts` game copies at a time.

    Args:
        env: The environment.
        sims: Simulations a move.
        k: Candidates a node.
        playouts: Games a rollout evaluator plays out at a time (0: a network evaluator).

    Returns:
        The estimate in bytes, times `XLA_OVERHEAD`.
    """
    node = state_bytes(env) + 5 * k + 6 * 4 * k + 64
    return XLA_OVERHEAD * ((sims + 1) * node + playouts * (state_bytes(env) + legal_bits_bytes(env)))


def lookahead_bytes(env: Any, positions: int) -> int:
    """Estimated bytes of a bot that evaluates `positions` child positions at once (each a state plus every
    colour's legal placements, as `mobility` and `minimax` build)."""
    return XLA_OVERHEAD * positions * (state_bytes(env) + legal_bits_bytes(env))


@functools.lru_cache(maxsize=2)
def machine_memory(every_device: bool = False) -> tuple[int, str]:
    """`(bytes, what)`: the memory of the device JAX computes on: an accelerator's own memory limit, else the
    host's physical memory. With `every_device`, the limits of all of this process's accelerators summed: the memory
    a run that splits its games over them has."""
    import jax

    devices = jax.local_devices() if every_device else jax.devices()[:1]
    if devices[0].platform != "cpu":
        limits = [(device.memory_stats() or {}).get("bytes_limit") for device in devices]
        if all(limits):
            platform, count = devices[0].platform, len(devices)
            what = f"the {platform} device's memory" if count == 1 else f"the memory of {count} {platform} devices"
            return sum(int(limit) for limit in limits), what
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")), "this machine's memory"
    except (ValueError, OSError, AttributeError):  # pragma: no cover - platforms without sysconf
        return 2**62, "this machine's memory"


#: A time budget a move (`seconds=`) is 0 (off) or from `MIN_SECONDS` to `MAX_SECONDS` seconds.
MIN_SECONDS, MAX_SECONDS = 0.01, 3600.0


def check_budget(options: Mapping[str, Any]) -> None:
    """The one budget rule of every search agent (`mcts`, `az:`, `baseline:`, `strong`), applied to the
    options a spec or a caller gives: `seconds` is 0 (off) or from `MIN_SECONDS` to `MAX_SECONDS`,
    and a budget is given in simulations or in time, not both (`sims=8,seconds=2`; `sims=0`, a baseline's own
    budget, is no budget). Raises `ValueError` saying which."""
    seconds, sims = options.get("seconds", 0), options.get("sims", 0)
    if seconds and not MIN_SECONDS <= seconds <= MAX_SECONDS:
        raise ValueError(
            f"seconds={seconds!r}: a time budget a move is from {MIN_SECONDS:g} to {MAX_SECONDS:g} seconds "
            f"(0 turns it off)"
        )
    if seconds and sims:
        raise ValueError(
            f"give a budget either in simulations (sims={sims}) or in time (seconds={seconds:g}), not both: "
            f"seconds= calibrates the simulations on this machine"
        )


__all__ = [
    "MAX_SECONDS",
    "MIN_SECONDS",
    "check_budget",
    "INT32_MAX",
    "PLACEMENTS",
    "NETWORK_PRIORS",
    "MODEL_PRIORS",
    "PRECISION_CHOICES",
    "XLA_OVERHEAD",
    "Option",
    "declared_options",
    "default_check",
    "legal_bits_bytes",
    "lookahead_bytes",
    "machine_memory",
    "search_bytes",
    "setting",
    "state_bytes",
]
