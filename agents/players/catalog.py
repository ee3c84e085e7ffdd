"""The built-in agents, registered in one place: the bots, `mcts` and `strong`, the prefixes `az:` and
`baseline:`, the run-directory kinds (`ppo`, `alphazero`) and the checkpoint reader that run directories are
loaded with. The registry imports this module at its first lookup or registration
(`blokus_agents.core.policies.BUILTINS`), so every built-in spec resolves without importing it first."""

from __future__ import annotations

from blokus_agents.core.policies import (
    RunReader,
    load_policy,
    register_agent,
    register_prefix,
    register_run_kind,
    register_run_reader,
)
from blokus_agents.players.baselines import BASELINE_OPTIONS, baseline_memory, baseline_policy
from blokus_agents.players.bots import BOT_MEMORY, BOT_OPTIONS, BOTS
from blokus_agents.search.mcts import (
    AZ_OPTIONS,
    MCTS_OPTIONS,
    STRONG_OPTIONS,
    az_memory,
    az_policy,
    mcts_policy,
    search_memory,
    strong_memory,
    strong_policy,
)


def _alphazero_run(run_dir, env, **options):
    """An AlphaZero run directory given as an agent (`runs/az`) plays with its search, like `az:runs/az`."""
    return az_policy(env, run_dir, **options)


def register_builtin_agents() -> None:
    """Register every built-in agent, prefix and run kind (done once, when this module is imported)."""
    for name, factory in BOTS.items():
        register_agent(name, factory, options=BOT_OPTIONS.get(name), memory=BOT_MEMORY.get(name))
    register_agent("mcts", mcts_policy, options=MCTS_OPTIONS, memory=search_memory)  # "mcts:sims=128,k=32"
    register_agent("strong", strong_policy, options=STRONG_OPTIONS, memory=strong_memory)  # "strong:seconds=5"
    register_prefix("az", az_policy, options=AZ_OPTIONS, memory=az_memory)  # "az:runs/duo,sims=64,mix=0.5"
    register_prefix("baseline", baseline_policy, options=BASELINE_OPTIONS, memory=baseline_memory)  # "baseline:duo"
    register_run_kind("ppo", load_policy)  # "runs/ppo": argmax of the masked policy
    register_run_kind("alphazero", _alphazero_run)  # "runs/az": the network's search
    register_run_reader(  # the checkpoint reader (orbax, the network) loads when a run directory is read
        RunReader.named(
            "blokus_agents.players.checkpoint_index:require_agent_run",
            "blokus_agents.players.checkpoint_read:read_meta",
            "blokus_agents.players.checkpoint_read:load_network",
        )
    )


register_builtin_agents()

__all__ = ["register_builtin_agents"]
