"""The files of a training run directory besides its checkpoints: the run lock and `metrics.jsonl`.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from blokus_agents.core.options import INT32_MAX, declared_options, setting
from blokus_jax.errors import CheckpointError, ConfigError
from blokus_jax.io import fileio

METRICS_FILE = "metrics.jsonl"
#: Seconds a process waits for all the others to join a distributed run, by default (`--distributed-timeout`).
DISTRIBUTED_TIMEOUT = 60
#: The longest such wait a run may ask for, in seconds (one day).
MAX_DISTRIBUTED_TIMEOUT = 86_400
LOCK_FILE = "train.lock"
#: The longest line of `metrics.jsonl` that is read (a record takes well under a kilobyte).
MAX_LINE_BYTES = 1 << 20
#: How deeply a metrics record may nest (records are flat objects of numbers).
MAX_RECORD_DEPTH = 4


@contextlib.contextmanager
def run_lock(out: str | os.PathLike) -> Iterator[None]:
    """Hold `out/train.lock` while training, so that a second trainer on the same run directory is refused
    (`CheckpointError`); atomic among processes, and a lock file whose holder died is taken over."""
    path = Path(out) / LOCK_FILE
    busy = (
        f"{str(out)!r} is in use by another trainer ({{owner}}); wait for it to finish or choose another output "
        f"directory"
    )
    with fileio.exclusive_lock(path, what="run lock", error=CheckpointError, busy=busy):
        yield


@contextlib.contextmanager
def claim(out: str | os.PathLike) -> Iterator[Path]:
    """Make run directory `out` (if missing) and hold its `run_lock` for the `with` block; a run that is
    refused (any exception) leaves no directory it created behind. Raises `CheckpointError` when `out` is a
    file or cannot be created."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise CheckpointError(f"output directory {str(out)!r} is a file; choose a directory for the run")
    created = not os.path.lexists(out)
    fileio.make_dir(out, what="run directory", error=CheckpointError)  # a symbolic link is refused
    try:
        with run_lock(out):
            yield out
    except BaseException:
        if created:
            with contextlib.suppress(OSError):
                out.rmdir()  # only if still empty: a refused run leaves no trace
        raise


def append_metrics(out: str | os.PathLike, record: dict[str, Any]) -> None:
    """Append `record` (one update's metrics) as a line of `out/metrics.jsonl`; a symbolic link or a file that is
    not regular in its place is refused."""
    fileio.append_text(Path(out) / METRICS_FILE, json.dumps(record) + "\n", what="metrics file", error=CheckpointError)


def _parse(path: Path, number: int, body: bytes, keep_after: int | None = None) -> dict[str, Any]:
    """The record of line `number` of `path`, checked: a JSON object with non-negative int `update` and
    `env_steps`; `CheckpointError` naming the file and line otherwise. A record whose `update` is above
    `keep_after` (about to be dropped by a resume) needs only its `update`."""
    where = f"metrics file {str(path)!r}, line {number}"
    record = fileio.load_json(body, max_depth=MAX_RECORD_DEPTH, what=where, error=CheckpointError)
    if not isinstance(record, dict):
        raise CheckpointError(f"{where} is a JSON {type(record).__name__}, not an object; the file is corrupt")
    for key in ("update", "env_steps"):
        value = record.get(key)
        if type(value) is not int or value < 0:
            shown = "no value" if key not in record else repr(value)
            raise CheckpointError(
                f"{where} has {key}={shown if len(shown) < 40 else shown[:37] + '...'}, not a non-negative int; "
                f"the file is corrupt (remove that line, or the file to start the log afresh)"
            )
        if keep_after is not None and record["update"] > keep_after:
            break
    return record


def _lines(out: str | os.PathLike, keep_after: int | None = None) -> Iterator[tuple[int, bytes, dict | None]]:
    """`(number, bytes, record)` of every line of `out/metrics.jsonl` (`keep_after` as in `_parse`);
    `record` is `None` for a blank line or a last line cut short that does not parse (written by a killed
    process)."""
    path = Path(out) / METRICS_FILE
    if not os.path.lexists(path):
        return
    lines = fileio.iter_lines(path, MAX_LINE_BYTES, what="metrics file", error=CheckpointError, follow=False)
    for number, body, ended in lines:
        if not body.strip():
            yield number, body, None
            continue
        try:
            record = _parse(path, number, body, keep_after)
        except CheckpointError:
            if ended:
                raise
            record = None  # cut short by a killed process
        yield number, body, record


def iter_metrics(out: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """Stream the records of `out/metrics.jsonl` (checked as the module doc says), in bounded memory."""
    for _, _, record in _lines(out):
        if record is not None:
            yield record


def read_metrics(out: str | os.PathLike) -> list[dict[str, Any]]:
    """Every record of `out/metrics.jsonl` (each update of the run, resumed parts included); empty when there is
    none. Raises `CheckpointError` naming the line of a malformed record."""
    return list(iter_metrics(out))


def read_evaluations(out: str | os.PathLike) -> list[dict[str, Any]]:
    """The evaluated records of `out/metrics.jsonl` reduced to `update`, `env_steps` and the
    `win_rate_vs_<bot>` fields: what the learning-curve plot and the run's summary need, in memory proportional to
    the evaluations only."""
    rows = []
    for record in iter_metrics(out):
        rates = {k: v for k, v in record.items() if k.startswith("win_rate_vs_")}
        if rates:
            rows.append({"update": record["update"], "env_steps": record["env_steps"], **rates})
    return rows


def check_metrics(out: str | os.PathLike) -> None:
    """Read all of `out/metrics.jsonl` once (streaming) and raise `CheckpointError` for a malformed line: the
    check a run does before it is accepted, so that nothing fails at its end."""
    for _ in _lines(out):
        pass


def truncate_metrics(out: str | os.PathLike, update: int) -> None:
    """Drop the records after update `update` (and a last line cut short) from `out/metrics.jsonl`, so that a
    resumed run (or a new one, with `update=-1`) logs each update once. Streams the file; rewrites it atomically
    only when something is dropped. Raises `CheckpointError` for a malformed line, leaving the file unchanged (a
    record to be dropped needs only a valid `update`)."""
    path = Path(out) / METRICS_FILE
    if update < 0:  # a new run: whatever a run killed before its first checkpoint logged goes
        if not os.path.lexists(path):
            return
        with fileio.open_regular(path, what="metrics file", error=CheckpointError, follow=False) as f:
            empty = not f.read(1)
        if not empty:
            fileio.write_atomic(path, b"", what="metrics file", error=CheckpointError)
        return
    if not any(record is None or record["update"] > update for _, _, record in _lines(out, update)):
        return
    with fileio.atomic_writer(path, what="metrics file", error=CheckpointError) as f:
        for _, body, record in _lines(out, update):
            if record is not None and record["update"] <= update:
                f.write(body + b"\n")


def run_clock(out: str | os.PathLike, update: int) -> float:
    """The run's clock at update `update`: the largest `time_s` (seconds of training so far, every session
    counted) among the records of `out/metrics.jsonl` up to that update; 0 when none has one. A resumed run
    continues its clock from here, so that `--minutes` is the budget of the whole run."""
    clock = 0.0
    for record in iter_metrics(out):
        value = record.get("time_s")
        if record["update"] <= update and type(value) in (int, float) and math.isfinite(value) and value > clock:
            clock = float(value)
    return clock


# ------------------------------------------------------------------------------------------------ run settings
SETTINGS_FILE = "settings.json"
#: The key of `settings.json` that records when the run evaluates (`Settings.eval_schedule`; not read back).
DERIVED_SETTING = "eval_schedule"
_SETTINGS_MAX_BYTES = 64 * 1024


def flag(name: str) -> str:
    """The command-line flag of setting `name` (`--eval-every`; the name itself for `opponents`, which has
    none)."""
    return name if name == "opponents" else "--" + name.replace("_", "-")


@dataclass(frozen=True)
class Settings:
    """The host loop's settings of a run (not part of the trainer's config): kept in `out_dir/settings.json` so
    that a resumed run keeps the settings it was started with unless told otherwise. `minutes` is the wall-time
    budget of the whole run, counted on the run's clock (`time_s` of `metrics.jsonl`, which a resumed run
    continues; `None`: no time limit, the run ends at `config.total_steps`). `checkpoint_minutes`: also save a
    checkpoint whenever this many minutes have passed since the last one (0: by update count only). `evals`: with
    a time budget, also evaluate each time another `1/evals` of it has passed on the run's clock, so that the
    learning curve has about that many points whatever the speed (0: every `eval_every` updates only)."""

    eval_every: int = setting(25, 0, INT32_MAX, doc="updates between evaluations (0: never)")
    eval_games: int = setting(64, 1, 2**20, doc="games per evaluation against each bot")
    opponents: tuple[str, ...] = ("random", "greedy")
    checkpoint_every: int = setting(50, 0, INT32_MAX, doc="updates between checkpoints (0: only at the end)")
    minutes: float | None = setting(None, kind=float, doc="wall-time budget of the whole run (None: no time limit)")
    checkpoint_minutes: float = setting(
        5.0,
        0.0,
        1e9,
        doc="also save a checkpoint when this many minutes have passed since the last one (0: off); Ctrl-C or "
        "SIGTERM always saves one before stopping",
    )
    evals: int = setting(
        10,
        0,
        10_000,
        doc="with a time budget, also evaluate each time another 1/N of it has passed, so the learning curve has "
        "about N points at any speed (0: by eval_every only)",
    )
    keep_checkpoints: int = setting(
        3,
        0,
        INT32_MAX,
        doc="the newest checkpoints kept (0: every one, e.g. for benchmarks/learning_curve.py); only the newest "
        "holds an AlphaZero run's replay buffer",
    )

    def __post_init__(self):
        options = declared_options(self)
        for name in ("eval_every", "eval_games", "checkpoint_every", "evals", "keep_checkpoints"):
            value, low, high = getattr(self, name), options[name].low, options[name].high
            if type(value) is not int or not low <= value <= high:
                raise ConfigError(
                    f"{name} ({flag(name)}) must be a whole number of at least {low}, at most {high:,}, got {value!r}"
                )
        names = self.opponents
        if not (isinstance(names, tuple) and names and all(isinstance(o, str) and o for o in names)):
            raise ConfigError(f"opponents must be a non-empty sequence of agent specs, got {self.opponents!r}")
        if self.minutes is not None and not (
            isinstance(self.minutes, (int, float)) and not isinstance(self.minutes, bool) and 0 < self.minutes < 1e9
        ):
            raise ConfigError(f"minutes (--minutes) must be a positive number of minutes, got {self.minutes!r}")
        every = self.checkpoint_minutes
        if not (isinstance(every, (int, float)) and not isinstance(every, bool) and 0 <= every < 1e9):
            raise ConfigError(
                f"checkpoint_minutes (--checkpoint-minutes) must be a number of minutes from 0 (off) up, got {every!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        """The settings as a JSON-ready dict."""
        return {**dataclasses.asdict(self), "opponents": list(self.opponents)}

    def eval_schedule(self) -> dict[str, Any]:
        """When a run with these settings evaluates, as the trainer's loop decides it: `every_updates` (0: never),
        `every_minutes` of the run's clock (`None`: no schedule by time; `evals` evaluations spread over the
        `minutes` budget), the first update of a new run and the last update; `text` says it in words. Written
        into `settings.json` beside the settings (and ignored when they are read back: it is derived)."""
        if self.eval_every <= 0:
            return {"every_updates": 0, "every_minutes": None, "text": "never (--eval-every 0)"}
        by_time = self.minutes / self.evals if self.evals > 0 and self.minutes else None
        parts = [f"every {self.eval_every} updates"]
        if by_time is not None:
            budget = f"--evals {self.evals} over --minutes {self.minutes:g}"
            parts.append(f"every {by_time:g} min of the run's clock ({budget})")
        text = " and ".join(parts) + ", at update 0 of a new run and at the last update"
        return {"every_updates": self.eval_every, "every_minutes": by_time, "text": text}

    @classmethod
    def from_dict(cls, data: Any, where: str) -> Settings:
        """Settings from `to_dict` output; `CheckpointError` naming `where` when they are malformed."""
        fields = {f.name for f in dataclasses.fields(cls)}
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k != DERIVED_SETTING}  # written for readers, derived
        if not isinstance(data, dict) or set(data) - fields:
            raise CheckpointError(
                f"{where} is not a settings file of this version (expected an object with fields {sorted(fields)}); "
                f"delete it to resume with the default settings"
            )
        if isinstance(data.get("opponents"), list):
            data = {**data, "opponents": tuple(data["opponents"])}
        try:
            return cls(**data)
        except (ConfigError, TypeError) as exc:
            raise CheckpointError(f"{where} holds an invalid setting: {exc}; fix or delete it") from exc


def read_settings(out_dir: str | os.PathLike) -> Settings | None:
    """The `Settings` saved in `out_dir` (`None` when there are none, e.g. a run from before they were
    kept). The file must be a regular file of at most 64 KiB; anything malformed is a `CheckpointError` naming
    it."""
    path = Path(out_dir) / SETTINGS_FILE
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CheckpointError(f"cannot read {str(path)!r} ({exc.strerror}); it must be a regular file") from exc
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise CheckpointError(f"{str(path)!r} is not a regular file; delete it")
        data = f.read(_SETTINGS_MAX_BYTES + 1)
    if len(data) > _SETTINGS_MAX_BYTES:
        raise CheckpointError(f"{str(path)!r} is larger than {_SETTINGS_MAX_BYTES} bytes; it is not a settings file")
    try:
        parsed = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise CheckpointError(f"{str(path)!r} is not valid JSON ({type(exc).__name__}); fix or delete it") from exc
    return Settings.from_dict(parsed, repr(str(path)))


def _write_settings(out: Path, settings: Settings) -> None:
    """Write `settings` to `out/settings.json` atomically: a fresh temporary file created exclusively in `out`
    (never through a link), then renamed over the old file."""
    text = json.dumps({**settings.to_dict(), DERIVED_SETTING: settings.eval_schedule()}, indent=1)
    fileio.write_atomic(out / SETTINGS_FILE, text, what="settings file", error=CheckpointError)


def resolve_settings(saved: Settings | None, given: dict[str, Any]) -> tuple[Settings, list[str]]:
    """The settings of a session: `given` (the values the caller set; `minutes` of `math.inf` means no time
    limit) over `saved` (a resumed run's) over the defaults. Returns them and, for a resumed run, one line per
    setting that changed (`"--checkpoint-every 5 (was 1)"`)."""
    base = saved or Settings()
    given = dict(given)
    if given.get("minutes") == math.inf:
        given["minutes"] = None
    if "opponents" in given:
        given["opponents"] = tuple(given["opponents"])
    settings = dataclasses.replace(base, **given)
    changed = []
    if saved is not None:
        for name in dataclasses.asdict(settings):
            old, new = getattr(saved, name), getattr(settings, name)
            if old != new:
                show = lambda v: "no limit" if v is None else ",".join(v) if isinstance(v, tuple) else v  # noqa: E731
                changed.append(f"{flag(name)} {show(new)} (was {show(old)})")
    return settings, changed


# --------------------------------------------------------------------------------------------------- the run


__all__ = [
    "LOCK_FILE",
    "MAX_LINE_BYTES",
    "METRICS_FILE",
    "SETTINGS_FILE",
    "Settings",
    "append_metrics",
    "claim",
    "check_metrics",
    "iter_metrics",
    "read_evaluations",
    "read_metrics",
    "read_settings",
    "resolve_settings",
    "run_clock",
    "run_lock",
    "truncate_metrics",
]
