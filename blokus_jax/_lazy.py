"""Names of a package loaded on first use (PEP 562), so that importing a package imports none of its modules: the
one `__getattr__` that every lazy package `__init__` of `blokus_jax` and `blokus_agents` installs."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(
    package: str, homes: dict[str, str], namespace: dict[str, Any], modules: dict[str, str] | None = None
) -> Callable[[str], Any]:
    """A module `__getattr__` that loads each public name of `package` from the module that defines it.

    Args:
        package: The package's dotted name (`"blokus_agents.engines"`).
        homes: Each public name and its module, relative to `package` (`{"round_robin": "arena"}`).
        namespace: The package's `globals()`, where a loaded name is cached so that it loads once.
        modules: Names that are modules themselves, and their path relative to `package` (`{"records":
            "io.records"}`, so that `from blokus_jax import records` still works).

    Returns:
        `__getattr__(name) -> object`, which raises `AttributeError` for a name the package does not have.
    """
    modules = modules or {}

    def __getattr__(name: str) -> Any:
        if name in homes:
            value = getattr(importlib.import_module(f"{package}.{homes[name]}"), name)
        elif name in modules:
            value = importlib.import_module(f"{package}.{modules[name]}")
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    return __getattr__
