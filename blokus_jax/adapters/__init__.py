"""Gymnasium, PettingZoo, Pgx and OpenSpiel adapters: the only place where blokus-jax converts to NumPy and the
only place that imports another framework.

`import blokus_jax.adapters.gymnasium` registers the Gymnasium ids (`BlokusDuo-v0`, ...) and provides `BlokusGymEnv`
and the batched `BlokusVectorEnv` (extra `[gym]`); `blokus_jax.adapters.pettingzoo` provides `BlokusAECEnv` with the
usual `raw_env` / `env` pair (extra `[pettingzoo]`). Both reject malformed or illegal actions with
`RejectedActionError`, a subclass of `IllegalActionError`. `blokus_jax.adapters.pgx` provides `PgxEnv`, a `pgx.Env`
(extra `[pgx]`); `import blokus_jax.adapters.openspiel` registers the OpenSpiel games `blokus_duo`, ... and provides
`ProjectBot` (extra `[openspiel]`).

The classes are also reachable as attributes of this package; the optional dependency is imported on first use.
"""

from __future__ import annotations

from blokus_jax._lazy import lazy_getattr
from blokus_jax.adapters._boundary import REASONS, RejectedActionError

_LAZY = {
    "BlokusGymEnv": "gymnasium",
    "BlokusVectorEnv": "gymnasium",
    "BlokusAECEnv": "pettingzoo",
    "PgxEnv": "pgx",
    "ProjectBot": "openspiel",
}


__getattr__ = lazy_getattr(__name__, _LAZY, globals())


__all__ = ["BlokusAECEnv", "BlokusGymEnv", "BlokusVectorEnv", "PgxEnv", "ProjectBot", "REASONS", "RejectedActionError"]
