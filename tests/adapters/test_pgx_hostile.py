"""The Pgx adapter refuses what Pgx's conventions do not cover, with the project's errors: actions that are not one
integer, batched states stepped without ``vmap``, states of another variant, player ids outside the game, a positive
illegal-action penalty, pictures at a nonsensical scale; and a custom variant never takes a registered variant's id."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import blokus_jax as bj
from blokus_jax.adapters.pgx import PgxEnv, env_id


@pytest.fixture(scope="module")
def simple() -> PgxEnv:
    return PgxEnv("simple")


@pytest.fixture(scope="module")
def start(simple):
    return jax.jit(simple.init)(jax.random.key(0))


@pytest.mark.parametrize(
    "action", [True, np.bool_(False), 1.5, np.float32(3.0), jnp.float32(3.0), jnp.array([1, 2]), "3", None]
)
def test_actions_that_are_not_one_integer_are_refused(simple, start, action):
    with pytest.raises(bj.ActionTypeError, match="integer action index"):
        simple.step(start, action)


@pytest.mark.parametrize("action", [True, jnp.float32(3.0), jnp.zeros(2, jnp.int32)])
def test_actions_are_refused_when_traced_under_jit(simple, start, action):
    with pytest.raises(bj.ActionTypeError):
        jax.jit(simple.step)(start, action)


@pytest.mark.parametrize("action", [2**40, -(2**40), np.int64(2**32 + 5)])
def test_huge_integers_are_illegal_actions_with_pgx_rule(simple, start, action):
    after = simple.step(start, action)
    assert bool(after.terminated)
    expected = np.ones(2, np.float32)
    expected[int(start.current_player)] = -1.0
    np.testing.assert_array_equal(after.rewards, expected)
    np.testing.assert_array_equal(after._core.board, start._core.board)


@pytest.mark.slow
def test_a_batched_state_stepped_without_vmap_is_refused(simple):
    batch = jax.jit(jax.vmap(simple.init))(jax.random.split(jax.random.key(0), 3))
    actions = jnp.zeros(3, jnp.int32)
    for call in (lambda: simple.step(batch, actions), lambda: jax.jit(simple.step)(batch, actions)):
        with pytest.raises(bj.ConfigError, match=r"batch of shape \(3,\).*jax.vmap"):
            call()
    with pytest.raises(bj.ConfigError, match="jax.vmap"):
        simple.observe(batch)
    assert jax.jit(jax.vmap(simple.step))(batch, actions).current_player.shape == (3,)


@pytest.mark.parametrize("other", ["duo", dict(board_shape=(8, 8))])
def test_a_state_of_another_variant_is_refused(simple, start, other):
    env = PgxEnv(other) if isinstance(other, str) else PgxEnv("simple", **other)
    with pytest.raises(bj.VariantError, match="use the PgxEnv that made the state"):
        env.step(start, 0)
    with pytest.raises(bj.VariantError):
        jax.jit(env.step)(start, jnp.int32(0))
    with pytest.raises(bj.VariantError):
        env.observe(start)


def test_something_that_is_not_a_pgx_state_is_refused(simple):
    with pytest.raises(bj.ConfigError, match="takes a State of this adapter"):
        simple.step(simple.core.init(), 0)


@pytest.mark.parametrize("player", [5, 2, -1, 1.5, True, np.float32(0), jnp.array([0, 1]), jnp.int32(7), "0"])
def test_observe_refuses_player_ids_outside_the_game(simple, start, player):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Pgx deprecates the argument itself
        with pytest.raises(bj.ConfigError, match=r"player index in \[0, 2\)"):
            simple.observe(start, player)


def test_observe_accepts_every_player_and_traced_ids(simple, start):
    core = simple.core
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for player in (0, 1, np.int64(1), jnp.int32(0)):
            expected = np.asarray(core.observe(start._core, int(player)).planes, bool)
            np.testing.assert_array_equal(simple.observe(start, player), expected)
        traced = jax.jit(simple.observe)(start, jnp.int32(1))
        np.testing.assert_array_equal(traced, np.asarray(core.observe(start._core, 1).planes, bool))
        with pytest.raises(bj.ConfigError):
            jax.jit(simple.observe)(start, jnp.float32(1))


@pytest.mark.parametrize("penalty", [5, 0.5, 1e-9])
def test_a_positive_illegal_action_penalty_is_refused(penalty):
    with pytest.raises(bj.ConfigError, match="at most 0"):
        PgxEnv("simple", illegal_action_penalty=penalty)
    with pytest.raises(bj.ConfigError, match="at most 0"):
        PgxEnv(bj.make("simple", illegal_action_penalty=penalty))


def test_zero_and_negative_penalties_are_accepted():
    assert PgxEnv("simple", illegal_action_penalty=0.0)._illegal_action_penalty == 0.0
    assert PgxEnv("simple", illegal_action_penalty=-3)._illegal_action_penalty == -3.0


def test_a_custom_variant_with_a_registered_name_gets_its_own_id():
    fake = bj.get_variant("simple", name="duo")  # a 7x7 board called "duo"
    env = PgxEnv(fake)
    assert env.id != "blokus_duo" and env.id.startswith("blokus_duo_custom_")
    assert env.id == env_id(fake) == jax.jit(env.init)(jax.random.key(0)).env_id
    assert PgxEnv("duo").id == "blokus_duo"  # the registered variant keeps its id
    # ten by ten, and any override of a registered variant, also differ; equal rules give equal ids
    ten = PgxEnv("duo", board_shape=(10, 10))
    assert ten.id.startswith("blokus_duo_custom_") and ten.id != env.id
    assert PgxEnv("duo", board_shape=(10, 10)).id == ten.id


@pytest.mark.parametrize("scale", [float("nan"), float("inf"), -1, 0, True, "2"])
def test_pictures_refuse_a_nonsensical_scale(start, scale, tmp_path):
    with pytest.raises(bj.ConfigError, match="scale must be a finite positive number"):
        start.to_svg(scale=scale)
    with pytest.raises(bj.ConfigError):
        start.save_svg(tmp_path / "x.svg", scale=scale)
    assert not (tmp_path / "x.svg").exists()


def test_pictures_accept_pgx_themes_and_refuse_others(start):
    assert start.to_svg(color_theme="dark", scale=0.5).startswith("<svg")
    with pytest.raises(bj.ConfigError, match="color_theme"):
        start.to_svg(color_theme="neon")
