"""blokus-jax: an exact, pure, jit/vmap-able Blokus environment in JAX.

Quick start::

    import jax, blokus_jax
    env = blokus_jax.make("duo")
    state = env.init(jax.random.key(0))
    state = env.step(state, env.sample_action(jax.random.key(1), state))
"""

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

#: The I/O modules, which live in `blokus_jax.io`, stay reachable as `from blokus_jax import records` (loaded on use).
_IO_MODULES = ("fileio", "record_json", "records", "render", "sgf", "viewer")


def __getattr__(name: str):
    """Load an I/O module of `blokus_jax.io` on first use as an attribute of `blokus_jax` (`blokus_jax.records`)."""
    if name in _IO_MODULES:
        import importlib

        module = importlib.import_module(f"blokus_jax.io.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'blokus_jax' has no attribute {name!r}")


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
