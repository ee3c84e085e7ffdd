"""The project's agents as a GTP engine that speaks Pentobi's dialect of the Go Text Protocol.

`blokus-jax gtp --agent SPEC --variant V` reads GTP commands on stdin and answers on stdout, so Pentobi's
`twogtp`, GoGui-style tools and `blokus_agents.engines.ladder` can play any agent spec. The dialect is Pentobi's:
colours `b`/`w` with two colours and `1`-`4` with four (colour names are accepted too), a move is its cells as
points joined by commas (`e10,e9,f9`: column letters from `a` on the left, rows counted from 1 at the bottom), and
there is no pass move: a colour without a legal placement is skipped. `genmove` for such a colour answers
`pass` and changes nothing.

Every malformed or illegal command gets a GTP error reply (`? message`) and leaves the position as it was; the
engine only stops on `quit` or the end of its input. Lines are capped at `MAX_LINE` characters.
"""

from __future__ import annotations

import contextlib
import io
import re
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

import jax
import numpy as np

from blokus_agents.core.messages import brief, first_line
from blokus_agents.core.policies import one_game, resolve_agent
from blokus_jax import __version__
from blokus_jax.env import Env, State, make
from blokus_jax.errors import BlokusError
from blokus_jax.io import records, render
from blokus_jax.io.render import cells_text, parse_cell_name
from blokus_jax.io.sgf import result_value
from blokus_jax.variants import GAMES, Variant

#: Longest command line the engine reads; a longer one is answered with an error and skipped.
MAX_LINE = 4096
#: GTP protocol version spoken.
PROTOCOL_VERSION = "2"
#: The largest seed `set_random_seed` takes (a signed 64-bit integer, as GTP tools send).
MAX_GTP_SEED = 2**63 - 1
#: Pentobi's colour words per colour index, for two- and four-colour games (the first word is the canonical one).
_TWO_COLORS = (("b", "black", "blue"), ("w", "white", "green"))
_FOUR_COLORS = (("1", "blue"), ("2", "yellow"), ("3", "red"), ("4", "green"))
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class GtpError(BlokusError, ValueError):
    """A GTP command that cannot be carried out; its message is the text of the `? ...` reply."""


# --------------------------------------------------------------------------------------------- the dialect
def color_words(variant: Variant) -> tuple[tuple[str, ...], ...]:
    """The accepted words of each colour of a variant.

    Args:
        variant: The rules.

    Returns:
        One tuple of lower-case words a colour; the first is what the engine writes.
    """
    if variant.num_colors == 2:
        return _TWO_COLORS
    if variant.num_colors <= 4:
        return _FOUR_COLORS[: variant.num_colors]
    return tuple((str(c + 1),) for c in range(variant.num_colors))


def color_text(variant: Variant, color: int) -> str:
    """The GTP word of a colour.

    Args:
        variant: The rules.
        color: The colour index.

    Returns:
        `b`/`w` with two colours, else `1`..`4`.
    """
    return color_words(variant)[color][0]


def parse_color(variant: Variant, text: str) -> int:
    """The colour index a GTP word names.

    Args:
        variant: The rules.
        text: The word, case-insensitive.

    Returns:
        The colour index.

    Raises:
        GtpError: `text` names no colour of the variant (the message lists the valid words).
    """
    word = text.strip().lower() if text.isascii() else ""  # ASCII only: a Kelvin sign is no 'k' of "black"
    for color, words in enumerate(color_words(variant)):
        if word in words:
            return color
    valid = ", ".join("/".join(w) for w in color_words(variant))
    raise GtpError(f"invalid color argument {brief(text)}; this game's colours are {valid}")


def move_text(env: Env, action: int) -> str:
    """A placement as Pentobi's move text.

    Args:
        env: The environment.
        action: A placement index.

    Returns:
        Its cells as points joined by commas, bottom row first (`"e10,e9,f9"`).

    Raises:
        IllegalActionError: `action` is out of range or puts the piece off the board.
    """
    return cells_text(env.variant, env.action_cells(int(action)))


def parse_move(env: Env, text: str) -> int:
    """The placement a Pentobi move text names.

    Args:
        env: The environment.
        text: Points joined by commas, in any order (`"e10,e9,f9"`).

    Returns:
        The placement's action index.

    Raises:
        GtpError: A malformed point, more points than the largest piece, a shape that is no piece of the variant,
            or the word `pass` (Blokus has no pass move in GTP).
    """
    text = text.strip()
    if text.lower() in ("pass", "null"):
        raise GtpError("play pass not supported: Blokus has no pass move (a colour without a move is skipped)")
    points = [p.strip() for p in text.split(",")]
    largest = max(p.size for p in env.variant.pieces)
    if len(points) > largest:
        raise GtpError(f"invalid move {brief(text)}: more than {largest} points, no piece is that large")
    try:
        cells = [parse_cell_name(env.variant, p) for p in points]
        return int(env.action_from_cells(cells))
    except BlokusError as exc:
        raise GtpError(f"invalid move {brief(text)}: {first_line(exc)}") from None


def variant_of_game(text: str, current: Variant) -> str:
    """The project's variant name for a `set_game` argument.

    Args:
        text: Pentobi's `GM` name (`Blokus Duo`) or a project variant name, case-insensitive.
        current: The variant played now, accepted by name too.

    Returns:
        The variant name.

    Raises:
        GtpError: An unknown game (the message lists the games this engine can play).
    """
    wanted = " ".join(text.split()).lower() if text.isascii() else ""  # ASCII only (a Kelvin sign is no 'k')
    for name, game in GAMES.items():
        if wanted in (game.lower(), name):
            return name
    if wanted == current.name.lower():
        return current.name
    raise GtpError(f"invalid argument: unknown game {brief(text)}; known games: {', '.join(GAMES.values())}")


# ---------------------------------------------------------------------------------------------- the engine
@dataclass(frozen=True)
class _Entry:
    """One placement in the game's history: the state before it (passes of skipped colours included)."""

    before: State
    color: int
    action: int


class GtpEngine:
    """A Blokus position and an agent behind GTP commands: `handle` answers one command line.

    `agent` is an agent spec (see `blokus_agents.core.policies.resolve_agent`), built for `variant` when the
    engine starts (a time-budgeted spec calibrates then) and again when `set_game` changes the variant.
    `seed` seeds the agent's random choices (`set_random_seed` resets it).
    """

    def __init__(self, agent: str, variant: str = "duo", seed: int = 0, log: Callable[[str], None] | None = None):
        self.agent = agent
        self._log = log or (lambda text: None)
        self._seed = int(seed)
        self._setup(variant)
        self.quit = False
        self.genmove_seconds: list[float] = []
        self._commands: dict[str, Callable[[list[str]], str]] = {
            "protocol_version": _no_args("protocol_version", lambda: PROTOCOL_VERSION),
            "name": _no_args("name", lambda: "blokus-jax"),
            "version": _no_args("version", lambda: f"{__version__} ({self.agent})"),
            "known_command": self._known_command,
            "list_commands": _no_args("list_commands", lambda: "\n".join(sorted(self._commands))),
            "quit": self._quit,
            "set_game": self._set_game,
            "clear_board": self._clear_board,
            "play": self._play,
            "genmove": self._genmove,
            "reg_genmove": self._reg_genmove,
            "undo": self._undo,
            "all_legal": self._all_legal,
            "final_score": self._final_score,
            "showboard": _no_args("showboard", lambda: "\n" + render.to_text(self.state, self.env)),
            "set_random_seed": self._set_random_seed,
            "cputime": _no_args("cputime", lambda: f"{_cpu_seconds():.3f}"),
        }

    # ---------------------------------------------------------------------------------------- set-up
    def _setup(self, variant: str) -> None:
        """Build the env, the agent and the compiled functions for `variant` and start a new game."""
        env = make(variant)
        if env.variant.name not in GAMES or env.variant != make(env.variant.name).variant:
            raise GtpError(f"variant {variant!r} has no Pentobi game; GTP engines play {sorted(GAMES)}")
        self._log(f"building agent {self.agent!r} for {env.variant.name} ...")
        policy = resolve_agent(self.agent, env)
        self.env = env
        self._policy = jax.jit(one_game(policy))  # one game at a time: a time budget runs on the clock
        self._step = jax.jit(env.step)
        self._legal = jax.jit(lambda s, c: env.legal_action_mask(s.replace(legal_bits=env.placement_bits(s, c))))
        self._key = jax.random.key(self._seed)
        self._new_game()

    def _new_game(self) -> None:
        self.state = self.env.init()
        self.history: list[_Entry] = []

    # --------------------------------------------------------------------------------------- protocol
    def handle(self, line: str) -> str | None:
        """Answer one command line; a bad command gets an error reply and changes nothing.

        Args:
            line: The command line (an optional numeric id, the command, its arguments; `#` starts a comment).

        Returns:
            The full reply (`= ...` or `? ...`, ending in a blank line), or `None` for a line that holds no
            command (empty or a comment).
        """
        if len(line) > MAX_LINE:
            return f"? command line longer than {MAX_LINE} characters\n\n"
        line = _CONTROL.sub("", line.split("#", 1)[0]).replace("\t", " ").strip()
        if not line:
            return None
        if not line.isascii():  # GTP is ASCII: no other digits as ids, no Kelvin sign read as the letter k
            return "? the command holds non-ASCII characters; GTP commands, colours and moves are ASCII only\n\n"
        words = line.split()
        ident = ""
        if words[0].isascii() and words[0].isdigit():
            ident, words = words[0], words[1:]
            if not words:
                return f"?{ident} missing command\n\n"
        command, args = words[0].lower(), words[1:]
        handler = self._commands.get(command)
        if handler is None:
            return f"?{ident} unknown command {brief(command)}; list_commands shows the known ones\n\n"
        try:
            result = handler(args)
        except BlokusError as exc:
            return f"?{ident} {_one_line(str(exc))}\n\n"
        return f"={ident} {result}\n\n"  # "= " even when empty: twogtp requires the space

    def serve(self, stdin: TextIO, stdout: TextIO) -> int:
        """Answer commands until `quit` or the end of input; an over-long line is read in bounded chunks and
        refused.

        Args:
            stdin: Where the commands come from.
            stdout: Where the replies go (flushed after each).

        Returns:
            0, the process's exit status.
        """
        while not self.quit:
            line = stdin.readline(MAX_LINE + 1)
            if not line:
                break
            if len(line) > MAX_LINE and not line.endswith("\n"):
                while (rest := stdin.readline(MAX_LINE + 1)) and not rest.endswith("\n"):
                    pass  # drop the rest of an over-long line, a bounded chunk at a time
            reply = self.handle(line)
            if reply is not None:
                try:
                    stdout.write(reply)
                    stdout.flush()
                except (BrokenPipeError, ValueError):  # the controller closed its end: nobody listens any more
                    self._log("gtp: the controller closed the connection; stopping")
                    _discard_output(stdout)
                    return 0
        return 0

    # --------------------------------------------------------------------------------------- commands
    def _known_command(self, args: list[str]) -> str:
        _arity(args, 1, "known_command COMMAND")
        return "true" if args[0].lower() in self._commands else "false"

    def _quit(self, args: list[str]) -> str:
        _arity(args, 0, "quit")
        self.quit = True
        return ""

    def _set_game(self, args: list[str]) -> str:
        if not args:
            raise GtpError("set_game needs a game, e.g. set_game Blokus Duo")
        name = variant_of_game(" ".join(args), self.env.variant)
        if name == self.env.variant.name:
            self._new_game()
        else:
            try:
                self._setup(name)
            except BlokusError as exc:
                raise GtpError(f"cannot play {name}: {first_line(exc)}") from None
        return ""

    def _clear_board(self, args: list[str]) -> str:
        _arity(args, 0, "clear_board")
        self._new_game()
        return ""

    def _play(self, args: list[str]) -> str:
        if len(args) < 2:
            raise GtpError("play needs a colour and a move; usage: play COLOR MOVE, e.g. play b e10,e9,f9")
        color = parse_color(self.env.variant, args[0])
        action = parse_move(self.env, " ".join(args[1:]))
        before = self._turn_of(color)
        if not bool(self._legal(before, color)[action]):
            why = records.explain_illegal(self.env.variant, before, action)
            raise GtpError(f"illegal move {move_text(self.env, action)}: {why}")
        self._place(before, color, action)
        return ""

    def _genmove(self, args: list[str]) -> str:
        _arity(args, 1, "genmove COLOR")
        color = parse_color(self.env.variant, args[0])
        before = self._turn_of(color, skip_mover=True)
        if before is None:
            return "pass"
        action = self._choose(before)
        self._place(before, color, action)
        return move_text(self.env, action)

    def _reg_genmove(self, args: list[str]) -> str:
        _arity(args, 1, "reg_genmove COLOR")
        color = parse_color(self.env.variant, args[0])
        before = self._turn_of(color, skip_mover=True)
        return "pass" if before is None else move_text(self.env, self._choose(before))

    def _undo(self, args: list[str]) -> str:
        _arity(args, 0, "undo")
        if not self.history:
            raise GtpError("cannot undo: no move has been played")
        self.state = self.history.pop().before
        return ""

    def _all_legal(self, args: list[str]) -> str:
        _arity(args, 1, "all_legal COLOR")
        color = parse_color(self.env.variant, args[0])
        if bool(self.state.terminated):
            return ""
        mask = np.asarray(self._legal(self.state, color))[: self.env.pass_action]
        return "\n".join(move_text(self.env, a) for a in np.flatnonzero(mask))

    def _final_score(self, args: list[str]) -> str:
        _arity(args, 0, "final_score")
        if self.env.num_players == 2:
            return result_value(np.asarray(self.env.player_scores(self.state)))
        # Pentobi's points of each colour: squares placed plus bonuses (our score counts unplaced squares instead)
        squares = int(np.dot(self.env.tables.piece_sizes, self.env.tables.piece_copies))
        return " ".join(str(squares + int(s)) for s in np.asarray(self.state.scores))

    def _set_random_seed(self, args: list[str]) -> str:
        _arity(args, 1, "set_random_seed N")
        text = args[0]
        if not (text.isascii() and text.isdigit()):  # no '+5', '1_0', '-3' nor other digits
            raise GtpError(f"invalid seed {brief(text)}; give a non-negative integer in the digits 0-9")
        if len(text.lstrip("0")) > len(str(MAX_GTP_SEED)) or int(text) > MAX_GTP_SEED:  # never int() of 4,000 digits
            raise GtpError(f"seed {brief(text)} is too large; give an integer from 0 to 2**63 - 1 ({MAX_GTP_SEED})")
        seed = int(text)
        self._seed = seed
        self._key = jax.random.key(seed % 2**32)
        return ""

    # ---------------------------------------------------------------------------------------- helpers
    def _turn_of(self, color: int, skip_mover: bool = False) -> State | None:
        """The position with `color` to move: colours before it without a legal placement pass (Pentobi skips
        them). Raises `GtpError` when the game is over or a colour with a move would be skipped; with
        `skip_mover`, returns `None` when `color` itself has no placement (`genmove` answers `pass`)."""
        state = self.state
        names = render.color_names(self.env.variant)
        for _ in range(self.env.num_colors + 1):
            if bool(state.terminated):
                if skip_mover:
                    return None
                raise GtpError("the game is over: no colour can place a piece (clear_board starts a new game)")
            mover = int(state.current_color)
            has_move = bool(np.asarray(state.legal_bits).any())
            if mover == color:
                if not has_move and skip_mover:
                    return None
                return state
            if has_move:
                raise GtpError(
                    f"it is {color_text(self.env.variant, mover)}'s turn ({names[mover]} can still place a piece), "
                    f"not {color_text(self.env.variant, color)}'s"
                )
            state = self._step(state, self.env.pass_action)
        raise GtpError(f"colour {color_text(self.env.variant, color)} does not move in this game")

    def _choose(self, state: State) -> int:
        """The agent's placement in `state` (timed into `genmove_seconds`)."""
        self._key, sub = jax.random.split(self._key)
        start = time.perf_counter()
        action = int(self._policy(sub, state))
        self.genmove_seconds.append(time.perf_counter() - start)
        if not 0 <= action < self.env.pass_action or not bool(self._legal(state, int(state.current_color))[action]):
            raise GtpError(f"agent {self.agent!r} chose an illegal move (action {action}); please report this")
        return action

    def _place(self, before: State, color: int, action: int) -> None:
        self.history.append(_Entry(self.state, color, action))
        self.state = self._step(before, action)


def _arity(args: list[str], count: int, usage: str) -> None:
    if len(args) != count:
        raise GtpError(f"wrong number of arguments ({len(args)}); usage: {usage}")


def _no_args(name: str, answer: Callable[[], str]) -> Callable[[list[str]], str]:
    """A handler for command `name`, which takes no arguments: `answer()`, or a refusal when arguments follow."""

    def handler(args: list[str]) -> str:
        _arity(args, 0, name)
        return answer()

    return handler


def _discard_output(stream: TextIO) -> None:
    """Point `stream`'s file descriptor at the null device, so that what is still buffered (flushed at exit) does
    not raise a second broken-pipe error."""
    import os

    with contextlib.suppress(AttributeError, OSError, ValueError, io.UnsupportedOperation):
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, stream.fileno())
        finally:
            os.close(null)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _cpu_seconds() -> float:
    """CPU seconds used by this process and its finished children (what twogtp's `cputime` asks for)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def run_engine(
    agent: str, variant: str, seed: int = 0, stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    """Run a GTP engine for `agent` on `variant` over `stdin`/`stdout` (the process's by default).

    While it runs, anything else written to `sys.stdout` (a library's print) goes to stderr, so that the protocol stream
    carries replies only.

    Args:
        agent: The agent spec that plays (see `blokus_agents.core.policies.resolve_agent`).
        variant: The variant's name; `set_game` may change it.
        seed: Seeds the agent's random choices (`set_random_seed` resets it).
        stdin: The command stream; default `sys.stdin` (bytes that are not UTF-8 replaced).
        stdout: The reply stream; default `sys.stdout`.

    Returns:
        0, the process's exit status (from `GtpEngine.serve`).

    Raises:
        AgentSpecError: A bad spec, before any command is read.
    """
    if stdin is None:
        stdin = sys.stdin
        with contextlib.suppress(AttributeError, ValueError, io.UnsupportedOperation):
            stdin.reconfigure(errors="replace")  # bytes that are not UTF-8 become a non-ASCII line, answered '?'
    protocol = stdout or sys.stdout
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        engine = GtpEngine(agent, variant, seed, log=lambda text: print(text, file=sys.stderr))
        return engine.serve(stdin, protocol)
    finally:
        sys.stdout = saved


__all__ = [
    "GtpEngine",
    "GtpError",
    "color_text",
    "color_words",
    "move_text",
    "parse_color",
    "parse_move",
    "run_engine",
    "variant_of_game",
]
