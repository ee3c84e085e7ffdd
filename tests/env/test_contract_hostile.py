"""The shipped contract check against deliberately broken environments: every broken promise raises
:class:`~blokus_jax.errors.ContractError` naming the property, the variant and the step; a correct duck-typed wrapper
passes."""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import pytest

import blokus_jax as bj
from blokus_jax.errors import ContractError
from blokus_jax.testing import ENV_INTERFACE, check_env


class Delegating:
    """A correct wrapper: it keeps the Env interface by delegating every attribute to the env inside."""

    def __init__(self, env):
        self._env = env

    def __getattr__(self, name):
        return getattr(self._env, name)

    def step(self, state, action):
        return self._env.step(state, action)


class AlwaysPlayerZero(Delegating):
    """Reports player 0 to move in every position."""

    def init(self, key=None):
        return self._env.init(key).replace(current_player=jnp.int32(0))

    def step(self, state, action):
        return self._env.step(state, action).replace(current_player=jnp.int32(0))


class ForgetsLastAction(Delegating):
    def step(self, state, action):
        return self._env.step(state, action).replace(last_action=state.last_action)


class AcceptsFloats(Delegating):
    """Converts any action to int32 (9454.9 would play 9454)."""

    def step(self, state, action):
        dtype = getattr(action, "dtype", None)
        if isinstance(action, (bool, float)) or (dtype is not None and not jnp.issubdtype(dtype, jnp.integer)):
            action = jnp.asarray(action).astype(jnp.int32)
        return self._env.step(state, action)


class IgnoresIllegalActions(Delegating):
    """Leaves the state as it was after an illegal action, instead of ending the game with the penalty."""

    def step(self, state, action):
        legal = self._env.is_legal(state, action)
        return jax.tree.map(lambda a, b: jnp.where(legal, a, b), self._env.step(state, action), state)


class KeyDependentInit(Delegating):
    def init(self, key=None):
        state = self._env.init(key)
        return state.replace(step_count=jax.random.randint(key, (), 0, 2, jnp.int32))


@pytest.fixture(scope="module")
def simple():
    return bj.make("simple")


def test_a_correct_duck_typed_wrapper_passes(simple):
    check_env(Delegating(simple))


@pytest.mark.parametrize(
    "broken, prop, step",
    [
        (AlwaysPlayerZero, "current_player 0 is not 1, the owner of current_color 1", "step 1"),
        (ForgetsLastAction, "records last_action", "step 0"),
        (AcceptsFloats, "a non-integer action 1.0 raises ActionTypeError", "step 0"),
        # caught first at the end of the random game: an action on a finished game keeps the last rewards
        (IgnoresIllegalActions, "a finished game is left unchanged with zero rewards", None),
        (KeyDependentInit, "init is pure and key-independent", "setup"),
    ],
)
def test_broken_envs_are_caught_with_the_property_variant_and_step(simple, broken, prop, step):
    with pytest.raises(ContractError) as caught:
        check_env(broken(simple))
    message = str(caught.value)
    assert isinstance(caught.value, AssertionError) and isinstance(caught.value, bj.BlokusError)
    assert prop in message and "variant 'simple'" in message, message
    assert (f"at {step}:" in message) if step else re.search(r"at step \d+:", message), message
    assert caught.value.__cause__ is not None  # the original failure is chained


def test_a_player_that_never_moves_is_caught_also_with_shared_colours():
    """classic_3p: the shared colour is placed in turn, so the owner check does not cover it; a player who is
    never to move is caught by the every-player check or the owner check, whichever comes first."""
    env = bj.make("classic_3p")

    class NeverPlayerTwo(Delegating):
        def step(self, state, action):
            after = self._env.step(state, action)
            return after.replace(current_player=jnp.where(after.current_player == 2, 0, after.current_player))

    with pytest.raises(ContractError, match=re.escape("variant 'classic_3p'")):
        check_env(NeverPlayerTwo(env))


def test_an_object_without_the_interface_is_refused_naming_what_it_lacks(simple):
    class Partial:
        variant = simple.variant

    with pytest.raises(TypeError, match="lacks") as caught:
        check_env(Partial())
    assert "step" in str(caught.value) and set(ENV_INTERFACE) >= {"init", "step", "observe"}
