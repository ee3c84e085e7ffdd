"""blokus-jax: an exact, pure, jit/vmap-able Blokus environment in JAX.

Quick start:

```python
import jax, blokus_jax
env = blokus_jax.make("duo")
state = env.init(jax.random.key(0))
state = env.step(state, env.sample_action(jax.random.key(1), state))
```

The names below load on first use (`import blokus_jax` does not import JAX until one of them needs it), so that
programs such as `blokus-jax --help` start quickly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from blokus_jax._lazy import lazy_getattr

if TYPE_CHECKING:
    from blokus_jax.env import REWARD_MODES, Env, Game, State, make
    from blokus_jax.errors import (
        ActionTypeError,
        BlokusError,
        CheckpointError,
        ConfigError,
        IllegalActionError,
        PieceError,
        RecordError,
        VariantError,
    )
    from blokus_jax.observe import OBS_VERSION, Observation
    from blokus_jax.pieces import STANDARD_SHAPES, Piece, standard_pieces
    from blokus_jax.variants import VARIANTS, Variant, get_variant, variant_names
    from blokus_jax.wrappers import AutoReset

__version__ = "0.2.0"

#: Each public name and the module that defines it.
_HOMES: dict[str, str] = {
    **dict.fromkeys(("REWARD_MODES", "Env", "Game", "State", "make"), "env"),
    **dict.fromkeys(
        (
            "ActionTypeError",
            "BlokusError",
            "CheckpointError",
            "ConfigError",
            "IllegalActionError",
            "PieceError",
            "RecordError",
            "VariantError",
        ),
        "errors",
    ),
    **dict.fromkeys(("OBS_VERSION", "Observation"), "observe"),
    **dict.fromkeys(("STANDARD_SHAPES", "Piece", "standard_pieces"), "pieces"),
    **dict.fromkeys(("VARIANTS", "Variant", "get_variant", "variant_names"), "variants"),
    "AutoReset": "wrappers",
}
#: The I/O modules, which live in `blokus_jax.io`, stay reachable as `from blokus_jax import records`.
_IO_MODULES = ("fileio", "record_json", "records", "render", "sgf", "viewer")


__getattr__ = lazy_getattr(__name__, _HOMES, globals(), modules={name: f"io.{name}" for name in _IO_MODULES})


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__, *_IO_MODULES})


__all__ = [
    "ActionTypeError",
    "AutoReset",
    "BlokusError",
    "CheckpointError",
    "ConfigError",
    "Env",
    "Game",
    "IllegalActionError",
    "OBS_VERSION",
    "Observation",
    "Piece",
    "PieceError",
    "REWARD_MODES",
    "RecordError",
    "STANDARD_SHAPES",
    "State",
    "VARIANTS",
    "Variant",
    "VariantError",
    "get_variant",
    "make",
    "standard_pieces",
    "variant_names",
]
