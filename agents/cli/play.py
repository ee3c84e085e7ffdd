"""`blokus-jax play`: a person against an agent in the terminal (moves typed as piece and cells, hints from an
agent, undo), and the parsing of typed moves."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import functools
import io
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from blokus_agents.cli.common import (
    Handler,
    nonnegative_int,
    seed_int,
    showing_calibration,
    variant_of,
)
from blokus_jax.errors import IllegalActionError
from blokus_jax.variants import variant_names

if TYPE_CHECKING:
    import jax

    from blokus_agents.core.policies import Policy
    from blokus_jax.env import Env, State

PLAY_HELP = """Commands:
  <piece> <orientation> <cell>   e.g. "{example}": piece name, orientation number (0 to one less than the piece's
                                 count of rotations and reflections, drawn by "show <piece>"), and the cell of the
                                 top-left corner of the piece's bounding box
  <cell> <cell> ...              the cells to cover, e.g. "{cells}" (or "{cells_commas}")
  pieces                         your remaining pieces and how many orientations each has
  show <piece>                   draw every orientation of a piece with its number
  hint                           suggest a move (by the agent of --hint-bot; the default strong is calibrated to
                                 this machine once, in the background from the first hint, greedy hinting meanwhile)
  undo                           take back your last move (and the replies to it)
  help                           this text
  quit                           leave the game
Cells are named as on the board and in .blksgf files: a column letter and a row number counted from the bottom,
e.g. {corner} is the bottom-left corner."""


def play_help(env: Env, color: int = 0) -> str:
    """The `help` text of `play_game` with an example that is a legal first move of `color` on `env`'s
    board (a piece with several orientations on the colour's start square), written both ways: piece, orientation
    and cell, and the list of its cells."""
    from blokus_jax.io import render

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
    """The legal placements (action ids, ascending) of `color` on the empty board."""
    import jax.numpy as jnp
    import numpy as np

    from blokus_jax import rules

    state = env.init()
    bits = env.placement_bits(state, jnp.int32(color))
    mask = np.asarray(rules.legal_mask(bits, env.board_shape[1]))[: env.pass_action]
    return [int(a) for a in np.flatnonzero(mask)]


#: The longest line `play` reads (a move of the largest piece as cells, with commas, is well under 100
#: characters); a longer one is refused without being echoed.
MAX_LINE_CHARS = 200
#: The most words a line may have (the cells of the largest piece, or a command).
MAX_TOKENS = 32
#: The most digits an orientation number may have.
_MAX_ORIENTATION_DIGITS = 3

#: The words `play` understands besides moves (a mistyped one is answered with the nearest, not read as a cell).
PLAY_COMMANDS = ("pieces", "show", "hint", "undo", "help", "quit", "exit")


def suggest_command(text: str, env: Env) -> str | None:
    """The command that a one-word input which is neither a command nor a cell name most likely meant (`hlep`
    -> `help`), or `None` when it looks like no command."""
    from blokus_jax.io import render

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
    """`(row, col)` of a typed cell name such as `"e10"` (Pentobi convention, see `render.cell_name`)."""
    from blokus_jax.io import render

    return render.parse_cell_name(env.variant, token)


def _piece_index(name: str, env: Env) -> int:
    """Index of the piece called `name` (any case); raises `IllegalActionError` listing the pieces."""
    names = {p.name.lower(): i for i, p in enumerate(env.variant.pieces)}
    if not name.isascii() or name.lower() not in names:  # ASCII only: no Kelvin sign read as 'k'
        raise IllegalActionError(
            f"{name!r} is not a piece of {env.variant.name!r}; its pieces are "
            f"{' '.join(p.name for p in env.variant.pieces)} (type 'pieces' for yours)"
        )
    return names[name.lower()]


def parse_move(text: str, env: Env) -> int:
    """The action index of a typed move (`"<piece> <orientation> <cell>"` or a list of cells); raises
    `IllegalActionError` explaining the expected format, the pieces of the variant or the orientation numbers
    when the text is not a move."""
    from blokus_jax.io import render

    tokens = text.replace(",", " ").split()
    if len(tokens) > MAX_TOKENS:
        raise IllegalActionError(
            f"a move has at most {MAX_TOKENS} words (a piece, an orientation and a cell, or the cells to cover); "
            f"this line has {len(tokens)}"
        )
    names = {p.name.lower() for p in env.variant.pieces}
    if len(tokens) == 3 and tokens[1].isdigit():
        index = _piece_index(tokens[0], env)
        piece = env.variant.pieces[index]
        count = len(piece.orientations)
        if not (tokens[1].isascii() and len(tokens[1]) <= _MAX_ORIENTATION_DIGITS):
            shown = tokens[1] if len(tokens[1]) <= 8 else tokens[1][:8] + "..."
            raise IllegalActionError(
                f"orientation {shown!r} is not a number 0-{count - 1} written in the digits 0-9 ({piece.name!r} "
                f"has {count}; type 'show {piece.name}' to see them)"
            )
        orientation = int(tokens[1])
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
    """`"L5 3 c4 (cells c4 c5 d4 ...)"` for a placement, `"pass"` for the pass."""
    from blokus_jax.io import render

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


NAME = "play"
HELP = "play a game in the terminal against a bot"


def setup(parser: argparse.ArgumentParser) -> Handler:
    """Add the arguments of `blokus-jax play` to `parser`; returns its handler."""
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
    parser.add_argument("--seed", type=seed_int, default=0, help="seed for the bots' random tie-breaks")

    def run(args: argparse.Namespace) -> int:
        from blokus_agents.core import policies
        from blokus_jax.env import make

        env = make(variant_of(args, [args.opponent, args.hint_bot]))
        if not 0 <= args.seat < env.num_players:
            raise ValueError(f"--seat {args.seat} is not a seat of {env.variant.name!r}; use 0-{env.num_players - 1}")
        policies.check_agent(
            args.hint_bot, env
        )  # before anything compiles; a timed hint bot is built at the first hint
        if _timed(args.opponent):
            say = f"{args.opponent!r} plays to a time budget; the simulations it affords on this machine:"
            print(say, file=sys.stderr)
        opponent = _resolve_saying_budget(args.opponent, env)
        if _timed(args.hint_bot):  # built at the first 'hint', so that a game without hints starts at once
            hint_bot: Policy | Deferred = Deferred(
                functools.partial(_resolve_saying_budget, args.hint_bot, env), args.hint_bot
            )
        else:
            hint_bot = policies.resolve_agent(args.hint_bot, env)
        with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):
            sys.stdin.reconfigure(errors="replace")  # typed bytes that are not UTF-8: a bad move, not a crash
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
    """`resolve_agent`, and where that calibrated a time budget, a line on stderr with the simulations a move
    it came to on this machine (what `strong` or `seconds=S` buys here)."""
    from blokus_agents.core import policies
    from blokus_agents.search.mcts import calibrated_budgets

    before = len(calibrated_budgets())
    with showing_calibration():
        policy = policies.resolve_agent(spec, env)
    if len(calibrated_budgets()) > before:
        print(
            f"{spec!r}: {calibrated_budgets()[-1].describe()} on this machine; in play its search also reads the "
            f"clock, so a slower position or a loaded machine gets fewer simulations, not more time",
            file=sys.stderr,
        )
    return policy


def _timed(spec: str) -> bool:
    """Whether agent `spec` has a time budget (`strong`, `seconds=`), which is calibrated when it is built."""
    return spec.partition(":")[0] == "strong" or "seconds=" in spec


#: The agent that answers hints while the hint bot calibrates in the background (cheap: answers at once).
INTERIM_HINT_BOT = "greedy"
#: Seconds the first hint waits for the hint bot before the interim bot answers (enough to load a calibration
#: stored by an earlier run and the compiled search from the compilation cache).
FIRST_HINT_WAIT = 5.0


class _Building:
    """A policy built in a background thread (a time-budgeted hint bot calibrating while the game goes on)."""

    def __init__(self) -> None:
        self.thread: threading.Thread | None = None
        self.built: list[Policy] = []
        self.failed: list[BaseException] = []

    def start(self, build: Callable[[], Policy]) -> None:
        def work() -> None:
            try:
                self.built.append(build())
            except BaseException as exc:  # noqa: BLE001 - raised again in the game's thread
                self.failed.append(exc)

        self.thread = threading.Thread(target=work, name="hint-bot-calibration", daemon=True)
        self.thread.start()

    def result(self, wait: float) -> Policy | None:
        """The policy once built (waiting up to `wait` seconds), else `None`; the build's error is raised."""
        assert self.thread is not None
        self.thread.join(wait)
        if self.thread.is_alive():
            return None
        if self.failed:
            raise self.failed[0]
        return self.built[0]


@dataclasses.dataclass(frozen=True)
class Deferred:
    """A policy built when it is first needed: `build() -> Policy` (`spec` names it in the line said then)."""

    build: Callable[[], Policy]
    spec: str


def _reply(command: str, env: Env, state: State) -> str | None:
    """The answer to a command that leaves the position as it is (`pieces`, `show NAME`, a mistyped command);
    `None` for a move."""
    import numpy as np

    lowered = command.lower()
    if lowered == "pieces":
        remaining = np.asarray(state.remaining)[int(state.current_color)]
        return "  ".join(
            f"{p.name}({len(p.orientations)})" + (f"x{n}" if n > 1 else "")
            for p, n in zip(env.variant.pieces, remaining)
            if n > 0
        )
    if lowered.startswith("show"):
        try:
            return _draw_orientations(env, command[4:].strip())
        except IllegalActionError as exc:
            return f"error: {exc}"
    if (meant := suggest_command(command, env)) is not None:
        return f"unknown command {command!r}; did you mean {meant!r}? Type 'help' for commands."
    return None


class _Hints:
    """The answers to 'hint' in a game: `hint_bot`'s move, or, while a `Deferred` one is built (calibrated) in
    the background from the first hint on, `INTERIM_HINT_BOT`'s with a note saying so and the time left."""

    def __init__(self, env: Env, hint_bot: Policy | Deferred):
        self.env, self.hint_bot = env, hint_bot
        self.hints: list[Callable] = []  # the jitted hint policy once built
        self.building = _Building()
        self.interim: list[Callable] = []  # the cheap bot that answers meanwhile
        self.compiling = False  # the background build has calibrated and is compiling the hint bot's search

    def _prepare(self, build: Callable[[], Policy], spec: str) -> Callable:
        """The hint bot built (calibrated) and its search compiled, both in the background thread, so that its first
        hint answers at once instead of compiling for a minute while the game waits."""
        import jax

        from blokus_agents.core import policies

        act = jax.jit(policies.one_game(build()))
        self.compiling = True
        print(f"  compiling {spec!r}'s search for hints (once a process)", file=sys.stderr)
        key = jax.random.key(0)
        jax.block_until_ready(act(key, self.env.init(key)))
        return act

    def __call__(self, key: jax.Array, state: State) -> tuple[jax.Array, str]:
        """The hinted action and a note on who chose it (empty once the hint bot itself answers)."""
        import jax

        from blokus_agents.core import policies
        from blokus_agents.search.calibration_store import calibration_remaining

        hint_bot, building = self.hint_bot, self.building
        if not self.hints and not isinstance(hint_bot, Deferred):
            self.hints.append(jax.jit(policies.one_game(hint_bot)))
        if not self.hints:
            if building.thread is None:
                print(
                    f"preparing {hint_bot.spec!r} for hints in the background; the simulations its time budget "
                    f"affords on this machine:",
                    file=sys.stderr,
                )
                building.start(functools.partial(self._prepare, hint_bot.build, hint_bot.spec))
            policy = building.result(FIRST_HINT_WAIT if not self.interim else 0.0)
            if policy is not None:
                self.hints.append(policy)
        if self.hints:
            return self.hints[0](key, state), ""
        if not self.interim:
            self.interim.append(jax.jit(policies.resolve_agent(INTERIM_HINT_BOT, self.env)))
        if self.compiling:
            return self.interim[0](key, state), f" (from {INTERIM_HINT_BOT!r} while {hint_bot.spec!r} compiles)"
        left = calibration_remaining()
        when = f", about {left:.0f} s left" if left is not None else ""
        return self.interim[0](key, state), f" (from {INTERIM_HINT_BOT!r} while {hint_bot.spec!r} calibrates{when})"


def play_game(
    env: Env, opponent: Policy, hint_bot: Policy | Deferred, seat: int, seed: int, stdin: TextIO, out: TextIO
) -> int:
    """Run an interactive game on text streams: the person in `seat` types moves, `opponent` plays every other
    seat. Bad input prints a message and leaves the position.

    Args:
        env: The environment.
        opponent: The policy of every other seat.
        hint_bot: What answers `hint`: a policy, or a `Deferred` one built in the background from the first hint on.
        seat: The person's seat.
        seed: The seed of the game's PRNG key.
        stdin: Where the person's commands come from.
        out: Where the board and messages go.

    Returns:
        0, when the game ends, the input ends or the person quits.
    """
    import jax
    import numpy as np

    from blokus_agents.core import policies
    from blokus_jax import rules
    from blokus_jax.io import records, render

    step, bot, legal = jax.jit(env.step), jax.jit(policies.one_game(opponent)), jax.jit(env.is_legal)
    hint = _Hints(env, hint_bot)

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
        line = stdin.readline(MAX_LINE_CHARS + 1)
        if not line:
            say("\nend of input; leaving the game")
            return 0
        if len(line) > MAX_LINE_CHARS and not line.endswith("\n"):
            while (rest := stdin.readline(1 << 16)) and not rest.endswith("\n"):
                pass  # the rest of the long line is dropped, never echoed
            say(f"error: a line has at most {MAX_LINE_CHARS} characters. Type 'help' for the move format.")
            continue
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
            action, note = hint(sub, state)
            say(f"hint: {describe_move(env, int(action))}{note}")
        elif lowered == "undo":
            if history:
                state, show_board = history.pop(), True
                say("undone")
            else:
                say("nothing to undo")
        elif (reply := _reply(command, env, state)) is not None:
            say(reply)
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
