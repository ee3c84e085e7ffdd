"""One budget rule for every search agent (mcts, az:, baseline:, strong): ``seconds=`` is 0 or from 0.01 to 3600
seconds a move, and a budget is given in simulations or in time, never both."""

from __future__ import annotations

import pytest

from blokus_agents.core.options import MIN_SECONDS, check_budget
from blokus_agents.core.policies import AgentSpecError, resolve_agent
from blokus_agents.search.mcts import mcts_policy
from blokus_jax.env import make


@pytest.fixture(scope="module")
def duo():
    return make("duo")


@pytest.mark.parametrize(
    "spec",
    [
        "mcts:seconds=1e-300",
        "mcts:seconds=0.001",
        "az:runs/nowhere,seconds=1e-300",
        "baseline:duo,seconds=1e-300",
        "strong:seconds=1e-300",
    ],
)
def test_a_time_budget_below_the_shared_minimum_is_refused_by_every_search_agent(spec, duo):
    with pytest.raises(AgentSpecError, match=r"seconds.*(0\.01|at least)"):
        resolve_agent(spec, duo)


@pytest.mark.parametrize(
    "spec", ["mcts:sims=8,seconds=2", "az:runs/nowhere,sims=8,seconds=2", "baseline:duo,sims=8,seconds=2"]
)
def test_sims_and_seconds_together_are_refused_by_every_search_agent_with_the_same_words(spec, duo):
    with pytest.raises(AgentSpecError, match=r"either in simulations \(sims=8\) or in time \(seconds=2\), not both"):
        resolve_agent(spec, duo)


def test_the_shared_check_and_the_python_api_follow_the_same_rule(duo):
    check_budget({"sims": 8})
    check_budget({"seconds": MIN_SECONDS})
    check_budget({"sims": 0, "seconds": 2.0})  # sims=0 is a baseline's own budget, not a second one
    with pytest.raises(ValueError, match="from 0.01 to 3600 seconds"):
        check_budget({"seconds": 1e-300})
    with pytest.raises(ValueError, match="from 0.01 to 3600 seconds"):
        mcts_policy(duo, seconds=1e-300)
