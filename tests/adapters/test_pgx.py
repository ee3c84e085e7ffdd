"""The Pgx adapter: Pgx's own ``api_test`` on every registered variant, the shipped contract check, Pgx's
illegal-action rule, the stored fields' cost, pictures, and an AlphaZero loop written only against Pgx's API."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import get_args

import jax
import jax.numpy as jnp
import numpy as np
import pgx
import pgx._src.api_test as pgx_api_test
import pytest

import blokus_jax as bj
from blokus_jax.adapters import pgx as pgx_adapter
from blokus_jax.adapters.pgx import PgxEnv, State, api_test, api_test_env_ids, api_test_harness, env_id, state_bytes
from blokus_jax.io import render
from blokus_jax.testing import check_env, check_pgx_env

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pgx_alphazero.py"

#: A four-player variant on the small board (Pgx's illegal-action rule gives the others 3 times the penalty).
FOUR = bj.get_variant(
    "simple",
    name="simple_4p",
    num_colors=4,
    players_to_colors=((0,), (1,), (2,), (3,)),
    start_cells=(((0, 0),), ((0, 6),), ((6, 6),), ((6, 0),)),
)


@pytest.fixture
def blokus_ids():
    """The adapter's two patches of Pgx's ``api_test`` harness (``api_test_harness``), for this test only: (1) it
    checks ``state.env_id`` against its closed list ``pgx.EnvId``: add ours; (2) its random mover calls
    ``jax.random.categorical(..., axis=1)`` on one state's 1-D mask too, which JAX 0.10 rejects (Pgx's own games fail
    the same way): sample over the last axis, the same distribution for batches."""
    with api_test_harness(api_test_env_ids()):
        yield


def test_the_patched_api_test_still_passes_pgx_own_game(blokus_ids):
    pgx.api_test(pgx.make("tic_tac_toe"), num=2)


def test_the_adapters_api_test_runs_pgx_own_check_and_puts_the_harness_back():
    """``blokus_jax.adapters.pgx.api_test`` is how the docs say to run Pgx's check; Pgx's module is as it was after it,
    also when the check fails."""
    before = pgx_api_test.EnvId, pgx_api_test.act_randomly
    api_test(PgxEnv("simple"), num=1)
    assert (pgx_api_test.EnvId, pgx_api_test.act_randomly) == before
    with pytest.raises(ZeroDivisionError), api_test_harness(("blokus_simple",)):
        assert "blokus_simple" in get_args(pgx_api_test.EnvId)
        raise ZeroDivisionError
    assert (pgx_api_test.EnvId, pgx_api_test.act_randomly) == before


@pytest.fixture(scope="module")
def simple() -> PgxEnv:
    return PgxEnv("simple")


@pytest.mark.parametrize("name", bj.variant_names())
def test_pgx_api_test_passes_on_every_registered_variant(name, blokus_ids):
    env = PgxEnv(name)
    assert isinstance(env, pgx.Env) and env.id == f"blokus_{name}" and env.num_players == bj.make(name).num_players
    # Pgx's own test: `num` random games one by one and `num` batches of 4 (a full board compiles slowly: 1 each)
    pgx.api_test(env, num=4 if name == "simple" else 1)


def test_api_test_refuses_an_id_outside_its_list(simple, monkeypatch):
    """The id patch is needed, and is what makes api_test accept the adapter (the test can fail)."""
    monkeypatch.setattr(pgx_api_test, "act_randomly", jax.jit(pgx_adapter._act_randomly))
    with pytest.raises(AssertionError):
        pgx.api_test(simple, num=1)


@pytest.mark.slow
def test_the_shipped_contract_check_passes_through_the_adapter(simple):
    check_env(simple)


def test_a_custom_four_player_variant_passes_the_adapter_check():
    # the core side of check_env on custom variants is tests/env/test_contract.py's; here the adapter against it
    check_pgx_env(PgxEnv(FOUR, reward="score", illegal_action_penalty=-2.0), seed=3)


def test_check_env_catches_an_adapter_that_breaks_pgx_conventions(simple):
    class FirstPlayerView(PgxEnv):
        """Observes for player 0 whoever is to move."""

        def _observe(self, state, player_id):
            return super()._observe(state, jnp.int32(0))

    class KindPenalty(PgxEnv):
        """Gives the others 0 after an illegal action (the core's rule, not Pgx's)."""

        def _step_with_illegal_action(self, state, loser):
            return state.replace(rewards=jnp.zeros_like(state.rewards).at[loser].set(-1.0), terminated=True)

    for broken in (FirstPlayerView("simple"), KindPenalty("simple")):
        with pytest.raises(AssertionError):
            check_pgx_env(broken)


@pytest.mark.parametrize("variant", ["simple", FOUR])
def test_illegal_actions_follow_pgx_rule(variant):
    env = PgxEnv(variant)
    n = env.num_players
    step = jax.jit(env.step)
    start = jax.jit(env.init)(jax.random.key(0))
    forbidden = int(np.flatnonzero(~np.asarray(start.legal_action_mask))[0])
    for bad in (forbidden, -1, env.num_actions, 2**31 - 1):
        after = step(start, jnp.int32(bad))
        expected = np.full(n, float(n - 1), np.float32)  # +1 with two players, +3 with four
        expected[int(start.current_player)] = -1.0
        np.testing.assert_array_equal(after.rewards, expected)
        assert bool(after.terminated) and bool(np.asarray(after.legal_action_mask).all())
        np.testing.assert_array_equal(after._core.board, start._core.board)
        # the core state inside keeps the core's own rule: the others get 0
        core_rewards = np.zeros(n, np.float32)
        core_rewards[int(start.current_player)] = -1.0
        np.testing.assert_array_equal(after._core.rewards, core_rewards)


def test_observation_is_the_documented_bool_planes(simple):
    state = jax.jit(simple.init)(jax.random.key(0))
    assert simple.observation_shape == (7, 7, 4) and state.observation.shape == (7, 7, 4)
    assert state.observation.dtype == jnp.bool_
    core = bj.make("simple")
    np.testing.assert_array_equal(state.observation, np.asarray(core.observe(core.init()).planes, bool))
    assert state.legal_action_mask.shape == (core.num_actions,) == (simple.num_actions,)


@pytest.mark.parametrize("name", ["simple", "duo"])
def test_state_bytes_are_the_core_plus_the_stored_mask_and_observation(name):
    """The documented cost of the Pgx state: the core state, the bool mask, the bool planes and five small fields."""
    env = PgxEnv(name)
    core_bytes, pgx_bytes = state_bytes(env)
    core = env.core
    rows, cols = core.board_shape
    assert core_bytes == sum(x.nbytes for x in jax.tree.leaves(core.init()))
    extra = core.num_actions + rows * cols * 2 * core.num_colors + 4 * core.num_players + 4 + 1 + 1 + 4
    assert pgx_bytes == core_bytes + extra


def test_vmap_and_jit_agree_with_one_by_one(simple):
    keys = jax.random.split(jax.random.key(0), 3)
    batch = jax.jit(jax.vmap(simple.init))(keys)
    actions = jnp.argmax(batch.legal_action_mask, axis=1).astype(jnp.int32)
    stepped = jax.jit(jax.vmap(simple.step))(batch, actions)
    one = jax.jit(simple.step)(jax.jit(simple.init)(keys[0]), actions[0])
    jax.tree.map(lambda a, b: np.testing.assert_array_equal(a[0], b), stepped, one)


def test_svg_pictures_single_and_batched(simple, tmp_path):
    state = jax.jit(simple.init)(jax.random.key(0))
    single = state.to_svg()
    assert single.startswith("<svg") and single == render.to_svg(jax.device_get(state._core), simple.variant)
    batch = jax.jit(jax.vmap(simple.init))(jax.random.split(jax.random.key(0), 5))
    grid = batch.to_svg(scale=0.5)
    assert grid.count("<svg") == 6  # the grid and its five pictures
    path = tmp_path / "state.svg"
    state.save_svg(path)
    assert path.read_text() == single
    with pytest.raises(bj.ConfigError):
        state.save_svg(tmp_path / "state.png")


def test_ids_and_construction():
    assert api_test_env_ids() == tuple(f"blokus_{n}" for n in bj.variant_names())
    assert env_id(FOUR) == "blokus_simple_4p"
    core = bj.make("simple", reward="score")
    assert PgxEnv(core).core is core
    with pytest.raises(bj.ConfigError):
        PgxEnv(core, board_shape=(6, 6))
    with pytest.raises(bj.VariantError):
        PgxEnv("go")
    assert isinstance(jax.jit(PgxEnv("simple", board_shape=(8, 8)).init)(jax.random.key(0)), State)


@pytest.mark.slow
def test_alphazero_loop_against_the_pgx_api_trains():
    example = runpy.run_path(str(EXAMPLE))
    config = example["Config"](updates=2, batch=8, simulations=4, minibatch=32)
    result = example["train"](config, verbose=False)
    assert len(result["losses"]) == 2 and np.isfinite(result["losses"]).all()
    before, after = result["first_batch_loss"]
    assert after < before, (before, after)
