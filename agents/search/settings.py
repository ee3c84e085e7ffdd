"""The settings of a search agent, declared once: `SearchSettings` (the nine options every search agent
takes, with their defaults) and `SETTING_OPTIONS` (their types and ranges, checked when a spec is resolved).
The agents `mcts`, `az:`, `baseline:` and `strong`, the AlphaZero config and the spec parser all read them
here."""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from blokus_agents.core.options import MAX_SECONDS, PLACEMENTS, Option, check_budget

#: Playout policies of the `rollout` evaluator (see `blokus_agents.search.playouts.playout`).
PLAYOUTS = ("greedy", "random", "block", "local", "attach")


@dataclass(frozen=True)
class SearchSettings:
    """The settings of one search agent: `sims` simulations a move over the top `k` candidates of every node,
    sequential halving over `considered` root candidates, Gumbel noise `gumbel_scale` (0 plays the search's best
    move), `mix` the weight of `playouts` playout results (by the `playout` policy, blended with the score
    `margin`) in a network's leaf values, and `seconds` a time budget a move that replaces `sims` (0: off).
    The defaults are those of a network's search (`az:RUN_DIR`)."""

    sims: int = 64
    k: int = 16
    considered: int = 16
    gumbel_scale: float = 0.0
    mix: float = 0.0
    playouts: int = 8
    playout: str = "greedy"
    margin: float = 0.5
    seconds: float = 0.0

    def options(self) -> dict[str, Any]:
        """The settings as keyword arguments (`{"sims": 64, "k": 16, ...}`)."""
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> SearchSettings:
        """A copy with `changes` applied."""
        return dataclasses.replace(self, **changes)


#: The names of the nine search settings, in declaration order.
SETTING_NAMES = tuple(field.name for field in dataclasses.fields(SearchSettings))

_TYPES = {field.name: field.type for field in dataclasses.fields(SearchSettings)}

#: The type and range of every search setting (and of the `mcts` agent's prior and value settings).
SETTING_OPTIONS: dict[str, Option] = {
    "sims": Option(int, 1, 10**6, doc="simulations per move"),
    "k": Option(int, 1, PLACEMENTS, doc="candidate placements per node"),
    "considered": Option(int, 1, PLACEMENTS, doc="root candidates of sequential halving"),
    "gumbel_scale": Option(float, 0.0, 100.0, doc="Gumbel noise when playing; 0 plays the search's best move"),
    "mix": Option(float, 0.0, 1.0, doc="weight of the playout result in the leaf value; 0: the value head alone"),
    "playouts": Option(int, 1, 10**4, doc="playouts per evaluated position"),
    "playout": Option(str, choices=PLAYOUTS, doc="the playout policy"),
    "margin": Option(float, 0.0, 1.0, doc="weight of the score margin in the value"),
    "seconds": Option(float, 0.0, MAX_SECONDS, doc="time budget per move at batch 1 (replaces sims); 0: off"),
}


def setting_options(*names: str) -> dict[str, Option]:
    """The declared options of the search settings `names` (all nine when none are given)."""
    return {name: SETTING_OPTIONS[name] for name in (names or SETTING_NAMES)}


def takes_settings(defaults: SearchSettings = SearchSettings(), names: tuple[str, ...] = SETTING_NAMES) -> Callable:
    """Decorator: `fn(..., settings: SearchSettings, **extra)` becomes a function that takes the search settings
    `names` as keyword arguments with the defaults of `defaults` (its signature says so, which is what the spec
    resolver reads to type an agent's options) and passes them to `fn` as one `SearchSettings`; settings not
    in `names` keep `defaults`' values."""

    def wrap(fn: Callable) -> Callable:
        signature = inspect.signature(fn)
        kept = [p for p in signature.parameters.values() if p.name != "settings"]
        leading = [p for p in kept if p.kind is not p.KEYWORD_ONLY]
        extra = [p for p in kept if p.kind is p.KEYWORD_ONLY]
        declared = [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=getattr(defaults, name),
                annotation=_TYPES[name],
            )
            for name in names
        ]

        @functools.wraps(fn)
        def factory(*args: Any, **kwargs: Any) -> Any:
            chosen = {name: kwargs.pop(name) for name in names if name in kwargs}
            if "seconds" in chosen:  # the range; sims with seconds is checked where a spec is resolved
                check_budget({"seconds": chosen["seconds"]})
            return fn(*args, settings=defaults.replace(**chosen), **kwargs)

        factory.__signature__ = signature.replace(parameters=leading + declared + extra)  # type: ignore[attr-defined]
        return factory

    return wrap


__all__ = [
    "PLAYOUTS",
    "SETTING_NAMES",
    "SETTING_OPTIONS",
    "SearchSettings",
    "setting_options",
    "takes_settings",
]
