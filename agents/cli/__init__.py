"""The `blokus-jax` command: one module per subcommand (`eval`, `play`, `bench`, `train`, `view`,
`replay`, `gtp`, `match`) and `main`, which parses the arguments and turns every error into one line.

A command module defines `NAME` (the subcommand), `HELP` (its one-line help) and `setup(parser) -> handler`,
its registration function: it adds the command's arguments to the `argparse` parser it is given and returns the
handler `(args) -> exit code`, which raises the project's errors (`BlokusError`, `ValueError`) for bad input.
A command module imports JAX and everything heavy inside its handler (and the functions the handler calls), so that
`blokus-jax --help`, `blokus-jax CMD --help` and an argument error load no JAX. To add a command, write such a
module in this package, import it below and add it to `COMMANDS`. The commands resolve agent specs through
`blokus_agents.core.policies.resolve_agent` (looked up on the module when called, so that one replacement reaches
them all).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import sys
import traceback
import typing
import warnings
from types import ModuleType

from blokus_agents.cli import bench, evaluate, gtp, match, play, pretrain, replay, train, view
from blokus_agents.cli.common import COMPILE_CACHE_ENV, say, use_compile_cache
from blokus_agents.core.messages import first_line as _first_line
from blokus_jax import _extras
from blokus_jax.errors import BlokusError

#: The subcommands, in the order `blokus-jax --help` lists them (one module each: `NAME`, `HELP`, `setup`).
COMMANDS: tuple[ModuleType, ...] = (
    evaluate,
    play,
    bench,
    train,
    pretrain,
    view,
    replay,
    gtp,
    match,
)

#: What `blokus-jax --help` says first: every command, by name in parentheses.
DESCRIPTION = (
    "Blokus in JAX: compare agents in the arena (eval), play against one (play), measure the environment's speed "
    "(bench), train an agent (train) or pretrain its network on a stronger player's games (pretrain), look at and "
    "replay games (view, replay), serve an agent to GTP tools (gtp) and match it against a GTP engine such as "
    "Pentobi (match)."
)

#: name -> (help, setup): what `build_parser` adds, built from `COMMANDS`.
_COMMANDS = {command.NAME: (command.HELP, command.setup) for command in COMMANDS}


class Parser(argparse.ArgumentParser):
    """An `ArgumentParser` whose errors are short: the message with the nearest valid choice or flag for a typo
    (`did you mean 'duo'?`) and a pointer to `--help`, instead of the whole usage (the top-level parser, whose
    usage is one line, keeps it)."""

    #: The subcommand parsers by name (set on the top-level parser by `build_parser`).
    commands: dict[str, argparse.ArgumentParser]

    def error(self, message: str) -> typing.NoReturn:
        message += _suggestion(message, self)
        if not hasattr(self, "commands"):  # a subcommand: one line, not its usage
            self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")
        super().error(message)


def _suggestion(message: str, parser: argparse.ArgumentParser) -> str:
    """` (did you mean X?)` for an argparse error about an invalid choice or an unknown flag, else `""`."""
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if choice:
        word, options = choice.group(1), [o.strip(" '") for o in choice.group(2).split(",")]
    else:
        flag = re.search(r"unrecognized arguments: (-\S+)", message)
        if not flag:
            return ""
        word, options = flag.group(1).split("=")[0], [o for o in parser._option_string_actions if o.startswith("--")]
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def build_parser() -> argparse.ArgumentParser:
    """The `blokus-jax` argument parser with every registered subcommand."""
    parser = Parser(prog="blokus-jax", description=DESCRIPTION)
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    parser.add_argument("--no-compile-cache", action="store_true", help=_CACHE_HELP)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    parser.commands = {}
    for name, (help_text, setup) in _COMMANDS.items():
        sub = subparsers.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
        sub.add_argument("--no-compile-cache", action="store_true", default=argparse.SUPPRESS, help=_CACHE_HELP)
        sub.set_defaults(handler=setup(sub))
        parser.commands[name] = sub
    return parser


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """The parsed arguments; flags the command does not know are reported by the command's parser (which can name
    the nearest flag it has)."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    return args


_DEBUG_HELP = "show the full traceback of an error (also: environment variable BLOKUS_JAX_DEBUG=1)"
_CACHE_HELP = (
    "do not keep compiled code between runs (by default JAX's persistent compilation cache is kept under "
    "~/.cache/blokus-jax; also: BLOKUS_JAX_COMPILE_CACHE=0, or a folder for it)"
)

#: Optional dependencies of each command, checked before it starts: `(extra, modules, required)`. A required one
#: missing stops the command at once; an optional one is announced and its step skipped (the training plot).
COMMAND_EXTRAS: dict[str, list[tuple[str, tuple[str, ...], bool]]] = {
    "train": [("train", ("orbax.checkpoint",), True), ("train", ("matplotlib",), False)],
}


def _check_extras(command: str) -> None:
    """Raise `MissingExtraError` for a required extra of `command` that is missing;
    warn (one line) about an optional one."""
    for extra, modules, required in COMMAND_EXTRAS.get(command, []):
        if required:
            _extras.require(extra, f"blokus-jax {command}", modules)
        elif _extras.missing(modules):
            say(
                f"blokus-jax {command}: warning: {', '.join(modules)} is not installed, so the plot is skipped "
                f"(everything else is written); install it with {_extras.install_hint(extra)}"
            )


def _debugging(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "debug", False)) or os.environ.get("BLOKUS_JAX_DEBUG", "") not in ("", "0")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `blokus-jax` console command; returns the exit code: 2 with a one-line message on bad
    input (any error: an unexpected one says so, and `--debug` or `BLOKUS_JAX_DEBUG=1` shows its traceback)."""
    args = _parse(argv)
    debug = _debugging(args)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            # orbax/TensorStore leave a coroutine unawaited when they fail to read a corrupt checkpoint; Python's
            # note about it (said whenever it is collected) is internal noise next to the CheckpointError's message
            warnings.filterwarnings("ignore", r"coroutine '.*' was never awaited", RuntimeWarning)
            warnings.showwarning = _show_warning
            _check_extras(args.command)
            use_compile_cache(getattr(args, "no_compile_cache", False))
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


#: JAX's warnings about cache entries it cannot write or read (one per compiled function): said once a process.
_CACHE_WARNINGS = (
    "Error writing persistent compilation cache entry",
    "Error reading persistent compilation cache entry",
)
_cache_warned: set[str] = set()


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Warnings during a command as one line on stderr, without the source line; JAX's warning about a compilation
    cache entry it could not write (or read) is said once, however many entries fail."""
    text = str(message)
    for prefix in _CACHE_WARNINGS:
        if text.startswith(prefix):
            if prefix in _cache_warned:
                return
            _cache_warned.add(prefix)
            verb = "written" if "writing" in prefix else "read"
            cause = text.split("': ", 1)[-1][:200]
            text = (
                f"the compilation cache cannot be {verb} ({cause}); later entries are not reported; set "
                f"{COMPILE_CACHE_ENV} to a writable folder, or to 0 to turn the cache off"
            )
    print(f"blokus-jax: warning: {text}", file=sys.stderr, flush=True)
