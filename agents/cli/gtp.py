"""`blokus-jax gtp`: an agent as a GTP engine in Pentobi's dialect, for `twogtp` and other GTP tools."""

from __future__ import annotations

import argparse

from blokus_agents.cli.common import AGENT_SPEC, Handler, seed_int, variant_of
from blokus_jax.variants import GAMES

NAME = "gtp"
HELP = "play an agent as a GTP engine on stdin/stdout (Pentobi's dialect: twogtp, GoGui, blokus-jax match)"


def setup(parser: argparse.ArgumentParser) -> Handler:
    """Add the arguments of `blokus-jax gtp` to `parser`; returns its handler."""
    parser.add_argument("--agent", default="mcts", help=f"the agent that answers genmove: {AGENT_SPEC}; default mcts")
    parser.add_argument(
        "--variant",
        choices=sorted(GAMES),
        default=None,
        help="the game at start (default: the agent's own variant, else duo); set_game changes it",
    )
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of the agent's random choices")

    def run(args: argparse.Namespace) -> int:
        from blokus_agents.engines.gtp import run_engine

        return run_engine(args.agent, variant_of(args, [args.agent]), args.seed)

    return run
