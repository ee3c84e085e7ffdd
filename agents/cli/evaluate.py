"""`blokus-jax eval`: a round robin of agents in the arena, printed as tables (win rates, scores, Elo), with
optional JSON results and sample game records."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from blokus_agents.cli.common import (
    AGENTS_HELP,
    Handler,
    game_count,
    nonnegative_int,
    output_dir,
    output_file,
    positive_int,
    print_table,
    say,
    seed_int,
    showing_calibration,
    variant_of,
)
from blokus_jax.io import fileio
from blokus_jax.variants import variant_names

if TYPE_CHECKING:
    from blokus_agents.core.policies import Policy
    from blokus_agents.engines.arena import ArenaReport
    from blokus_jax.env import Env

NAME = "eval"
HELP = "play every pair of agents against each other and print win rates, scores and Elo"


def setup(parser: argparse.ArgumentParser) -> Handler:
    """Add the arguments of `blokus-jax eval` to `parser`; returns its handler."""
    parser.add_argument(
        "--variant",
        default=None,
        choices=variant_names(),
        help="variant to play (default: that of the run directories among the agents, else duo)",
    )
    parser.add_argument("--agents", nargs="+", default=["random", "greedy"], metavar="AGENT", help=AGENTS_HELP)
    parser.add_argument(
        "--games",
        type=game_count,
        default=100,
        help="games per pairing, rounded up to a multiple of the seat rotation (default 100)",
    )
    parser.add_argument("--seed", type=seed_int, default=0, help="seed; the same seed gives the same results")
    parser.add_argument(
        "--opening",
        type=nonnegative_int,
        default=0,
        help="random legal moves that start every game, shared by both seat orders, so that deterministic agents "
        "play different games (default 0)",
    )
    parser.add_argument("--json", metavar="PATH", type=output_file, help="also write the results as JSON to PATH")
    parser.add_argument("--markdown", action="store_true", help="print markdown tables instead of a rich table")
    parser.add_argument("--no-progress", action="store_true", help="hide progress bars")
    parser.add_argument(
        "--save-games",
        metavar="DIR",
        type=output_dir,
        help="also save sample games (first agent as player 0 against the second) as records in DIR",
    )
    parser.add_argument(
        "--num-saved",
        type=positive_int,
        default=4,
        help="sample games to save with --save-games (default 4; at most 10000)",
    )
    parser.add_argument(
        "--format",
        choices=["blksgf", "json"],
        default="blksgf",
        help="record format for --save-games (default blksgf; custom variants need json)",
    )

    def run(args: argparse.Namespace) -> int:
        from blokus_agents.core import policies
        from blokus_agents.engines.arena import check_opening, round_robin
        from blokus_jax.env import make

        if len(set(args.agents)) != len(args.agents) or len(args.agents) < 2:
            raise ValueError(f"--agents needs at least two distinct agents, got {args.agents}")
        if args.save_games and args.num_saved > MAX_SAVED:
            raise ValueError(f"--num-saved {args.num_saved} is more than {MAX_SAVED} sample games; give fewer")
        env = make(variant_of(args, args.agents))
        try:
            check_opening(env, args.opening)
        except ValueError as exc:
            raise ValueError(f"--opening: {exc}") from None
        with showing_calibration():  # a seconds= agent says how its calibration goes
            policies = {spec: policies.resolve_agent(spec, env) for spec in args.agents}
        report = round_robin(
            env,
            policies,
            args.games,
            seed=args.seed,
            progress=not args.no_progress,
            opening=args.opening,
            log=say,  # the compile line is shown with --no-progress too: a search agent compiles for minutes
        )
        _print_report(report, args.markdown)
        if args.json:
            # atomic, never through a symbolic link
            fileio.write_atomic(args.json, json.dumps(report.to_dict(), indent=2), what="--json report")
        if args.save_games:
            first, second = args.agents[:2]
            say(
                f"saving {args.num_saved} sample games of {first} (player 0) vs {second} to {args.save_games} "
                f"(--num-saved N to change)..."
            )
            paths = save_sample_games(
                env,
                policies[first],
                policies[second],
                (first, second),
                args.num_saved,
                args.seed,
                args.save_games,
                args.format,
            )
            print(
                f"saved {len(paths)} games of {first} (player 0) vs {second} to {args.save_games}; "
                f"view one with: blokus-jax view {paths[0]}"
            )
        return 0

    return run


#: The most sample games `eval --save-games` records (they are played in one batch, and each is a file).
MAX_SAVED = 10_000


def save_sample_games(
    env: Env, first: Policy, others: Policy, names: tuple[str, str], count: int, seed: int, directory: str, fmt: str
) -> list:
    """Record `count` games on device with `first` as player 0 and `others` in every other seat, and save them
    as `.blksgf` or JSON records in `directory`.

    Args:
        env: The environment.
        first: The policy of player 0.
        others: The policy of every other player.
        names: The names of `first` and `others` in the records.
        count: Games recorded, played at once.
        seed: The seed of the games' PRNG key.
        directory: The folder to save the records in.
        fmt: `"blksgf"` or `"json"` (see `blokus_jax.io.records.save_records`).

    Returns:
        The written paths.

    Raises:
        RecordError: As `blokus_jax.io.records.save_records`, e.g. existing files or an unknown `fmt`.
    """
    import jax
    import jax.numpy as jnp

    from blokus_jax import rollout
    from blokus_jax.env import State
    from blokus_jax.io import records

    def mixed(key: jax.Array, state: State) -> jax.Array:
        return jnp.where(state.current_player == 0, first(key, state), others(key, state))

    _, actions = rollout.rollout(env, jax.random.key(seed), count, mixed)
    players = [names[0]] + [names[1]] * (env.num_players - 1)
    games = records.from_rollout(env, actions, players=players, metadata={"event": "blokus-jax eval"})
    return records.save_records(games, directory, fmt=fmt)


def _print_report(report: ArenaReport, markdown: bool) -> None:
    if markdown:
        print(report.markdown())
        return
    title = f"{report.variant}: {report.games_per_pairing} games per pairing, seed {report.seed}"
    print_table(report.rows(), title, sys.stdout)
    names = [a.name for a in report.agents]
    matrix = report.head_to_head()
    rows = [["agent"] + names] + [
        [name] + ["-" if i == j else f"{matrix[i, j]:.3f}" for j in range(len(names))] for i, name in enumerate(names)
    ]
    print_table(rows, "head to head: win rate of row vs column", sys.stdout)
