"""Exception hierarchy of blokus-jax.

Every error the library raises on purpose derives from `BlokusError`, so callers can catch one type.
Messages name the offending value and say how to fix it.
"""

from __future__ import annotations


class BlokusError(Exception):
    """Base class of every error raised deliberately by blokus-jax."""


class VariantError(BlokusError, ValueError):
    """An unknown variant name or an inconsistent `Variant` definition."""


class PieceError(VariantError):
    """A malformed polyomino: empty, disconnected, duplicate or negative cells."""


class IllegalActionError(BlokusError, ValueError):
    """An action index or cell list that is out of range or not a legal placement here."""


class ActionTypeError(IllegalActionError, TypeError):
    """An action that is not one integer index (a float, a bool, an array of several values): raised when the step
    is called or traced, since converting it would silently play a different action."""


class ConfigError(BlokusError, ValueError):
    """A bad argument or option of an environment or adapter: an unknown agent name, a seat that is not a player, a
    malformed seed or reset option."""


class MissingExtraError(BlokusError, ImportError):
    """An optional dependency that a command or adapter needs is not installed; the message names the extra to
    install (`pip install "blokus-jax[train]"`). Raised before any work starts (see `blokus_jax._extras`)."""


class RecordError(BlokusError, ValueError):
    """A corrupt, truncated or illegal game record."""


class CheckpointError(BlokusError, ValueError):
    """A missing, corrupt or mismatched training checkpoint."""


class ContractError(BlokusError, AssertionError):
    """A broken promise of the environment contract found by `blokus_jax.testing.check_env`; the message
    names the property, the variant and the step. An `AssertionError` too, as test frameworks expect."""
