"""Optional dependencies by extra, checked before any work starts.

Each extra of `pyproject.toml` that a command or adapter needs is listed here with the modules it provides, so that
a missing one is found up front and reported in one line naming the extra (`pip install "blokus-jax[train]"`)
instead of a `ModuleNotFoundError` after the work: `require` raises
`MissingExtraError`; `available` lets a caller skip an optional step (the training plot) with a warning and
keep everything else. Modules are looked up with `importlib.util.find_spec`: nothing is imported.
"""

from __future__ import annotations

import importlib.util
import warnings
from collections.abc import Sequence

from blokus_jax.errors import MissingExtraError

#: The modules each extra provides (the extras of `pyproject.toml`; `dev` and `all` only gather others).
EXTRAS: dict[str, tuple[str, ...]] = {
    "gym": ("gymnasium",),
    "pettingzoo": ("pettingzoo", "gymnasium"),
    "render": ("matplotlib", "PIL"),
    "train": ("orbax.checkpoint", "matplotlib"),
    "pgx": ("pgx",),
    "openspiel": ("pyspiel",),
    "notebooks": ("nbconvert", "jupyterlab", "ipykernel"),
}
#: The distribution that provides a module, where its name differs.
DISTRIBUTIONS = {"orbax.checkpoint": "orbax-checkpoint", "PIL": "pillow", "pyspiel": "open-spiel"}


def install_hint(extra: str) -> str:
    """The command that installs `extra`: `pip install "blokus-jax[extra]"`."""
    return f'pip install "blokus-jax[{extra}]"'


def missing(modules: Sequence[str]) -> list[str]:
    """The `modules` that cannot be imported here (found without importing them)."""
    absent = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):  # a parent package missing, or a module entry set to None
            found = False
        if not found:
            absent.append(name)
    return absent


def _message(extra: str, needed_for: str, absent: list[str]) -> str:
    names = ", ".join(DISTRIBUTIONS.get(m, m) for m in absent)
    return (
        f"{needed_for} needs {names}, which {'is' if len(absent) == 1 else 'are'} not installed; install the "
        f'extra: {install_hint(extra)} (in a checkout: pip install -e ".[{extra}]")'
    )


def require(extra: str, needed_for: str, modules: Sequence[str] | None = None) -> None:
    """Raise `MissingExtraError` naming `extra` unless `modules` (default: all of the extra's) can be imported.

    Args:
        extra: The extra of `pyproject.toml` that provides the modules, a key of `EXTRAS`.
        needed_for: What needs them, e.g. `"blokus-jax train"`; the message starts with it.
        modules: The modules to look for; default all of `EXTRAS[extra]`.

    Raises:
        MissingExtraError: One of the modules cannot be imported; the message names the distributions and the
            `pip install` command of the extra.
    """
    absent = missing(EXTRAS[extra] if modules is None else modules)
    if absent:
        raise MissingExtraError(_message(extra, needed_for, absent))


def available(extra: str, needed_for: str, modules: Sequence[str] | None = None, warn: bool = True) -> bool:
    """Whether `modules` (default: all of `extra`'s) can be imported; when not and `warn`, one `UserWarning`
    says what is skipped and which extra to install. For optional steps that must not cost the finished work.

    Args:
        extra: The extra of `pyproject.toml` that provides the modules, a key of `EXTRAS`.
        needed_for: What needs them, e.g. `"the win-rate plot"`; the warning starts with it.
        modules: The modules to look for; default all of `EXTRAS[extra]`.
        warn: Issue the `UserWarning` when a module is missing.

    Returns:
        `True` when every module can be imported.
    """
    absent = missing(EXTRAS[extra] if modules is None else modules)
    if absent and warn:
        warnings.warn(_message(extra, needed_for, absent), UserWarning, stacklevel=2)
    return not absent


__all__ = ["DISTRIBUTIONS", "EXTRAS", "available", "install_hint", "missing", "require"]
