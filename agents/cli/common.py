"""What the `blokus-jax` commands share: argument types that check a value before any work starts, the variant of
the agents given, tables, and progress lines."""

from __future__ import annotations

import argparse
import contextlib
import logging
import math
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from blokus_jax import _extras

#: A command's handler: `(parsed arguments) -> exit code`.
Handler = Callable[[argparse.Namespace], int]

#: Environment variable of the CLI's persistent compilation cache: `0` turns it off, a path puts it there.
COMPILE_CACHE_ENV = "BLOKUS_JAX_COMPILE_CACHE"


def compile_cache_dir(
    off: bool = False, environ: dict[str, str] | None = None, warn: Callable[[str], None] | None = None
) -> str | None:
    """The folder of JAX's persistent compilation cache for a `blokus-jax` command, so that a second run of a
    command skips most of its compiling. Invalid values never make a folder in the working directory: a relative
    `XDG_CACHE_HOME` is ignored as the XDG spec says (`~/.cache` is used), and a `BLOKUS_JAX_COMPILE_CACHE`
    that is relative once `~` is expanded (`~nosuchuser/cache`, `cache`) turns the cache off; each is said
    in one line through `warn`.

    Args:
        off: `--no-compile-cache`: no cache.
        environ: The environment variables to read; default `os.environ`.
        warn: Told each warning line; default printed on stderr.

    Returns:
        `None` (no cache) with `off`, `BLOKUS_JAX_COMPILE_CACHE=0`, or when `JAX_COMPILATION_CACHE_DIR` is set
        (JAX then uses that one itself); else the path in `BLOKUS_JAX_COMPILE_CACHE`, else `blokus-jax/jax` under
        the user's cache folder (`$XDG_CACHE_HOME` or `~/.cache`).
    """
    environ = os.environ if environ is None else environ
    warn = say if warn is None else warn
    chosen = environ.get(COMPILE_CACHE_ENV, "").strip()
    if off or chosen.lower() in ("0", "off", "false", "no") or environ.get("JAX_COMPILATION_CACHE_DIR"):
        return None
    if chosen:
        path = os.path.expanduser(chosen)
        if not os.path.isabs(path):
            warn(
                f"blokus-jax: warning: {COMPILE_CACHE_ENV}={chosen!r} is not an absolute path (a '~user' that does "
                f"not exist stays unexpanded), so no compilation cache is kept; give an absolute folder, or 0"
            )
            return None
        return path
    base = environ.get("XDG_CACHE_HOME", "")
    if base and not os.path.isabs(base):
        warn(f"blokus-jax: warning: XDG_CACHE_HOME={base!r} is not an absolute path, so it is ignored (XDG spec)")
        base = ""
    if not base:
        home = os.path.expanduser("~")
        if not os.path.isabs(home):
            warn("blokus-jax: warning: no home folder to keep the compilation cache in; set " + COMPILE_CACHE_ENV)
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "blokus-jax", "jax")


def use_compile_cache(off: bool = False) -> str | None:
    """Turn on JAX's persistent compilation cache in `compile_cache_dir` (before anything compiles), and keep
    the calibrations of `seconds=` budgets (`strong`) in the same folder, so that `play`, `match`, `eval`
    and `gtp` calibrate once per machine; returns the folder, or `None` when the cache is off or its folder
    cannot be made (said in one line)."""
    path = compile_cache_dir(off)
    if path is None:
        return None
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        say(
            f"blokus-jax: warning: no compilation cache ({exc.strerror}: {path!r}); set {COMPILE_CACHE_ENV} to "
            f"another folder, or to 0 to turn it off"
        )
        return None
    import jax  # the command's dependencies load only once it runs

    from blokus_agents.search.calibration_store import CALIBRATION_FILE, use_calibration_store

    jax.config.update("jax_compilation_cache_dir", path)
    use_calibration_store(os.path.join(path, CALIBRATION_FILE))  # strong's calibrations, per machine
    return path


def _integer(text: str, low: int, what: str) -> int:
    if len(text) > 40 or not text.strip().lstrip("+-").isascii():
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is not a whole number; give {what}")
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


#: Largest seed accepted (exclusive): JAX's `random.key` and NumPy take any 32-bit seed on every platform.
MAX_SEED = 2**32
#: Most games one command plays (a match's games per level, an evaluation's games per pairing).
MAX_GAMES = 100_000
#: Longest wait in seconds (one day) a flag such as `--timeout` takes (a time budget a move is
#: `blokus_agents.core.options.MAX_SECONDS`).
MAX_TIMEOUT_SECONDS = 86_400.0


def _bounded_integer(text: str, low: int, high: int, what: str) -> int:
    value = _integer(text, low, what)
    if value > high:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} is too large; give {what}")
    return value


def int_range(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high` (a count such as a batch size, bounded so that a
    typo cannot ask for more memory or time than any machine has)."""

    def parse(text: str) -> int:
        return _bounded_integer(text, low, high, f"a whole number from {low:,} to {high:,}")

    parse.__name__ = f"int_{low}_{high}"
    return parse


def seed_int(text: str) -> int:
    """argparse type: a seed, a whole number from 0 to 2**32 - 1 (4294967295)."""
    return _bounded_integer(text, 0, MAX_SEED - 1, f"a seed from 0 to {MAX_SEED - 1}")


def game_count(text: str) -> int:
    """argparse type: a number of games from 1 to `MAX_GAMES` (100,000)."""
    return _bounded_integer(text, 1, MAX_GAMES, f"a number of games from 1 to {MAX_GAMES:,}")


def float_range(
    low: float, high: float = math.inf, *, above: bool = False, what: str = "", example: float = 0.5
) -> Callable[[str], float]:
    """An argparse type: a finite number (never nan or inf) from `low` to `high`, or above `low` when `above`.
    The one parser of every float flag.

    Args:
        low: The smallest value allowed (excluded when `above`).
        high: The largest value allowed (`math.inf`: no upper bound but finiteness).
        above: Whether `low` itself is refused.
        what: How an error names the range ("a weight from 0 to 1"); by default it is said in numbers.
        example: A good value an error suggests.

    Returns:
        `parse(text) -> float`, raising `argparse.ArgumentTypeError` that names the range.
    """
    if not what:
        start = f"above {low:g}" if above else f"from {low:g}"
        what = f"a finite number {start}" + (" up" if high == math.inf and not above else "")
        what += f" to {high:g}" if high != math.inf else ""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text[:40]!r} is not a number; give {what} such as {example:g}"
            ) from None
        if not math.isfinite(value) or value < low or (above and value == low) or value > high:
            raise argparse.ArgumentTypeError(f"{text[:40]!r} must be {what}, e.g. {example:g}")
        return value

    parse.__name__ = "float"  # argparse names the type in its own messages
    return parse


#: argparse type: a number from 0 to 1 (a weight or share).
unit_float = float_range(0.0, 1.0, what="a weight from 0 to 1")
#: argparse type: a finite number above 0.
positive_float = float_range(0.0, above=True)
#: argparse type: a finite number from 0 up.
nonnegative_float = float_range(0.0, example=2.5)


def seconds_limit(text: str) -> float:
    """argparse type: a time limit in seconds, a finite number above 0 and at most one day (86400)."""
    value = positive_float(text)
    if value > MAX_TIMEOUT_SECONDS:
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is too long; give at most {MAX_TIMEOUT_SECONDS:.0f} seconds (one day)"
        )
    return value


def _writable_dir_for(path: Path, flag: str) -> None:
    """Raise `ArgumentTypeError` unless `path` could be created or written: its nearest existing ancestor must be
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
    directory nor a symbolic link), checked before any long work starts."""
    path = Path(text)
    if path.is_symlink():
        raise argparse.ArgumentTypeError(
            f"{text!r} is a symbolic link; blokus-jax never writes through one: remove it or give another file name"
        )
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory; give a file name such as {text}/results.json")
    if not path.absolute().parent.is_dir():
        raise argparse.ArgumentTypeError(
            f"the directory of {text!r} does not exist; create it first or choose another path"
        )
    _writable_dir_for(path.absolute().parent, "path")
    return text


def output_dir(text: str) -> str:
    """argparse type: a directory that exists or can be created (not a file nor a symbolic link)."""
    path = Path(text)
    if path.is_symlink():
        raise argparse.ArgumentTypeError(
            f"{text!r} is a symbolic link; blokus-jax never writes through one: give the folder itself"
        )
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file; give a directory (it is created if missing)")
    _writable_dir_for(path, "directory")
    return text


def run_variant(specs: list[str]) -> str | None:
    """The variant of the run directories and shipped baselines (`baseline:NAME`) among agent `specs` (the one
    they were trained on), `None` when there is none; raises `ValueError` when they disagree."""
    from blokus_agents.core.policies import agent_names
    from blokus_agents.players.baselines import baseline_variant

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
    from blokus_agents.core.policies import split_target

    try:
        return split_target(spec)[0]
    except ValueError:
        return None  # resolving the spec reports it


def _run_config(run_dir: str, spec: str | None = None) -> Any:
    """The config of a run directory's newest checkpoint (needs the `train` extra, checked first), given as agent
    `spec` (default: the path): an `AgentSpecError` saying so when it has no checkpoint."""
    _extras.require("train", f"loading the run directory {run_dir!r}", ("orbax.checkpoint",))
    from blokus_agents.players import checkpoint_index, checkpoint_read

    checkpoint_index.require_agent_run(run_dir, spec)
    return checkpoint_read.load_config(run_dir)


def variant_of(args: argparse.Namespace, specs: list[str]) -> str:
    """`--variant` when given, else the run directories' own variant, else duo."""
    if args.variant is not None:
        return args.variant
    found = run_variant(specs)
    if found is not None:
        print(f"variant {found} (that of the run directory or baseline; pass --variant to change it)", file=sys.stderr)
    return found or "duo"


#: What an agent spec is, for the help of the flags that take one or several.
AGENT_SPEC = (
    "a name with options as name:key=value,... (e.g. greedy, minimax:k=8, baseline:duo for a shipped baseline), or "
    "a run directory, the --out of 'blokus-jax train'"
)
#: The help of a flag that takes one agent.
AGENT_HELP = f"the agent: {AGENT_SPEC}"
#: The help of a flag that takes several agents.
AGENTS_HELP = f"the agents, each {AGENT_SPEC}"


def print_table(rows: list[list[str]], title: str, out: TextIO) -> None:
    """Print `rows` (header first) as a rich table when rich is installed, else as aligned plain text.

    Args:
        rows: The table's rows of cells, the header first.
        title: The title printed above the table.
        out: The stream printed to.
    """
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


def say(text: str) -> None:
    """One progress line on stderr (stdout carries the results)."""
    print(text, file=sys.stderr, flush=True)


@contextlib.contextmanager
def showing_calibration(stream: TextIO | None = None) -> Iterator[None]:
    """Within the block, each step of a `seconds=` budget's calibration
    (`search.calibration_log`: positions, each compilation, each timing) is one indented line on
    `stream` (stderr), so that a calibration of some minutes shows where it is."""
    from blokus_agents.search.mcts import calibration_log

    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter("  %(message)s"))
    level = calibration_log.level
    calibration_log.addHandler(handler)
    calibration_log.setLevel(logging.INFO)
    try:
        yield
    finally:
        calibration_log.removeHandler(handler)
        calibration_log.setLevel(level)
