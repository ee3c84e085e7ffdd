"""`blokus-jax match`: an agent against any GTP Blokus engine, one game at a time, and the ladder of Pentobi's
levels with an Elo estimate on Pentobi's scale."""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import subprocess
import sys

from blokus_agents.cli.common import (
    AGENT_HELP,
    Handler,
    game_count,
    nonnegative_int,
    output_dir,
    output_file,
    print_table,
    say,
    seconds_limit,
    seed_int,
    showing_calibration,
    variant_of,
)
from blokus_jax.io import fileio
from blokus_jax.variants import GAMES

NAME = "match"
HELP = "play an agent against a GTP engine (e.g. Pentobi) game by game; with --levels, an Elo on Pentobi's scale"


def _levels(text: str) -> list[int]:
    from blokus_agents.engines.gtp_client import MatchError
    from blokus_agents.engines.rating import parse_levels

    try:
        return parse_levels(text)
    except MatchError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def setup(parser: argparse.ArgumentParser) -> Handler:
    """Add the arguments of `blokus-jax match` to `parser`; returns its handler."""
    parser.add_argument("--agent", required=True, help=AGENT_HELP)
    parser.add_argument(
        "--engine",
        required=True,
        help="the command line that starts the GTP engine, quoted; with --levels, '{level}' in it is replaced by "
        'each level, e.g. "pentobi-gtp --game duo --level {level} --book book_duo.blksgf"',
    )
    parser.add_argument("--games", type=game_count, default=100, help="games per level (default 100)")
    parser.add_argument("--levels", type=_levels, default=None, help="engine levels to play, e.g. 1-5 or 2,4")
    parser.add_argument("--variant", choices=sorted(GAMES), default=None, help="the game (default: duo)")
    parser.add_argument(
        "--opening", type=nonnegative_int, default=0, help="random moves before the agents take over (default 0)"
    )
    parser.add_argument("--seed", type=seed_int, default=0, help="seed of openings and the agent's choices")
    parser.add_argument(
        "--results",
        type=output_file,
        default=None,
        help="JSON-lines results file; a match with the same settings resumes from it (default: none)",
    )
    parser.add_argument("--save-games", type=output_dir, default=None, help="directory for the games as .blksgf")
    parser.add_argument(
        "--timeout", type=seconds_limit, default=60.0, help="seconds the engine may take per reply (default 60)"
    )
    parser.add_argument(
        "--no-check-legal",
        action="store_true",
        help="do not compare the engine's legal moves (all_legal) with the project's before every move",
    )
    parser.add_argument("--engine-log", type=output_file, default=None, help="append the engine's stderr here")
    parser.add_argument(
        "--json", metavar="PATH", type=output_file, default=None, help="also write the summary as JSON to PATH"
    )

    def run(args: argparse.Namespace) -> int:
        from blokus_agents.engines import ladder

        variant = variant_of(args, [args.agent])
        with contextlib.ExitStack() as stack:
            stderr = subprocess.DEVNULL
            if args.engine_log:  # appended to, never through a symbolic link
                stderr = stack.enter_context(
                    fileio.open_append(args.engine_log, what="engine log", error=ladder.MatchError)
                )
            try:
                with showing_calibration():  # a time-budgeted agent (strong) says how its calibration goes
                    by_level = ladder.play_match(
                        args.agent, args.engine, args.games, variant, args.levels, args.opening, args.seed,
                        args.results, args.save_games, args.timeout, not args.no_check_legal, log=say,
                        engine_stderr=stderr,
                    )  # fmt: skip
            except KeyboardInterrupt as exc:  # the message says what was kept and how to continue
                print(f"blokus-jax match: {exc or 'interrupted'}", file=sys.stderr)
                return 130
        summaries, elo = ladder.summarize(variant, by_level)
        _print(args, variant, summaries, elo)
        if args.json:
            report = {
                "agent": args.agent, "engine": args.engine, "variant": variant, "levels": args.levels,
                "summaries": [s.to_dict() for s in summaries],
                "elo": None if elo is None else dict(zip(("estimate", "low", "high"), map(_json_number, elo))),
            }  # fmt: skip
            fileio.write_atomic(args.json, json.dumps(report, indent=1), what="--json summary", error=ladder.MatchError)
        return 0

    return run


def _json_number(x: float) -> float | str:
    """A number for JSON, with an infinite bound as the text "inf" or "-inf" (JSON has no infinity)."""
    return x if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def _print(args, variant: str, summaries, elo) -> None:
    """The match table on stdout: one row per level, then the Elo estimate (two players) or what an equal player
    would take (more players)."""
    if summaries and summaries[0].players > 2:
        _print_multiplayer(args, variant, summaries, elo)
        return
    rows = [["level", "games", "win rate", "95% interval", "margin", "agent s/move", "engine s/move", "errors"]]
    for s in summaries:
        rows.append([
            "-" if s.level is None else str(s.level), str(s.games),
            "-" if not s.games else f"{s.win_rate:.3f}", f"[{s.interval[0]:.2f}, {s.interval[1]:.2f}]",
            "-" if not s.games else f"{s.margin:+.1f}", f"{s.agent_seconds:.3f}", f"{s.engine_seconds:.3f}",
            _errors(s),
        ])  # fmt: skip
    print_table(rows, f"{args.agent} against {args.engine} ({variant})", sys.stdout)
    if elo is not None:
        print(f"Elo on Pentobi's {variant} scale (level 1 = 1000): {_elo_text(elo)}")


def _elo_text(elo) -> str:
    estimate, low, high = elo
    if math.isinf(estimate):
        return f"below {high:.0f}" if estimate < 0 else f"above {low:.0f}"
    low_text, high_text = ("-inf" if math.isinf(low) else f"{low:.0f}"), ("inf" if math.isinf(high) else f"{high:.0f}")
    return f"{estimate:.0f} [{low_text}, {high_text}]"


def _errors(s) -> str:
    return str(s.errors) + (f" ({', '.join(f'{k} {n}' for k, n in s.error_kinds.items())})" if s.errors else "")


def _print_multiplayer(args, variant: str, summaries, elo) -> None:
    """The table of a match of more than two players: the agent in one seat, the engine in the others."""
    players = summaries[0].players
    rows = [["level", "games", "1st share", "95% interval", "mean rank", "margin", "agent s", "engine s", "errors"]]
    for s in summaries:
        rows.append([
            "-" if s.level is None else str(s.level), str(s.games),
            "-" if not s.games else f"{s.win_rate:.3f}", f"[{s.interval[0]:.2f}, {s.interval[1]:.2f}]",
            "-" if not s.games else f"{s.mean_rank:.2f}", "-" if not s.games else f"{s.margin:+.1f}",
            f"{s.agent_seconds:.3f}", f"{s.engine_seconds:.3f}", _errors(s),
        ])  # fmt: skip
    equal = f"{1 / players:.2f}"
    title = f"{args.agent} in one seat against {args.engine} in {players - 1} ({variant}; an equal player: {equal})"
    print_table(rows, title, sys.stdout)
    print(
        f"1st share: the agent's share of first places, ties split; a player as strong as each engine seat takes "
        f"{equal}. Mean rank: 1 first, {players} last, tied players share their places. Margin: the agent's score "
        f"minus the best opponent's. Seconds a move of each side."
    )
    if elo is not None:
        print(
            f"Elo on Pentobi's {variant} scale as Pentobi rates a {players}-player game (one player against "
            f"{players - 1} of one rating; its ratings are measured in two-player games, docs/strength.md): "
            f"{_elo_text(elo)}"
        )
