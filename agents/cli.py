"""The ``blokus-jax`` command: ``eval`` (arena round robin), ``play`` (you against a bot in the terminal), ``bench``.

Each subcommand is one function decorated with :func:`subcommand`: it receives its ``argparse`` parser, adds its
arguments and returns the handler ``(args) -> exit code``. Adding a subcommand is adding one such function.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import functools
import importlib
import json
import math
import os
import sys
import traceback
import warnings
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import jax
import jax.numpy as jnp
import numpy as np

from blokus_agents.arena import ArenaReport, check_opening, round_robin
from blokus_agents.policies import Policy, agent_names, resolve_agent, split_target
from blokus_jax import _extras, benchmark, records, render, rollout, rules, viewer
from blokus_jax.env import Env, State, make
from blokus_jax.errors import BlokusError, CheckpointError, ConfigError, IllegalActionError
from blokus_jax.variants import variant_names

Handler = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], Handler]]] = {}


def subcommand(name: str, help: str) -> Callable:
    """Register ``setup(parser) -> handler`` as the subcommand ``name`` with one-line ``help``."""

    def register(setup: Callable[[argparse.ArgumentParser], Handler]) -> Callable[[argparse.ArgumentParser], Handler]:
        _COMMANDS[name] = (help, setup)
        return setup

    return register


# ---------------------------------------------------------------------------------------- argument types
def _integer(text: str, low: int, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give {what}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"{text!r} is too small; give {what}")
    return value


def positive_int(text: str) -> int:
    """argparse type: an int >= 1."""
    return _integer(text, 1, "a whole number of at least 1")


def nonnegative_int(text: str) -> int:
    """argparse type: an int >= 0."""
    return _integer(text, 0, "a whole number of at least 0")


def unit_float(text: str) -> float:
    """argparse type: a number from 0 to 1 (a weight or share)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; give a weight from 0 to 1 such as 0.5") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a weight from 0 to 1, e.g. 0.5")
    return value


def positive_float(text: str) -> float:
    """argparse type: a finite number > 0 (rejects nan and inf)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; give a positive number such as 0.5") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number above 0, e.g. 0.5")
    return value


def _writable_dir_for(path: Path, flag: str) -> None:
    """Raise ``ArgumentTypeError`` unless ``path`` could be created or written: its nearest existing ancestor must be
    a writable directory."""
    ancestor = path.absolute()
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise argparse.ArgumentTypeError(f"{flag} {str(path)!r}: {str(ancestor)!r} is a file, not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{flag} {str(path)!r}: the directory {str(ancestor)!r} is not writable")


def output_file(text: str) -> str:
    """argparse type: a file path that can be written (its directory exists and is writable; it is not a
    directory), checked before any long work starts."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory; give a file name such as {text}/results.json")
    if not path.absolute().parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"the directory of {text!r} does not exist; create it first or choose another path"
        )
    _writable_dir_for(path.absolute().parent, "path")
    return text


def output_dir(text: str) -> str:
    """argparse type: a directory that exists or can be created (not a file)."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file; give a directory (it is created if missing)")
    _writable_dir_for(path, "directory")
    return text


def run_variant(specs: list[str]) -> str | None:
    """The variant of the run directories and shipped baselines (``baseline:NAME``) among agent ``specs`` (the one
    they were trained on), ``None`` when there is none; raises ``ValueError`` when they disagree."""
    from blokus_agents.baselines import baseline_variant

    variants = {}
    for spec in specs:
        prefix, colon, _ = spec.partition(":")
        target = _target_or_none(spec) if colon and prefix in ("az", "baseline") else None
        if prefix == "baseline" and target is not None and baseline_variant(target) is not None:
            variants[spec] = baseline_variant(target)
        elif prefix == "az" and target is not None and os.path.isdir(target):
            variants[spec] = _run_config(target, spec).variant
        elif prefix not in agent_names() and os.path.isdir(spec):
            variants[spec] = _run_config(spec).variant
    if len(set(variants.values())) > 1:
        raise ValueError(
            f"the run directories and baselines were trained on different variants {variants}; pass --variant"
        )
    return next(iter(variants.values()), None)


def _target_or_none(spec: str) -> str | None:
    try:
        return split_target(spec)[0]
    except ValueError:
        return None  # resolving the spec reports it


def _run_config(run_dir: str, spec: str | None = None) -> Any:
    """The config of a run directory's newest checkpoint (needs the ``train`` extra, checked first), given as agent
    ``spec`` (default: the path): an ``AgentSpecError`` saying so when it has no checkpoint."""
    _extras.require("train", f"loading the run directory {run_dir!r}", ("orbax.checkpoint",))
    checkpoint = importlib.import_module("blokus_agents.checkpoint")
    checkpoint.require_agent_run(run_dir, spec)
    return checkpoint.load_config(run_dir)


def _variant(args: argparse.Namespace, specs: list[str]) -> str:
    """``--variant`` when given, else the run directories' own variant, else duo."""
    if args.variant is not None:
        return args.variant
    found = run_variant(specs)
    if found is not None:
        print(f"variant {found} (that of the run directory or baseline; pass --variant to change it)", file=sys.stderr)
    return found or "duo"


_AGENT_HELP = (
    "agent names (options as name:key=value,...), e.g. greedy, minimax:k=8, baseline:duo (a shipped baseline), "
    "or run directories (the --out of 'blokus-jax train')"
)


def print_table(rows: list[list[str]], title: str, out: TextIO) -> None:
    """Print ``rows`` (header first) as a rich table when rich is installed, else as aligned plain text."""
    try:
        from rich.console import Console
        from rich.table import Table
    except ImportError:
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        print(title, file=out)
        for r in rows:
            print("  ".join(c.ljust(w) for c, w in zip(r, widths)), file=out)
        return
    table = Table(title=title)
    for name in rows[0]:
        table.add_column(name, justify="left" if name == "agent" else "right")
    for r in rows[1:]:
        table.add_row(*r)
    Console(file=out, width=max(100, Console().width)).print(table)


# ------------------------------------------------------------------------------------------------------------ eval
@subcommand("eval", "play every pair of agents against each other and print win rates, scores and Elo")
def _eval(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument(
        "--variant",
        default=None,
        choices=variant_names(),
        help="variant to play (default: that of the run directories among the agents, else duo)",
    )
    parser.add_argument("--agents", nargs="+", default=["random", "greedy"], metavar="AGENT", help=_AGENT_HELP)
    parser.add_argument(
        "--games",
        type=positive_int,
        default=100,
        help="games per pairing, rounded up to a multiple of the seat rotation (default 100)",
    )
    parser.add_argument("--seed", type=nonnegative_int, default=0, help="seed; the same seed gives the same results")
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
        if len(set(args.agents)) != len(args.agents) or len(args.agents) < 2:
            raise ValueError(f"--agents needs at least two distinct agents, got {args.agents}")
        if args.save_games and args.num_saved > MAX_SAVED:
            raise ValueError(f"--num-saved {args.num_saved} is more than {MAX_SAVED} sample games; give fewer")
        env = make(_variant(args, args.agents))
        try:
            check_opening(env, args.opening)
        except ValueError as exc:
            raise ValueError(f"--opening: {exc}") from None
        policies = {spec: resolve_agent(spec, env) for spec in args.agents}
        report = round_robin(
            env,
            policies,
            args.games,
            seed=args.seed,
            progress=not args.no_progress,
            opening=args.opening,
            log=_say,  # the compile line is shown with --no-progress too: a search agent compiles for minutes
        )
        _print_report(report, args.markdown)
        if args.json:
            with open(args.json, "w") as f:
                json.dump(report.to_dict(), f, indent=2)
        if args.save_games:
            first, second = args.agents[:2]
            _say(
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


#: The most sample games ``eval --save-games`` records (they are played in one batch, and each is a file).
MAX_SAVED = 10_000


def _say(text: str) -> None:
    """One progress line on stderr (stdout carries the results)."""
    print(text, file=sys.stderr, flush=True)


def save_sample_games(
    env: Env, first: Policy, others: Policy, names: tuple[str, str], count: int, seed: int, directory: str, fmt: str
) -> list:
    """Record ``count`` games on device with ``first`` as player 0 and ``others`` in every other seat, and save them
    as ``.blksgf`` or JSON records in ``directory``; returns the written paths."""

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


# ------------------------------------------------------------------------------------------------------------ play
PLAY_HELP = """Commands:
  <piece> <orientation> <cell>   e.g. "{example}": piece name, orientation number (0 to one less than the piece's
                                 count of rotations and reflections, drawn by "show <piece>"), and the cell of the
                                 top-left corner of the piece's bounding box
  <cell> <cell> ...              the cells to cover, e.g. "{cells}" (or "{cells_commas}")
  pieces                         your remaining pieces and how many orientations each has
  show <piece>                   draw every orientation of a piece with its number
  hint                           suggest a move
  undo                           take back your last move (and the replies to it)
  help                           this text
  quit                           leave the game
Cells are named as on the board and in .blksgf files: a column letter and a row number counted from the bottom,
e.g. {corner} is the bottom-left corner."""


def play_help(env: Env, color: int = 0) -> str:
    """The ``help`` text of :func:`play_game` with an example that is a legal first move of ``color`` on ``env``'s
    board (a piece with several orientations on the colour's start square), written both ways: piece, orientation
    and cell, and the list of its cells."""
    pieces = env.variant.pieces
    legal = _first_moves(env, color)
    index = max(range(len(pieces)), key=lambda i: (min(len(pieces[i].orientations), 2), len(pieces[i].cells), -i))
    orientation = min(1, len(pieces[index].orientations) - 1)
    moves = [a for a in legal if env.decode_action(a)[:2] == (index, orientation)] or legal
    piece, orientation, row, col = env.decode_action(moves[0])
    cells = [render.cell_name(env.variant, r, c) for r, c in env.action_cells(moves[0])]
    return PLAY_HELP.format(
        example=f"{pieces[piece].name} {orientation} {render.cell_name(env.variant, row, col)}",
        cells=" ".join(cells),
        cells_commas=",".join(cells),
        corner=render.cell_name(env.variant, env.variant.board_shape[0] - 1, 0),
    )


def _first_moves(env: Env, color: int) -> list[int]:
    """The legal placements (action ids, ascending) of ``color`` on the empty board."""
    state = env.init()
    bits = env.placement_bits(state, jnp.int32(color))
    mask = np.asarray(rules.legal_mask(bits, env.board_shape[1]))[: env.pass_action]
    return [int(a) for a in np.flatnonzero(mask)]


#: The words ``play`` understands besides moves (a mistyped one is answered with the nearest, not read as a cell).
PLAY_COMMANDS = ("pieces", "show", "hint", "undo", "help", "quit", "exit")


def suggest_command(text: str, env: Env) -> str | None:
    """The command that a one-word input which is neither a command nor a cell name most likely meant (``hlep``
    -> ``help``), or ``None`` when it looks like no command."""
    word = text.strip().lower()
    if " " in word or word in PLAY_COMMANDS:
        return None
    try:
        render.parse_cell_name(env.variant, word)
        return None  # a cell: read as a move
    except IllegalActionError:
        pass
    close = difflib.get_close_matches(word, PLAY_COMMANDS, n=1, cutoff=0.5)
    return close[0] if close else None


def parse_cell(token: str, env: Env) -> tuple[int, int]:
    """``(row, col)`` of a typed cell name such as ``"e10"`` (Pentobi convention, see :func:`render.cell_name`)."""
    return render.parse_cell_name(env.variant, token)


def _piece_index(name: str, env: Env) -> int:
    """Index of the piece called ``name`` (any case); raises ``IllegalActionError`` listing the pieces."""
    names = {p.name.lower(): i for i, p in enumerate(env.variant.pieces)}
    if name.lower() not in names:
        raise IllegalActionError(
            f"{name!r} is not a piece of {env.variant.name!r}; its pieces are "
            f"{' '.join(p.name for p in env.variant.pieces)} (type 'pieces' for yours)"
        )
    return names[name.lower()]


def parse_move(text: str, env: Env) -> int:
    """The action index of a typed move (``"<piece> <orientation> <cell>"`` or a list of cells); raises
    ``IllegalActionError`` explaining the expected format, the pieces of the variant or the orientation numbers
    when the text is not a move."""
    tokens = text.replace(",", " ").split()
    names = {p.name.lower() for p in env.variant.pieces}
    if len(tokens) == 3 and tokens[1].isdigit():
        index = _piece_index(tokens[0], env)
        piece = env.variant.pieces[index]
        orientation, count = int(tokens[1]), len(piece.orientations)
        if orientation >= count:
            raise IllegalActionError(
                f"{piece.name!r} has orientations 0-{count - 1} (its distinct rotations and "
                f"reflections; type 'show {piece.name}' to see them), not {orientation}"
            )
        row, col = parse_cell(tokens[2], env)
        action = env.encode_action(index, orientation, row, col)
        try:
            env.action_cells(action)
        except IllegalActionError as exc:
            raise IllegalActionError(
                f"{piece.name} {orientation} at {tokens[2]} does not fit on the board: "
                f"{tokens[2]} is the top-left corner of the piece's bounding box"
            ) from exc
        return action
    try:
        cells = [parse_cell(t, env) for t in tokens]
    except IllegalActionError as exc:
        if tokens and tokens[0].lower() in names:
            raise IllegalActionError(
                f"{text!r}: write a piece move as <piece> <orientation> <cell>, e.g. "
                f"'{env.variant.pieces[-1].name} 0 {render.cell_name(env.variant, 0, 0)}'"
            ) from exc
        raise
    return env.action_from_cells(cells)


def describe_move(env: Env, action: int) -> str:
    """``"L5 3 c4 (cells c4 c5 d4 ...)"`` for a placement, ``"pass"`` for the pass."""
    if action == env.pass_action:
        return "pass"
    piece, orientation, row, col = env.decode_action(action)
    cells = " ".join(render.cell_name(env.variant, r, c) for r, c in env.action_cells(action))
    anchor = render.cell_name(env.variant, row, col)
    return f"{env.variant.pieces[piece].name} {orientation} {anchor} (cells {cells})"


def _draw_orientations(env: Env, piece_name: str) -> str:
    piece = env.variant.pieces[_piece_index(piece_name, env)]
    blocks = []
    for i, cells in enumerate(piece.orientations):
        h = max(r for r, _ in cells) + 1
        w = max(c for _, c in cells) + 1
        grid = [["#" if (r, c) in cells else "." for c in range(w)] for r in range(h)]
        blocks.append(f"orientation {i}:\n" + "\n".join("  " + "".join(row) for row in grid))
    return "\n".join(blocks)


@subcommand("play", "play a game in the terminal against a bot")
def _play(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument(
        "--variant",
        default=None,
        choices=variant_names(),
        help="variant to play (default: that of a run directory given as --opponent, else duo)",
    )
    parser.add_argument(
        "--opponent",
        default="greedy",
        help="agent for the other seats: an agent name (e.g. greedy, minimax:k=8) or a run directory (default greedy)",
    )
    parser.add_argument("--seat", type=nonnegative_int, default=0, help="your seat (player index; 0 moves first)")
    parser.add_argument(
        "--hint-bot",
        default="strong",
        help="agent that answers 'hint' (default strong: the best player at 2 s a move; corners answers at once)",
    )
    parser.add_argument("--seed", type=nonnegative_int, default=0, help="seed for the bots' random tie-breaks")

    def run(args: argparse.Namespace) -> int:
        env = make(_variant(args, [args.opponent, args.hint_bot]))
        if not 0 <= args.seat < env.num_players:
            raise ValueError(f"--seat {args.seat} is not a seat of {env.variant.name!r}; use 0-{env.num_players - 1}")
        if _timed(args.opponent):
            print(f"calibrating {args.opponent!r} to its time budget here (two compilations) ...", file=sys.stderr)
        opponent = _resolve_saying_budget(args.opponent, env)
        if _timed(args.hint_bot):  # built at the first 'hint', so that a game without hints starts at once
            hint_bot: Policy | Deferred = Deferred(
                functools.partial(_resolve_saying_budget, args.hint_bot, env), args.hint_bot
            )
        else:
            hint_bot = resolve_agent(args.hint_bot, env)
        return play_game(
            env,
            opponent,
            hint_bot,
            args.seat,
            args.seed,
            sys.stdin,
            sys.stdout,
        )

    return run


def _resolve_saying_budget(spec: str, env: Env) -> Policy:
    """:func:`resolve_agent`, and where that calibrated a time budget, a line on stderr with the simulations a move
    it came to on this machine (what ``strong`` or ``seconds=S`` buys here)."""
    from blokus_agents.search import calibrated_sims

    before = len(calibrated_sims())
    policy = resolve_agent(spec, env)
    if len(calibrated_sims()) > before:
        print(f"{spec!r}: {calibrated_sims()[-1]} simulations a move on this machine", file=sys.stderr)
    return policy


def _timed(spec: str) -> bool:
    """Whether agent ``spec`` has a time budget (``strong``, ``seconds=``), which is calibrated when it is built."""
    return spec.partition(":")[0] == "strong" or "seconds=" in spec


@dataclasses.dataclass(frozen=True)
class Deferred:
    """A policy built when it is first needed: ``build() -> Policy`` (``spec`` names it in the line said then)."""

    build: Callable[[], Policy]
    spec: str


def play_game(
    env: Env, opponent: Policy, hint_bot: Policy | Deferred, seat: int, seed: int, stdin: TextIO, out: TextIO
) -> int:
    """Run an interactive game on text streams: the person in ``seat`` types moves, ``opponent`` plays every other
    seat; returns 0 when the game ends or the person quits. Bad input prints a message and leaves the position."""
    step, bot, legal = jax.jit(env.step), jax.jit(opponent), jax.jit(env.is_legal)
    hints: list[Callable] = []  # the jitted hint policy, built at the first 'hint' when it is Deferred

    def hint(key: jax.Array, state: State) -> jax.Array:
        if not hints:
            policy = hint_bot
            if isinstance(hint_bot, Deferred):
                print(f"calibrating {hint_bot.spec!r} for hints (two compilations, once) ...", file=sys.stderr)
                policy = hint_bot.build()
            hints.append(jax.jit(policy))
        return hints[0](key, state)

    key = jax.random.key(seed)
    state = env.init(key)
    history: list[State] = []
    names = render.color_names(env.variant)
    mine = ", ".join(names[c] for c in env.variant.players_to_colors[seat])
    say = lambda *a: print(*a, file=out)  # noqa: E731
    starts = "; ".join(
        f"{names[c]} starts on "
        + " or ".join(render.cell_name(env.variant, r, col) for r, col in env.variant.start_cells[c])
        for c in env.variant.players_to_colors[seat]
    )
    say(f"You are player {seat} ({mine}). {starts} (marked * on the board). Type 'help' for commands.")
    show_board = True
    while not bool(state.terminated | state.truncated):
        if int(state.current_player) != seat:
            key, sub = jax.random.split(key)
            action = int(bot(sub, state))
            say(
                f"player {int(state.current_player)} ({names[int(state.current_color)]}) plays "
                f"{describe_move(env, action)}"
            )
            state, show_board = step(state, action), True
            continue
        if not bool(np.asarray(state.legal_bits).any()):
            say("You cannot place any piece; you pass.")
            state, show_board = step(state, env.pass_action), True
            continue
        if show_board:
            say(render.to_text(state, env, starts=True))
            show_board = False
        out.write(f"your move ({names[int(state.current_color)]})> ")
        out.flush()
        line = stdin.readline()
        if not line:
            say("\nend of input; leaving the game")
            return 0
        command = line.strip()
        lowered = command.lower()
        if not command:
            continue
        if lowered in ("quit", "exit"):
            say("bye")
            return 0
        if lowered == "help":
            say(play_help(env, int(env.variant.players_to_colors[seat][0])))
        elif lowered == "hint":
            key, sub = jax.random.split(key)
            say(f"hint: {describe_move(env, int(hint(sub, state)))}")
        elif lowered == "undo":
            if history:
                state, show_board = history.pop(), True
                say("undone")
            else:
                say("nothing to undo")
        elif lowered == "pieces":
            remaining = np.asarray(state.remaining)[int(state.current_color)]
            say(
                "  ".join(
                    f"{p.name}({len(p.orientations)})" + (f"x{n}" if n > 1 else "")
                    for p, n in zip(env.variant.pieces, remaining)
                    if n > 0
                )
            )
        elif lowered.startswith("show"):
            try:
                say(_draw_orientations(env, command[4:].strip()))
            except IllegalActionError as exc:
                say(f"error: {exc}")
        elif (meant := suggest_command(command, env)) is not None:
            say(f"unknown command {command!r}; did you mean {meant!r}? Type 'help' for commands.")
        else:
            try:
                action = parse_move(command, env)
            except IllegalActionError as exc:
                say(f"error: {exc}. Type 'help' for the move format.")
                continue
            if not bool(legal(state, action)):
                say(
                    f"error: {describe_move(env, action)} is not legal here: "
                    f"{records.explain_illegal(env.variant, state, action)}. Try 'hint'."
                )
                continue
            history.append(state)
            say(f"you play {describe_move(env, action)}")
            state, show_board = step(state, action), True
    say(render.to_text(state, env))
    scores = [int(s) for s in np.asarray(env.player_scores(state))]
    share = float(rules.win_shares(np.asarray(scores))[seat])
    result = "you win" if share == 1.0 else ("a tie" if share > 0 else "you lose")
    say(f"game over: scores {scores}; {result}")
    return 0


# ----------------------------------------------------------------------------------------------------------- bench
@subcommand(
    "bench",
    "measure environment throughput (placements per second) on this machine; on a CPU set "
    "XLA_FLAGS=--xla_force_host_platform_device_count=<cores> to use every core",
)
def _bench(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument(
        "--variants",
        nargs="+",
        default=["duo", "classic"],
        choices=variant_names(),
        help="variants to measure (default duo classic)",
    )
    parser.add_argument(
        "--batch-sizes", nargs="+", type=positive_int, default=[1, 1024], help="batch sizes (default 1 1024)"
    )
    parser.add_argument("--steps", type=positive_int, default=100, help="steps per timed run (default 100)")
    parser.add_argument("--repeats", type=positive_int, default=3, help="timed runs per configuration (default 3)")

    def run(args: argparse.Namespace) -> int:
        rows = benchmark.run_benchmark(args.variants, args.batch_sizes, args.steps, args.repeats)
        benchmark.print_table(rows)
        return 0

    return run


# ----------------------------------------------------------------------------------------------------------- train
#: ``blokus-jax train``'s own defaults for the host-loop settings of a new run (a resumed run keeps its saved ones).
_TRAIN_DEFAULTS = {"eval_every": 25, "eval_games": 64, "checkpoint_every": 50, "minutes": 5.0}


@subcommand(
    "train", "train a self-play agent, PPO or AlphaZero (checkpoints, metrics.jsonl and a win-rate plot in --out)"
)
def _train(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument("--variant", default=None, choices=variant_names(), help="variant to learn (default simple)")
    parser.add_argument(
        "--algo",
        choices=("ppo", "alphazero"),
        default=None,
        help="training algorithm: ppo (default; fast, no search) or alphazero (self-play with search, stronger per "
        "move played; see the README's 'Train an agent')",
    )
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument(
        "--minutes",
        type=positive_float,
        help="train for this many minutes of wall time (default 5; a resumed run gets its own again)",
    )
    budget.add_argument("--total-steps", type=positive_int, help="train for this many environment steps instead")
    parser.add_argument("--num-envs", type=positive_int, help="games played in parallel (default 64)")
    parser.add_argument(
        "--num-steps", type=positive_int, help="moves per game per update (default 32 for ppo, 8 for alphazero)"
    )
    parser.add_argument(
        "--sims", type=positive_int, help="alphazero: search simulations per self-play move (default 16)"
    )
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        help="alphazero: positions per optimiser step, a multiple of --num-envs (default 4 x --num-envs)",
    )
    parser.add_argument(
        "--teacher",
        metavar="SPEC",
        help="alphazero: an mcts agent spec (e.g. mcts:sims=64,playouts=4) whose search plays the self-play moves "
        "and gives the policy targets for the first --teacher-updates updates; then the network's own search plays",
    )
    parser.add_argument(
        "--teacher-updates",
        type=positive_int,
        metavar="N",
        help="alphazero, with --teacher: the updates the teacher plays before it hands over to the network",
    )
    parser.add_argument(
        "--root-value",
        type=unit_float,
        metavar="B",
        help="alphazero, two players: value targets blend the search's root value in, (1-B) x game result + B x "
        "root value (default 0: the game result); a teacher's root value includes its playouts' score margin "
        "(its margin option, 0.5 by default)",
    )
    parser.add_argument(
        "--init-from",
        metavar="RUN_DIR",
        help="start from the network of another run (e.g. a PPO run for alphazero); its size is used unless given",
    )
    parser.add_argument("--channels", type=positive_int, help="conv channels of the network (default 32)")
    parser.add_argument("--blocks", type=nonnegative_int, help="residual blocks of the network (default 2)")
    parser.add_argument("--lr", type=positive_float, help="initial learning rate (default 1e-3)")
    parser.add_argument(
        "--seed",
        type=nonnegative_int,
        help="seed; the same seed and settings give the same run on CPU (with the same number of devices)",
    )
    parser.add_argument(
        "--out",
        default=None,
        type=output_dir,
        help="run directory (default runs/<variant>; for alphazero runs/az_<variant>); a resumed run keeps the "
        "--eval-every, --eval-games, --checkpoint-every and --minutes it was started with unless given",
    )
    parser.add_argument("--resume", action="store_true", help="continue the run in --out from its newest checkpoint")
    parser.add_argument("--eval-every", type=nonnegative_int, help="updates between evaluations (0: never; default 25)")
    parser.add_argument("--eval-games", type=positive_int, help="games per evaluation against each bot (default 64)")
    parser.add_argument(
        "--checkpoint-every", type=nonnegative_int, help="updates between checkpoints (0: only at the end; default 50)"
    )
    parser.add_argument("--json", metavar="PATH", type=output_file, help="also write the summary as JSON to PATH")
    parser.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar (the compile and evaluation lines stay)"
    )
    devices = parser.add_argument_group("devices and hosts", "see the README's 'Several devices and hosts'")
    devices.add_argument(
        "--cpu-devices",
        type=positive_int,
        help="on CPU: XLA devices to split the games over (default: one per core; 1 turns the split off)",
    )
    devices.add_argument(
        "--distributed",
        action="store_true",
        help="one run over several processes (hosts): start every process with the same flags; without the three "
        "flags below JAX detects SLURM, TPU pods and Open MPI",
    )
    devices.add_argument("--coordinator", metavar="HOST:PORT", help="--distributed: address of process 0")
    devices.add_argument("--num-processes", type=positive_int, help="--distributed: number of processes")
    devices.add_argument("--process-id", type=nonnegative_int, help="--distributed: this process, 0 to N-1")

    def run(args: argparse.Namespace) -> int:
        train = importlib.import_module("blokus_agents.train")
        if (args.teacher is None) != (args.teacher_updates is None):
            raise ConfigError(
                "--teacher SPEC and --teacher-updates N go together: the teacher plays the first N updates, then "
                "hands over to the network's own search; give both or neither"
            )
        _start_jax(args)
        out = args.out or _default_out(args.algo, args.variant)
        config = _resumed_config(args, out) if args.resume else _new_config(args)
        if not args.resume and args.out is None:
            out = _default_out(config.algorithm, config.variant)
        output_dir(out)
        if not args.resume:
            _refuse_to_overwrite(out, args)
        summary = train.run(
            config,
            out,
            resume=args.resume,
            progress=not args.no_progress,
            init_from=args.init_from,
            **_session_settings(args, out),
        )
        if importlib.import_module("blokus_agents.scaffold").is_primary():
            _print_summary(summary, config, out, args.json)
        return 0

    return run


def _start_jax(args: argparse.Namespace) -> None:
    """Before JAX runs anything: one CPU device per core (or ``--cpu-devices``), then, with ``--distributed`` (or
    any of its three flags), join the other processes."""
    scaffold = importlib.import_module("blokus_agents.scaffold")
    scaffold.use_cpu_cores(args.cpu_devices)
    flags = (args.coordinator, args.num_processes, args.process_id)
    if args.distributed or any(f is not None for f in flags):
        scaffold.start_distributed(*flags)


def _default_out(algo: str | None, variant: str | None) -> str:
    """The default run directory: ``runs/<variant>`` for PPO, ``runs/az_<variant>`` for AlphaZero."""
    return f"runs/{'az_' if algo == 'alphazero' else ''}{variant or 'simple'}"


def _given_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The config fields set by flags (name -> value)."""
    given = {
        "variant": args.variant,
        "num_envs": args.num_envs,
        "num_steps": args.num_steps,
        "channels": args.channels,
        "blocks": args.blocks,
        "learning_rate": args.lr,
        "seed": args.seed,
        "total_steps": args.total_steps,
        "sims": args.sims,
        "batch_size": args.batch_size,
        "teacher": args.teacher,
        "teacher_updates": args.teacher_updates,
        "root_value": args.root_value,
    }
    return {k: v for k, v in given.items() if v is not None}


def _resumed_config(args: argparse.Namespace, out: str) -> Any:
    """The config of the run in ``out`` with the flags' changes (only ``--total-steps`` may differ; the trainer
    lists any other difference)."""
    checkpoint = importlib.import_module("blokus_agents.checkpoint")
    if args.init_from:
        raise CheckpointError("--init-from starts a new run; it cannot be combined with --resume")
    checkpoint.require_resumable(out)
    saved = checkpoint.load_config(out)
    if args.algo is not None and args.algo != saved.algorithm:
        raise CheckpointError(f"{out!r} was trained with {saved.algorithm!r}; resume it with --algo {saved.algorithm}")
    return saved.replace(**_known_fields(saved, _given_fields(args), "--resume"))


def _new_config(args: argparse.Namespace) -> Any:
    """The config of a new run: the algorithm's defaults (an open-ended ``total_steps`` unless given), the network
    size and variant of ``--init-from``, then the flags."""
    algorithms = importlib.import_module("blokus_agents.algorithms")
    checkpoint = importlib.import_module("blokus_agents.checkpoint")
    algo, given = args.algo or "ppo", _given_fields(args)
    if args.init_from:
        checkpoint.require_init_source(args.init_from)
        source = checkpoint.load_config(args.init_from)
        given = {"variant": source.variant, **{f: getattr(source, f) for f in _NETWORK_FIELDS}, **given}
    defaults = algorithms.config_class(algo)(**{"variant": "simple", "total_steps": 10**12})
    given = _known_fields(defaults, given, f"--algo {algo}")
    if algo == "alphazero" and "batch_size" not in given and "num_envs" in given:
        given["batch_size"] = 4 * given["num_envs"]  # every game contributes 4 positions per step
    return defaults.replace(**given)


def _refuse_to_overwrite(out: str, args: argparse.Namespace) -> None:
    """A new run never writes into a run directory that holds checkpoints (in the CLI's words)."""
    checkpoint = importlib.import_module("blokus_agents.checkpoint")
    if checkpoint.latest_step(out) is None:
        return
    why = "" if args.out else " (the default --out of this --algo and --variant)"
    raise CheckpointError(
        f"{out!r}{why} already holds a run's checkpoints; add --resume to continue that run, or give another --out"
    )


def _session_settings(args: argparse.Namespace, out: str) -> dict[str, Any]:
    """The host-loop settings to pass to ``train.run``: the flags given; for a new run (or one saved before runs
    kept their settings) ``blokus-jax train``'s defaults for the others, for a resumed run ``None`` (keep the
    saved ones). ``--total-steps`` on a resumed run drops its time limit."""
    train = importlib.import_module("blokus_agents.train")
    fresh = not args.resume or train.read_settings(out) is None
    settings = {
        "eval_every": args.eval_every,
        "eval_games": args.eval_games,
        "checkpoint_every": args.checkpoint_every,
        "minutes": args.minutes if args.total_steps is None else math.inf,
    }
    if fresh:
        settings = {k: _TRAIN_DEFAULTS[k] if v is None else v for k, v in settings.items()}
    return settings


def _print_summary(summary: dict, config: Any, out: str, json_path: str | None) -> None:
    """The end of ``blokus-jax train``: a short table (updates, steps, time, speed, final win rates with their 95 %
    intervals), the run directory, and the summary as JSON in ``json_path`` when given."""
    opponents = [k.removeprefix("win_rate_vs_") for k in summary if k.startswith("win_rate_vs_")]
    seconds = summary["seconds"]
    rows = [
        ["updates", "env steps", "time", "env-steps/s", *[f"vs {o}" for o in opponents]],
        [
            f"{summary['updates']:,}",
            f"{summary['env_steps']:,}",
            f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s",
            f"{summary['steps_per_s']:,.0f}" if math.isfinite(summary["steps_per_s"]) else "-",
            *[
                f"{summary[f'win_rate_vs_{o}']:.2f} [{lo:.2f}, {hi:.2f}]"
                for o in opponents
                for lo, hi in [summary[f"win_rate_ci_vs_{o}"]]
            ],
        ],
    ]
    name = {"ppo": "PPO", "alphazero": "AlphaZero"}[config.algorithm]
    games = f"; win rates over {summary['eval_games']} games each, 95 % intervals" if opponents else ""
    print_table(rows, f"{name} on {config.variant}{games}", sys.stdout)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(summary, f, indent=1)
    print(
        f"run directory: {out} (metrics.jsonl, win_rate.png, checkpoints/); evaluate it with "
        f"'blokus-jax eval --agents {out} greedy'"
    )


#: Config fields that fix the network's shape (copied from an ``--init-from`` run unless given).
_NETWORK_FIELDS = ("channels", "blocks", "value_hidden")


def _known_fields(config: Any, given: dict[str, Any], context: str) -> dict[str, Any]:
    """``given`` restricted to fields of ``config``; a flag that ``config``'s algorithm does not take (``--sims``
    for PPO) is a ``ConfigError`` naming it."""
    fields = set(config.to_dict())
    unknown = sorted(set(given) - fields)
    if unknown:
        flags = ", ".join("--" + name.replace("_", "-") for name in unknown)
        raise ConfigError(f"{flags} does not apply to {context} ({config.algorithm}); drop it or choose --algo")
    return given


@subcommand("view", "write (and optionally open) a self-contained HTML viewer for a .blksgf or .json game record")
def _view(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument("file", help="a .blksgf (Pentobi) or .json game record")
    parser.add_argument("--out", help="where to write the page, ending in .html (default: FILE with the suffix .html)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.add_argument(
        "--force", action="store_true", help="replace an existing viewer page even if it shows another record"
    )

    def run(args: argparse.Namespace) -> int:
        # Load and check the record, write the viewer page next to it (or to --out), print the page's path. The
        # output path is checked first: never the input itself, never a file that is not a viewer page, and not
        # another record's page unless --force.
        source = Path(args.file)
        target = Path(args.out) if args.out is not None else source.with_suffix(".html")
        if target.suffix.lower() not in (".html", ".htm"):
            raise BlokusError(f"--out {str(target)!r}: the viewer page must be an .html file")
        if source.exists() and (
            source.resolve() == target.resolve() or (target.exists() and os.path.samefile(source, target))
        ):
            raise BlokusError(
                f"the viewer page {str(target)!r} would overwrite its input file; give another path with --out"
            )
        if target.is_dir():
            raise BlokusError(f"--out {str(target)!r} is a directory; give a file name such as {target}/game.html")
        folder = target.absolute().parent
        while not folder.exists():
            folder = folder.parent
        if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
            raise BlokusError(
                f"cannot write the viewer page {str(target)!r}: {str(folder)!r} is not a writable "
                f"directory; choose another path with --out"
            )
        if target.exists():
            shown = viewer.page_source(target)
            if shown is None:
                raise BlokusError(
                    f"{str(target)!r} exists and is not a blokus-jax viewer page; refusing to "
                    f"overwrite it (choose another path with --out)"
                )
            if shown and shown != str(source.resolve()) and not args.force:
                raise BlokusError(
                    f"{str(target)!r} is the viewer page of another record ({shown}); choose "
                    f"another path with --out, or add --force to replace it"
                )
        record = records.load(source)
        try:
            viewer.write_viewer(record, target, title=source.name, source=str(source.resolve()))
        except OSError as exc:
            raise BlokusError(f"cannot write the viewer page {str(target)!r}: {exc}") from exc
        print(target)
        if args.open and not _open_in_browser(target.resolve().as_uri()):
            _say(f"--open: no web browser found on this machine; open {target.resolve()} in a browser yourself")
        return 0

    return run


def _open_in_browser(uri: str) -> bool:
    """Open ``uri`` in the default browser; ``False`` when there is none (``webbrowser`` finds no usable one, as on
    a server without a display)."""
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return bool(webbrowser.open(uri))


@subcommand("replay", "print a recorded game (.blksgf or .json) move by move in the terminal")
def _replay(parser: argparse.ArgumentParser) -> Handler:
    parser.add_argument("file", help="a .blksgf (Pentobi) or .json game record")
    parser.add_argument("--ansi", action="store_true", help="colour the boards with ANSI escape codes")
    parser.add_argument("--boards", action="store_true", help="print the board after every placement")

    def run(args: argparse.Namespace) -> int:
        # The game as terminal text: one line per action (colour, piece and Pentobi cells or the pass, and the
        # player), the board after every placement with --boards, then the final board and the result.
        # Strings from the file are printed with control characters escaped, so a name cannot drive the terminal.
        def text(value: str) -> str:
            return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in str(value))

        record = records.load(args.file)
        variant = record.variant
        env = make(variant)
        names = render.color_names(variant)
        movers = record.movers()
        players = [text(p) for p in record.players]
        lines = [
            f"{text(Path(args.file).name)}: {text(variant.name)}, {' vs '.join(players)}, "
            f"{len(record.moves)} placements"
        ]
        lines += [f"  {text(k)}: {text(v)}" for k, v in record.metadata.items()]
        for k, (action, color, cells) in enumerate(zip(record.actions, record.colors, record.cells), start=1):
            if len(cells) == 0:
                lines.append(f"{k:4d}. {names[color]:<7} pass")
                continue
            piece = variant.pieces[env.decode_action(action)[0]]
            lines.append(
                f"{k:4d}. {names[color]:<7} {text(piece.name):<3} {render.cells_text(variant, cells)}  "
                f"({players[movers[k - 1]]})"
            )
            if args.boards:
                lines.append(render.to_text(record.state_at(k), variant, ansi=args.ansi, pieces=False))
        lines.append(render.to_text(record.replay(), variant, ansi=args.ansi))
        scores = ", ".join(f"{name} {score}" for name, score in zip(players, record.player_scores))
        lines.append(f"result: {text(record.result)} ({scores})")
        print("\n".join(lines))
        return 0

    return run


# ------------------------------------------------------------------------------------------------------------ main
def build_parser() -> argparse.ArgumentParser:
    """The ``blokus-jax`` argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(prog="blokus-jax", description="Blokus in JAX: bots, arena, play, benchmarks.")
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (help_text, setup) in _COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
        sub.set_defaults(handler=setup(sub))
    return parser


_DEBUG_HELP = "show the full traceback of an error (also: environment variable BLOKUS_JAX_DEBUG=1)"

#: Optional dependencies of each command, checked before it starts: ``(extra, modules, required)``. A required one
#: missing stops the command at once; an optional one is announced and its step skipped (the training plot).
COMMAND_EXTRAS: dict[str, list[tuple[str, tuple[str, ...], bool]]] = {
    "train": [("train", ("orbax.checkpoint",), True), ("train", ("matplotlib",), False)],
}


def _check_extras(command: str) -> None:
    """Raise :class:`~blokus_jax.errors.MissingExtraError` for a required extra of ``command`` that is missing;
    warn (one line) about an optional one."""
    for extra, modules, required in COMMAND_EXTRAS.get(command, []):
        if required:
            _extras.require(extra, f"blokus-jax {command}", modules)
        elif _extras.missing(modules):
            _say(
                f"blokus-jax {command}: warning: {', '.join(modules)} is not installed, so the plot is skipped "
                f"(everything else is written); install it with {_extras.install_hint(extra)}"
            )


def _debugging(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "debug", False)) or os.environ.get("BLOKUS_JAX_DEBUG", "") not in ("", "0")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``blokus-jax`` console command; returns the exit code: 2 with a one-line message on bad
    input (any error: an unexpected one says so, and ``--debug`` or ``BLOKUS_JAX_DEBUG=1`` shows its traceback)."""
    args = build_parser().parse_args(argv)
    debug = _debugging(args)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = _show_warning
            _check_extras(args.command)
            return args.handler(args)
    except KeyboardInterrupt:
        print(f"blokus-jax {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # every error ends in one line; --debug shows the traceback
        if debug:
            traceback.print_exc()
        expected = isinstance(exc, (BlokusError, ValueError, OSError, argparse.ArgumentTypeError))
        if isinstance(exc, OSError) and exc.filename:
            message = f"{exc.strerror or exc}: {exc.filename!r}"
        elif expected:
            message = _first_line(exc)
        else:
            message = (
                f"unexpected {type(exc).__name__}: {_first_line(exc)} (rerun with --debug or BLOKUS_JAX_DEBUG=1 "
                f"for the traceback, and please report it)"
            )
        print(f"blokus-jax {args.command}: error: {message}", file=sys.stderr)
        return 2


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    lines = text.splitlines()
    return (lines[0] if lines else repr(exc))[:2000]


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings during a command as one line on stderr, without the source line."""
    print(f"blokus-jax: warning: {message}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
