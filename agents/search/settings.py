"""The settings of a search agent, declared once: `SearchSettings` (the options every search agent takes, each
field with its default, range and help), `SETTING_OPTIONS` (those declarations, read from the fields and checked
when a spec is resolved) and `takes_settings`, which gives a function the settings as keyword parameters. The agents
`mcts`, `az:`, `baseline:` and `strong`, `make_search`, the AlphaZero config, the CLI and the spec parser all read
them here. Imports no JAX."""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from blokus_agents.core.options import MAX_SECONDS, PLACEMENTS, Option, declared_options, setting

#: Playout policies of the `rollout` evaluator (see `blokus_agents.search.playouts.playout`).
PLAYOUTS = ("greedy", "random", "block", "local", "attach")
#: Where a search's prior logits come from: its own (a network's policy head; `mcts`'s `corners` score), or
#: the fitted move model shipped for the variant (`blokus_agents.search.move_model`: over a network's logits, or,
#: for `mcts`, a model that takes none).
PRIORS = ("network", "model")
#: The most simulations a move of any search: the limit of `sims` (agent specs, `SearchSettings`, the AlphaZero
#: config) and the budget a `seconds=` time limit calibrates to at most.
MAX_SIMS = 1 << 15
#: mctx's `value_scale` of the completed-Q transform (`blokus_agents.search.gumbel.make_search`): the weight of a
#: child's value against the prior logits in the tree.
VALUE_SCALE = 0.1
#: The time budget a move of the agent `strong` when its spec gives none (`strong` is `strong:seconds=2`).
STRONG_SECONDS = 2.0


@dataclass(frozen=True)
class SearchSettings:
    """The settings of one search agent: `sims` simulations a move over the top `k` candidates of every node,
    sequential halving over `considered` root candidates, Gumbel noise `gumbel_scale` (0 plays the search's best
    move), `mix` the weight of `playouts` playout results (by the `playout` policy, blended with the score
    `margin`) in a network's leaf values, and `seconds` a time budget a move that replaces `sims` (0: off).
    The defaults are those of a network's search (`az:RUN_DIR`); other agents declare theirs as a named instance
    next to them (`MCTS_SETTINGS`, the AlphaZero self-play search `SELF_PLAY_SEARCH`)."""

    sims: int = setting(64, 1, MAX_SIMS, doc="simulations per move")
    k: int = setting(16, 1, PLACEMENTS, doc="candidate placements per node")
    considered: int = setting(16, 1, PLACEMENTS, doc="root candidates of sequential halving")
    gumbel_scale: float = setting(0.0, 0.0, 100.0, doc="Gumbel noise when playing; 0 plays the search's best move")
    mix: float = setting(0.0, 0.0, 1.0, doc="weight of the playout result in the leaf value; 0: the value head alone")
    playouts: int = setting(8, 1, 10**4, doc="playouts per evaluated position")
    playout: str = setting("greedy", choices=PLAYOUTS, doc="the playout policy")
    margin: float = setting(0.5, 0.0, 1.0, doc="weight of the score margin in the value")
    seconds: float = setting(0.0, 0.0, MAX_SECONDS, doc="time budget per move at batch 1 (replaces sims); 0: off")
    prior: str = setting(
        "network", choices=PRIORS, doc="prior logits: the search's own (network), or the variant's move model (model)"
    )

    def options(self) -> dict[str, Any]:
        """The settings as keyword arguments (`{"sims": 64, "k": 16, ...}`)."""
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> SearchSettings:
        """A copy with `changes` applied."""
        return dataclasses.replace(self, **changes)


#: The names of the search settings, in declaration order.
SETTING_NAMES = tuple(field.name for field in dataclasses.fields(SearchSettings))

#: The type, range and help of every search setting, as its field declares them.
SETTING_OPTIONS: dict[str, Option] = declared_options(SearchSettings)


def setting_options(*names: str) -> dict[str, Option]:
    """The declared options of the search settings `names` (all of them when none are given)."""
    return {name: SETTING_OPTIONS[name] for name in (names or SETTING_NAMES)}


_F = TypeVar("_F", bound=Callable[..., Any])


def takes_settings(defaults: SearchSettings, names: tuple[str, ...] = SETTING_NAMES, **overrides: Any) -> Callable:
    """A decorator that gives a function ending in `**settings` the search settings `names` as keyword-only
    parameters (before its own keyword-only ones), so that their list is written once, here: each defaults to its
    value in `defaults` (or in `overrides`), and `inspect.signature` (the agent registry, `help()`) shows them. A
    call fills in the defaults of the settings it leaves out and refuses any other keyword with `TypeError`, as a
    written-out list would.

    Args:
        defaults: The settings whose values are the defaults (`SearchSettings()`, an agent's named instance).
        names: The settings the function takes, in order; all of them by default.
        **overrides: Defaults that differ from `defaults` (a baseline's `sims=0`, its own budget).

    Returns:
        The decorator.
    """
    types = {field.name: field.type for field in dataclasses.fields(SearchSettings)}
    added = [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=overrides.get(name, getattr(defaults, name)),
            annotation=types[name] if name not in overrides else Any,
        )
        for name in names
    ]

    def decorate(fn: _F) -> _F:
        signature = inspect.signature(fn)
        *own, rest = signature.parameters.values()
        if rest.kind is not inspect.Parameter.VAR_KEYWORD:
            raise TypeError(f"{fn.__qualname__} must end in **settings to take the search settings")
        keywords = [p for p in own if p.kind is inspect.Parameter.KEYWORD_ONLY]
        positional = [p for p in own if p.kind is not inspect.Parameter.KEYWORD_ONLY]
        full = signature.replace(parameters=[*positional, *added, *keywords])

        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            bound = full.bind(*args, **kwargs)
            bound.apply_defaults()
            return fn(*bound.args, **bound.kwargs)

        call.__signature__ = full  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]

    return decorate


__all__ = [
    "MAX_SIMS",
    "PLAYOUTS",
    "PRIORS",
    "SETTING_NAMES",
    "SETTING_OPTIONS",
    "STRONG_SECONDS",
    "SearchSettings",
    "VALUE_SCALE",
    "setting_options",
    "takes_settings",
]
