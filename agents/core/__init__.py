"""The lowest layer of `blokus_agents`: types and the agent-spec registry. `messages` (error text), `masking`
(masked logits), `options` (declared agent options and memory estimates), `policies` (the `Policy` type, the
registry and the resolver of agent specs).

The names below load on first use (the package imports none of its modules itself).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from blokus_jax._lazy import lazy_getattr

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


__getattr__ = lazy_getattr(__name__, _HOMES, globals())


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
