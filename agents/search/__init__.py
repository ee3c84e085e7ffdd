"""Tree search over the exact environment. `settings` (the search settings and their declared options), `gumbel`
(batched Gumbel MuZero search with mctx, its evaluators), `anytime` (the search on the clock that a time budget
plays one game at a time), `mcts` (the `mcts`, `strong` and `az:` players, time budgets), `calibration_store`
(calibrated time budgets kept per machine between runs).

The names below load on first use (the package imports none of its modules itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from blokus_jax._lazy import lazy_getattr

if TYPE_CHECKING:
    from blokus_agents.search.gumbel import make_search, network_evaluator, rollout_evaluator
    from blokus_agents.search.mcts import az_policy, mcts_policy, network_search_policy, strong_policy
    from blokus_agents.search.settings import SearchSettings

#: Each public name and the module of this package that defines it.
_HOMES: dict[str, str] = {
    "SearchSettings": "settings",
    "make_search": "gumbel",
    "network_evaluator": "gumbel",
    "rollout_evaluator": "gumbel",
    "az_policy": "mcts",
    "mcts_policy": "mcts",
    "network_search_policy": "mcts",
    "strong_policy": "mcts",
}


__getattr__ = lazy_getattr(__name__, _HOMES, globals())


__all__ = [
    "SearchSettings",
    "az_policy",
    "make_search",
    "mcts_policy",
    "network_evaluator",
    "network_search_policy",
    "rollout_evaluator",
    "strong_policy",
]
