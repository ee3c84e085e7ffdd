"""Where an agent loses its games against a GTP engine: the win probability each of its moves gives away, by move.

A game record of ``blokus-jax match`` or ``benchmarks/pentobi_ladder.py --games-dir`` (one agent against one engine,
two players) is replayed ply by ply. From every position the engine plays the game out against itself ``--samples``
times (``set_random_seed`` varies each continuation, so the estimate is reproducible), and the share of those
continuations the agent's side wins (a tie counts half) estimates ``p_t``, the agent's winning chance at ply ``t``
if the reference engine played both sides from there. The change ``p_{t+1} - p_t`` across one of the agent's moves
is what that move gained or lost against the engine's own choice in its place; across an engine move it is zero on
average (the engine is the reference), which checks the estimate. Summed over a game the changes telescope to the
game's result minus ``p_0``, so the table says in which moves the agent loses the games that it loses.

Usage (Pentobi built with ``benchmarks/build_pentobi.sh``; the engine command of the match, at its level)::

    python benchmarks/pentobi_ladder.py --agent strong --budget 0,12,24:429,525,812 --engine "$P" --levels 5 \\
        --games 100 --results strong_L5.jsonl --games-dir games_L5
    taskset -c 0 python benchmarks/move_losses.py games_L5 --engine "${P/\\{level\\}/5}" --samples 12 \\
        --out losses_L5.jsonl

``--out`` holds one JSON line per game (resumable: games already there are skipped); the table is printed from it.
``--self-play N`` first writes ``N`` games of the engine against itself into the folder, one side named the agent:
the estimate's check, where every change must be zero within its standard error (``--variant`` names the engine's
game for those records, Duo by default). The engine's ``genmove``, ``play``, ``final_score`` and ``set_random_seed``
are used.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import zlib
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from blokus_agents.engines.gtp_client import GtpClient
from blokus_jax.io import sgf
from blokus_jax.io.render import parse_cell_name
from blokus_jax.io.sgf import parse_main_line
from blokus_jax.variants import get_variant

#: Move groups of the table: the agent's moves, counted from 1, in these ranges (the last open-ended).
GROUPS: tuple[tuple[int, int], ...] = ((1, 2), (3, 4), (5, 6), (7, 8), (9, 10), (11, 12), (13, 99))
#: The GTP colours of a two-player game, in turn order.
COLORS: tuple[str, ...] = ("b", "w")


def read_game(path: Path, agent_name: str) -> tuple[int, list[tuple[str, str]]]:
    """The agent's colour index (0 first, 1 second) and the moves (``(colour, point set)``) of a record.

    Raises:
        ValueError: the record is not a two-player game between the agent (a player name containing
            ``agent_name``) and another player.
    """
    nodes = parse_main_line(path.read_text(encoding="utf-8"))
    root = dict(nodes[0])
    names = [root.get("PB", [""])[0], root.get("PW", [""])[0]]
    seats = [i for i, name in enumerate(names) if agent_name in name]
    if len(seats) != 1:
        raise ValueError(f"{path}: players {names}; exactly one must contain {agent_name!r}")
    moves = []
    for node in nodes[1:]:
        for prop, values in node:
            if prop in ("B", "W") and values and values[0]:
                moves.append((prop.lower(), values[0]))
    return seats[0], moves


def agent_result(score: str, agent: int) -> float:
    """The agent's result (1 win, 0.5 tie, 0 loss) from a GTP ``final_score`` reply (``B+3``, ``W+11``, ``0``)."""
    score = score.strip()
    if score in ("0", "Draw", "draw"):
        return 0.5
    winner = COLORS.index(score[0].lower())
    return 1.0 if winner == agent else 0.0


def play_both_sides(engine: GtpClient, color: str) -> list[tuple[str, str]]:
    """The moves (``(colour, point set)``) the engine plays from its position, playing both sides with ``color`` to
    move, until both pass in turn."""
    moves, passes = [], 0
    while passes < len(COLORS):
        move = engine.send(f"genmove {color}").strip()
        if move.lower() == "pass":
            passes += 1
        else:
            passes = 0
            moves.append((color, move))
        color = COLORS[(COLORS.index(color) + 1) % len(COLORS)]
    return moves


def play_out(engine: GtpClient, moves: Sequence[tuple[str, str]], to_move: str, seed: int) -> str:
    """The engine's ``final_score`` after it plays both sides from the position after ``moves``."""
    engine.send("clear_board")
    engine.send(f"set_random_seed {seed}")
    for color, points in moves:
        engine.send(f"play {color} {points}")
    play_both_sides(engine, to_move)
    return engine.send("final_score")


def self_play_records(
    engine: GtpClient, games: int, folder: Path, variant: str = "duo", seed: int = 1000
) -> list[Path]:
    """Write ``games`` records of the engine against itself into ``folder`` (``check_gNNN.blksgf``), the first
    player named the agent in even games and the second in odd ones: the check of the estimate, whose changes must
    be zero on average for both sides. Existing records are kept."""
    rules = get_variant(variant)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(games):
        path = folder / f"check_g{i:03d}.blksgf"
        paths.append(path)
        if path.exists():
            continue
        engine.send("clear_board")
        engine.send(f"set_random_seed {seed + i}")
        placements = [
            (COLORS.index(color), np.asarray([parse_cell_name(rules, p) for p in points.split(",")], np.int32))
            for color, points in play_both_sides(engine, COLORS[0])
        ]
        names = ["blokus-jax (the engine)", "engine"][:: 1 if i % 2 == 0 else -1]
        path.write_text(sgf.write(rules, names, {}, placements, None, app="move_losses.py"), encoding="utf-8")
    return paths


def game_curve(engine: GtpClient, agent: int, moves: Sequence[tuple[str, str]], samples: int, seed: int) -> list:
    """``p_t`` for every ply ``t`` of a game (before each move, then after the last): the agent's share of
    ``samples`` engine continuations won from there."""
    curve = []
    for t in range(len(moves) + 1):
        to_move = moves[t][0] if t < len(moves) else COLORS[0]
        wins = sum(
            agent_result(play_out(engine, moves[:t], to_move, seed * 1_000_003 + t * 1_009 + k), agent)
            for k in range(samples)
        )
        curve.append(wins / samples)
    return curve


def summarize(rows: Iterable[dict]) -> list[dict]:
    """Per group of the agent's move numbers: moves, mean change of the agent's chance across its own moves and
    across the engine's reply (with standard errors), and the total per game."""
    rows = list(rows)
    out = []
    for lo, hi in GROUPS:
        own, reply = [], []
        for row in rows:
            curve, colors, agent = row["curve"], row["colors"], row["agent"]
            number = 0
            for t, color in enumerate(colors):
                if COLORS.index(color) != agent:
                    continue
                number += 1
                if lo <= number <= hi:
                    own.append(curve[t + 1] - curve[t])
                    if t + 1 < len(colors) and COLORS.index(colors[t + 1]) != agent:  # the engine's reply
                        reply.append(curve[t + 2] - curve[t + 1])
        out.append(
            {
                "moves": f"{lo}-{hi}" if hi < 99 else f"{lo}+",
                "count": len(own),
                "agent": _mean_se(own),
                "engine_reply": _mean_se(reply),
                "per_game": sum(own) / max(len(rows), 1),
            }
        )
    return out


def _mean_se(xs: Sequence[float]) -> tuple[float, float]:
    if not xs:
        return (math.nan, math.nan)
    mean = sum(xs) / len(xs)
    var = sum((x - mean) ** 2 for x in xs) / max(len(xs) - 1, 1)
    return (mean, math.sqrt(var / len(xs)))


def print_table(rows: list[dict]) -> None:
    """The summary as a Markdown table, with the games' mean start and result."""
    n = len(rows)
    if not n:
        print("no games")
        return
    start = sum(r["curve"][0] for r in rows) / n
    result = sum(r["curve"][-1] for r in rows) / n
    print(f"{n} games: the agent's chance at the start {start:.3f} (the engine playing it), its result {result:.3f}")
    print("| agent's moves | moves | change a move (agent) | change a move (engine's reply) | change a game |")
    print("|---|---:|---:|---:|---:|")
    for s in summarize(rows):
        (a, ae), (e, ee) = s["agent"], s["engine_reply"]
        print(f"| {s['moves']} | {s['count']} | {a:+.3f} ± {ae:.3f} | {e:+.3f} ± {ee:.3f} | {s['per_game']:+.3f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", help="a folder of .blksgf records (the agent against the engine)")
    parser.add_argument("--engine", required=True, help="the reference GTP engine's command (one level)")
    parser.add_argument("--agent-name", default="blokus-jax", help="a part of the agent's player name (PB/PW)")
    parser.add_argument("--variant", default="duo", help="the engine's game, for --self-play's records (default duo)")
    parser.add_argument("--samples", type=int, default=12, help="continuations a position (default 12)")
    parser.add_argument("--limit", type=int, default=0, help="at most this many games (0: all)")
    parser.add_argument(
        "--self-play",
        type=int,
        default=0,
        metavar="N",
        help="first write N games of the engine against itself into the folder (the estimate's check: every change "
        "must be zero on average)",
    )
    parser.add_argument("--out", required=True, help="JSON lines, one a game (resumable)")
    args = parser.parse_args(argv)
    if args.samples < 1:
        parser.error("--samples must be at least 1")
    out = Path(args.out)
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()] if out.exists() else []
    done = {row["game"] for row in rows}
    engine = GtpClient(args.engine)
    try:
        if args.self_play:
            self_play_records(engine, args.self_play, Path(args.games), args.variant)
        paths = sorted(Path(args.games).glob("*.blksgf"))
        if args.limit:
            paths = paths[: args.limit]
        todo = [p for p in paths if p.name not in done]
        with out.open("a", encoding="utf-8") as f:
            for path in tqdm(todo, unit="game"):
                agent, moves = read_game(path, args.agent_name)
                curve = game_curve(engine, agent, moves, args.samples, seed=zlib.crc32(path.name.encode()))
                row = {"game": path.name, "agent": agent, "colors": [c for c, _ in moves], "curve": curve}
                f.write(json.dumps(row) + "\n")
                f.flush()
                rows.append(row)
    finally:
        engine.close()
    print_table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
