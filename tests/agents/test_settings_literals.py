"""The search settings' literals are declared once (issue 53, "Settings declared once, the second half"): the
defaults of the evaluators, `make_search` and the agents, the keyword lists of the search agents, the time-budget
bounds and the CLI's float types all come from one declaration. Nothing is compiled."""

from __future__ import annotations

import ast
import inspect
import math
from pathlib import Path

import pytest

from blokus_agents.cli import common
from blokus_agents.core.options import MAX_SECONDS, MIN_SECONDS
from blokus_agents.players import baselines
from blokus_agents.search import gumbel, mcts
from blokus_agents.search.settings import (
    SETTING_NAMES,
    STRONG_SECONDS,
    VALUE_SCALE,
    SearchSettings,
    takes_settings,
)

SEARCH_DIR = Path(mcts.__file__).parent


def _defaults(fn) -> dict:
    return {name: p.default for name, p in inspect.signature(fn).parameters.items() if p.default is not p.empty}


def test_the_evaluators_and_the_search_take_their_defaults_from_the_declaration():
    declared = SearchSettings()
    for fn in (gumbel.playout_value, gumbel.rollout_evaluator, gumbel.mixed_evaluator):
        defaults = _defaults(fn)
        assert (defaults["playouts"], defaults["playout"]) == (declared.playouts, declared.playout), fn
    assert _defaults(gumbel.mixed_evaluator)["margin"] == declared.margin
    search = _defaults(gumbel.make_search)
    assert {name: search[name] for name in gumbel.TREE_SETTINGS} == {
        name: getattr(declared, name) for name in gumbel.TREE_SETTINGS
    }
    assert search["value_scale"] == _defaults(mcts.mcts_policy)["value_scale"] == VALUE_SCALE
    assert f"(mctx's, {VALUE_SCALE:g})" in mcts.MCTS_OPTIONS["value_scale"].doc


def test_the_search_agents_keyword_lists_are_the_declared_settings():
    """`mcts`, `az:` and `baseline:` take the declared settings, in declaration order, with their agent's defaults;
    only a baseline's `sims` (0: its own budget) and `mix` (`None`: its own) differ."""
    names = [n for n in _defaults(mcts.mcts_policy) if n in SETTING_NAMES]
    assert tuple(names) == mcts.MCTS_SETTING_NAMES == tuple(n for n in SETTING_NAMES if n != "mix")
    assert {n: _defaults(mcts.mcts_policy)[n] for n in names} == {n: getattr(mcts.MCTS_SETTINGS, n) for n in names}
    assert _defaults(mcts.az_policy) == mcts.NETWORK_SETTINGS.options()
    assert _defaults(baselines.baseline_policy) == {**SearchSettings().options(), "sims": 0, "mix": None}
    assert set(mcts.MCTS_OPTIONS) >= set(mcts.MCTS_SETTING_NAMES) and set(mcts.AZ_OPTIONS) == set(SETTING_NAMES)


def test_strong_and_the_time_budget_bounds_are_declared_once():
    assert mcts.STRONG == {name: getattr(mcts.MCTS_SETTINGS, name) for name in mcts.STRONG}
    assert _defaults(mcts.strong_policy)["seconds"] == _defaults(mcts.strong_spec)["seconds"] == STRONG_SECONDS
    option = mcts.STRONG_OPTIONS["seconds"]
    assert (option.low, option.high) == (MIN_SECONDS, MAX_SECONDS) == (0.01, 3600.0)
    assert SearchSettings.__dataclass_fields__["seconds"].metadata["option"].high == MAX_SECONDS
    # one meaning per name: the CLI's longest wait has its own
    assert not hasattr(common, "MAX_SECONDS") and common.MAX_TIMEOUT_SECONDS == 86_400.0


@pytest.mark.parametrize("module", ["gumbel.py", "mcts.py", "settings.py"])
def test_no_search_default_is_a_repeated_literal(module):
    """No function of the search modules spells a declared value as a literal default, and `mcts.py` names no
    time-budget bound in digits."""
    repeated = {8, 0.5, 0.1, 2.0, 0.01, 3600.0}
    tree = ast.parse((SEARCH_DIR / module).read_text())
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            defaults = node.args.defaults + [d for d in node.args.kw_defaults if d is not None]
            for default in defaults:
                if isinstance(default, ast.Constant) and not isinstance(default.value, bool):
                    assert default.value not in repeated, f"{module}: {node.name} defaults to {default.value!r}"
    if module == "mcts.py":
        constants = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)}
        assert not constants & {0.01, 3600}  # 3600 == 3600.0


def test_takes_settings_fills_defaults_and_refuses_unknown_keywords():
    @takes_settings(SearchSettings(sims=3), ("sims", "k"), k=5)
    def f(env, *, extra=1, **settings):
        return env, extra, settings

    assert list(inspect.signature(f).parameters) == ["env", "sims", "k", "extra"]
    assert f("e") == ("e", 1, {"sims": 3, "k": 5})
    assert f("e", sims=7, extra=2) == ("e", 2, {"sims": 7, "k": 5})
    with pytest.raises(TypeError):
        f("e", playouts=4)
    with pytest.raises(TypeError, match="must end in"):
        takes_settings(SearchSettings())(lambda env: env)


def test_every_float_flag_type_is_one_parser():
    import argparse

    for parse in (common.unit_float, common.positive_float, common.nonnegative_float):
        assert parse.__qualname__.startswith("float_range.")
    assert common.unit_float("0.25") == 0.25 and common.nonnegative_float("0") == 0.0
    for parse, text, message in [
        (common.positive_float, "0", "'0' must be a finite number above 0"),
        (common.nonnegative_float, "-1", "must be a finite number from 0 up"),
        (common.unit_float, "1.5", "must be a weight from 0 to 1"),
        (common.float_range(1.0, 4.0), "inf", "'inf' must be a finite number from 1 to 4"),
        (common.positive_float, "x" * 100, "is not a number"),
    ]:
        with pytest.raises(argparse.ArgumentTypeError, match=message):
            parse(text)
    assert math.isfinite(common.float_range(-1.0, 1.0)("-1"))
