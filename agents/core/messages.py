"""Value checks and message helpers shared by the agents package: how a bad value or a failed call is shown in an
error message (cut to a readable length, its type named when the repr hides it), and sizes in GiB."""

from __future__ import annotations

from typing import Any


def shown(value: Any, limit: int = 60) -> str:
    """`value` for a message: its repr (cut to `limit` characters; a huge int by its digit count) and, when the
    repr hides it, its type."""
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**40 else f"an int of {len(str(value))} digits"
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return text if type(value) in (int, float, str) else f"{text} ({type(value).__name__})"


def brief(value: Any, limit: int = 60) -> str:
    """`repr(value)` cut to `limit` characters (a huge int by its digit count), for values read from files that
    may hold anything."""
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**30 else f"<int of {len(str(value))} digits>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def short(exc: BaseException, limit: int = 160) -> str:
    """`Type: first line` of an exception's message, at most `limit` characters (orbax and TensorStore errors can
    run to 60 lines)."""
    text = str(exc).strip().splitlines()
    line = text[0] if text else ""
    return f"{type(exc).__name__}: {line[:limit]}{'...' if len(line) > limit or len(text) > 1 else ''}"


def first_line(exc: BaseException, limit: int = 2000) -> str:
    """The first line of an exception's message (its repr when the message is empty), at most `limit`
    characters."""
    lines = str(exc).strip().splitlines()
    return (lines[0] if lines else repr(exc))[:limit]


def gib(n: float, mib_below: float = 2**30) -> str:
    """`n` bytes as a short text in GiB, or in MiB below `mib_below` bytes."""
    return f"{n / 2**30:,.1f} GiB" if n >= mib_below else f"{n / 2**20:,.1f} MiB"


__all__ = ["brief", "first_line", "gib", "short", "shown"]
