"""The lowest layer of `blokus_agents`: types and the agent-spec registry. `messages` (error text), `masking`
(masked logits), `options` (declared agent options and memory estimates), `policies` (the `Policy` type, the
registry and the resolver of agent specs).

The names below load on first use (the package imports none of its modules itself).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blokus_agents.core.options import Option
    from blokus_agents.core.policies import (
        AgentSpecError,
        ParamPolicy,
        Policy,
        agent_names,
        check_agent,
        register_agent,
        register_prefix,
        resolve_agent,
    )

#: Each public name and the module of this package that defines it.
_HOMES: dict[str, str] = {
    "AgentSpecError": "policies",
    "ParamPolicy": "policies",
    "Policy": "policies",
    "agent_names": "policies",
    "check_agent": "policies",
    "register_agent": "policies",
    "register_prefix": "policies",
    "resolve_agent": "policies",
    "Option": "options",
}


def __getattr__(name: str) -> Any:
    """Load a public name of `blokus_agents.core` on its first use.

    Args:
        name: The attribute asked for.

    Returns:
        The object, which is then cached in the package's namespace.

    Raises:
        AttributeError: When the package has no such name.
    """
    if name not in _HOMES:
        raise AttributeError(f"module 'blokus_agents.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"blokus_agents.core.{_HOMES[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "AgentSpecError",
    "Option",
    "ParamPolicy",
    "Policy",
    "agent_names",
    "check_agent",
    "register_agent",
    "register_prefix",
    "resolve_agent",
]
