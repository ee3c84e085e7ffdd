"""Gymnasium adapter: check_env on every registered id, the vector env against SyncVectorEnv, boundary errors,
masks, seeding, rendering, opponents and the MaskablePPO example."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import chex
import gymnasium
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode, SyncVectorEnv
from helpers import load_script

import blokus_jax
from blokus_jax.adapters import RejectedActionError
from blokus_jax.adapters.gymnasium import GYM_IDS, BlokusGymEnv, BlokusVectorEnv

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "maskable_ppo_duo.py"
_CORNERS_8 = [[(0, 0)], [(0, 7)], [(7, 7)], [(7, 0)]]
#: Small-board overrides that keep check_env fast; BlokusClassic-v0 and BlokusSimple-v0 run at their real size.
SMALL = {
    "classic": {},
    "simple": {},
    "classic_2p": {"board_shape": (8, 8), "start_cells": _CORNERS_8},
    "classic_3p": {"board_shape": (8, 8), "start_cells": _CORNERS_8},
    "duo": {"board_shape": (8, 8), "start_cells": [[(2, 2)], [(5, 5)]]},
    "junior": {"board_shape": (8, 8), "start_cells": [[(2, 2)], [(5, 5)]]},
}
ALL_IDS = [f"{stem}{suffix}-v0" for stem in GYM_IDS for suffix in ("", "Greedy")]


def _play_random(env: BlokusGymEnv, rng: np.random.Generator, seed: int) -> list:
    """One episode with uniformly random legal learner actions; returns the (obs, reward, term, info) sequence."""
    obs, info = env.reset(seed=seed)
    trace, done = [(obs, 0.0, False, info)], False
    while not done:
        assert info["action_mask"].any(), "the learner was asked to act with an all-zero mask"
        obs, reward, term, trunc, info = env.step(rng.choice(np.flatnonzero(info["action_mask"])))
        trace.append((obs, reward, term, info))
        done = term or trunc
    return trace


@pytest.fixture(scope="module")
def simple() -> BlokusGymEnv:
    return BlokusGymEnv("simple", illegal_action="raise")


# ---------------------------------------------------------------------------------------------------- check_env
def test_every_variant_is_registered_twice():
    assert set(ALL_IDS) <= set(gymnasium.registry)
    assert len(ALL_IDS) == 12
    assert gymnasium.registry["BlokusDuoGreedy-v0"].kwargs == {"variant": "duo", "opponents": "greedy"}


@pytest.mark.parametrize("env_id", ALL_IDS)
def test_check_env(env_id, capsys):
    variant = gymnasium.registry[env_id].kwargs["variant"]
    env = gymnasium.make(env_id, **SMALL[variant])
    check_env(env.unwrapped)
    assert isinstance(env.unwrapped, BlokusGymEnv)
    assert env.unwrapped.core.variant.name == variant
    env.close()


# -------------------------------------------------------------------------------------------------- observations
def test_observation_layout_and_masks(simple):
    obs, info = simple.reset(seed=0)
    core = simple.core
    assert simple.observation_space.contains(obs)
    assert obs["planes"].shape == (7, 7, 4) and obs["pieces"].shape == (2, 9)
    assert np.array_equal(info["action_mask"], obs["action_mask"]) and info["action_mask"] is not obs["action_mask"]
    assert np.array_equal(simple.action_masks(), np.asarray(simple.state.legal_action_mask))
    assert simple.action_masks().dtype == bool
    expected = core.observe(simple.state, 0)
    assert np.array_equal(obs["planes"], np.asarray(expected.planes))
    assert int(simple.state.current_player) == 0


def test_masks_never_all_zero_and_forced_passes_reach_the_learner(simple):
    rng = np.random.default_rng(0)
    pass_only = 0
    for seed in range(4):
        trace = _play_random(simple, rng, seed)
        masks = [info["action_mask"] for _, _, _, info in trace[:-1]]
        pass_only += sum(bool(m[-1]) and m.sum() == 1 for m in masks)
        final_obs, reward, term, info = trace[-1]
        assert term and not final_obs["action_mask"].any()
        scores = info["player_scores"]
        assert reward == (1.0 if scores[0] > scores[1] else -1.0 if scores[0] < scores[1] else 0.5)
    assert pass_only >= 1, "every colour passes once, so the learner must have been offered a lone pass"


def test_seeded_reset_reproduces_games():
    a = BlokusGymEnv("simple", seat="random", opponents="greedy")
    b = BlokusGymEnv("simple", seat="random", opponents="greedy")
    traces = [_play_random(env, np.random.default_rng(3), seed=11) for env in (a, b)]
    assert len(traces[0]) == len(traces[1])
    for (oa, ra, ta, ia), (ob, rb, tb, ib) in zip(*traces):
        assert all(np.array_equal(oa[k], ob[k]) for k in oa) and (ra, ta, ia["seat"]) == (rb, tb, ib["seat"])
    seats = {a.reset(seed=s)[1]["seat"] for s in range(12)}
    assert seats == {0, 1}, "seat='random' should draw both seats over a dozen seeds"


def test_reset_options_fix_the_seat(simple):
    obs, info = simple.reset(seed=0, options={"seat": 1})
    assert info["seat"] == 1 and int(simple.state.current_player) == 1
    assert int(simple.state.step_count) == 1, "the opponent (player 0) moves first"
    with pytest.raises(ValueError, match="seat 5"):
        simple.reset(options={"seat": 5})


def _env_snapshot(env):
    """Everything a failed call must leave unchanged: the core state, seat, mask, RNG state and key."""
    return (
        jax.device_get(env.state),
        env.seat,
        None if env._mask is None else env._mask.copy(),
        env.np_random.bit_generator.state if env._np_random is not None else None,
        np.asarray(env._key),
    )


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(options={"seat": 5}),
        dict(options={"seat": -1}),
        dict(options={"seat": 1.0}),
        dict(options={"seat": True}),
        dict(options={"seat": "1"}),
        dict(options={"seats": 1}),
        dict(options=[("seat", 1)]),
        dict(seed=-1),
        dict(seed=1.5),
        dict(seed="7"),
        dict(seed=0, options={"seat": 5}),
    ],
)
def test_a_failed_reset_leaves_the_env_as_it_was(simple, kwargs):
    simple.reset(seed=3)
    simple.step(int(np.flatnonzero(simple.action_masks())[0]))
    before = _env_snapshot(simple)
    with pytest.raises(blokus_jax.ConfigError):
        simple.reset(**kwargs)
    after = _env_snapshot(simple)
    chex.assert_trees_all_equal(before[0], after[0])
    assert before[1] == after[1] and np.array_equal(before[2], after[2]) and before[3] == after[3]
    assert np.array_equal(before[4], after[4])
    obs, reward, terminated, truncated, info = simple.step(int(np.flatnonzero(simple.action_masks())[0]))
    assert int(simple.state.step_count) <= int(before[0].step_count) + 2, "the next step plays one turn, not a game"


def test_numpy_integer_seeds_are_accepted(simple):
    a = simple.reset(seed=np.int64(11))
    b = simple.reset(seed=11)
    assert all(np.array_equal(a[0][k], b[0][k]) for k in a[0]) and a[1]["seat"] == b[1]["seat"]


# ----------------------------------------------------------------------------------------------- boundary errors
def _cells(env, cells):
    return env.core.action_from_cells(cells)


def _snapshot(env):
    return np.asarray(env.state.board).copy(), int(env.state.step_count), env.action_masks().copy()


@pytest.mark.parametrize(
    "bad, reason",
    [
        (3.0, "dtype"),
        (np.float32(2), "dtype"),
        (True, "dtype"),
        ("7", "dtype"),
        (np.array([1, 2]), "shape"),
        (-1, "out_of_range"),
        (10**6, "out_of_range"),
    ],
)
def test_malformed_actions_raise_and_leave_the_env_unchanged(simple, bad, reason):
    simple.reset(seed=0)
    before = _snapshot(simple)
    with pytest.raises(RejectedActionError) as err:
        simple.step(bad)
    assert err.value.reason == reason and err.value.action is bad
    assert isinstance(err.value, ValueError) and isinstance(err.value, blokus_jax.BlokusError)
    after = _snapshot(simple)
    assert all(np.array_equal(x, y) for x, y in zip(before, after))


def test_illegal_placements_name_the_rule(simple):
    """Every rule a placement can break, each rejected with its reason and the env left as it was."""
    simple.reset(seed=0)
    with pytest.raises(RejectedActionError, match="does not cover its start square") as err:
        simple.step(_cells(simple, [(3, 3)]))
    assert err.value.reason == "illegal" and isinstance(err.value, blokus_jax.IllegalActionError)
    simple.step(_cells(simple, [(0, 0)]))  # learner: monomino on the start cell
    cases = {
        "no piece '1' left": [(1, 1)],  # the monomino again
        "covers occupied squares": [(0, 0), (0, 1)],
        "shares an edge": [(0, 1), (0, 2)],
        "does not touch another": [(3, 3), (3, 4)],
    }
    for message, cells in cases.items():
        before = _snapshot(simple)
        with pytest.raises(RejectedActionError, match=message):
            simple.step(_cells(simple, cells))
        assert all(np.array_equal(x, y) for x, y in zip(before, _snapshot(simple)))
    with pytest.raises(RejectedActionError, match="cannot pass"):
        simple.step(simple.core.pass_action)
    obs, *_ = simple.step(_cells(simple, [(1, 1), (1, 2)]))  # still playable after all the rejections
    assert obs["planes"][1, 1, 0] == 1.0


def test_step_after_the_end_raises_game_over():
    env = BlokusGymEnv("simple")  # penalize mode: the illegal action ends the game ...
    env.reset(seed=0)
    board = np.asarray(env.state.board).copy()
    obs, reward, term, trunc, info = env.step(_cells(env, [(3, 3)]))
    assert (reward, term, trunc) == (-1.0, True, False) and "start square" in info["illegal_action"]
    assert np.array_equal(np.asarray(env.state.board), board) and not obs["action_mask"].any()
    with pytest.raises(RejectedActionError, match="call reset") as err:  # ... and stepping on raises
        env.step(env.core.pass_action)
    assert err.value.reason == "game_over"


def test_bad_configuration_is_rejected():
    with pytest.raises(ValueError, match="seat 2"):
        BlokusGymEnv("simple", seat=2)
    with pytest.raises(ValueError, match="illegal_action"):
        BlokusGymEnv("simple", illegal_action="ignore")
    with pytest.raises(blokus_jax.ConfigError, match="exactly 3"):
        BlokusGymEnv("classic", opponents=["random", "greedy"])
    with pytest.raises(blokus_jax.ConfigError, match="neither an agent spec nor a policy"):
        BlokusGymEnv("simple", opponents=42)
    with pytest.raises(blokus_jax.VariantError, match="unknown variant"):
        BlokusGymEnv("hexagonal")


def test_bot_names_need_the_agents_package(monkeypatch):
    monkeypatch.setitem(sys.modules, "blokus_agents.players.bots", None)
    monkeypatch.setitem(sys.modules, "blokus_agents.core.policies", None)
    with pytest.raises(ImportError, match="agents"):
        BlokusGymEnv("simple", opponents="corners")


# ----------------------------------------------------------------------------------------------------- opponents
def _first_legal(key, state):
    return jnp.argmax(state.legal_action_mask).astype(jnp.int32)


def _last_legal(key, state):
    mask = state.legal_action_mask
    return (mask.shape[0] - 1 - jnp.argmax(mask[::-1])).astype(jnp.int32)


def test_opponent_k_plays_the_kth_player_after_the_learner():
    overrides = {"board_shape": (8, 8), "start_cells": _CORNERS_8}
    env = BlokusGymEnv("classic", seat=1, opponents=[_first_legal, _last_legal, _last_legal], **overrides)
    obs, info = env.reset(seed=0)
    core = env.core
    state = core.init()
    state = core.step(state, _last_legal(None, state))  # player 0 = third opponent after seat 1
    assert np.array_equal(np.asarray(env.state.board), np.asarray(state.board)), "player 0 uses opponents[2]"
    learner = int(np.flatnonzero(info["action_mask"])[0])
    env.step(learner)
    state = core.step(state, learner)
    state = core.step(state, _first_legal(None, state))  # player 2 = opponents[0]
    state = core.step(state, _last_legal(None, state))  # player 3 = opponents[1]
    state = core.step(state, _last_legal(None, state))  # player 0 = opponents[2] again
    assert int(state.current_player) == 1
    assert np.array_equal(np.asarray(env.state.board), np.asarray(state.board))


def test_classic_2p_learner_plays_both_colours():
    env = BlokusGymEnv("classic_2p", board_shape=(8, 8), start_cells=_CORNERS_8)
    obs, info = env.reset(seed=0)
    colours = []
    for _ in range(4):
        colours.append(int(env.state.current_color))
        obs, *_, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert colours == [0, 2, 0, 2]


def test_render_modes():
    env = BlokusGymEnv("simple", render_mode="ansi")
    env.reset(seed=0)
    assert "Blue to move" in env.render()
    rgb = BlokusGymEnv("simple", render_mode="rgb_array")
    rgb.reset(seed=0)
    image = rgb.render()
    assert image.dtype == np.uint8 and image.shape == (56, 56, 3)


# ---------------------------------------------------------------------------------------------------- vector env
@pytest.mark.parametrize("mode", [AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP])
def test_vector_env_equals_sync_vector_env_of_single_envs(mode):
    n = 3
    vec = gymnasium.make_vec(
        "BlokusSimple-v0", num_envs=n, vectorization_mode="vector_entry_point", autoreset_mode=mode, seat="random"
    )
    assert isinstance(vec, BlokusVectorEnv) and vec.metadata["autoreset_mode"] == mode
    sync = SyncVectorEnv([lambda: BlokusGymEnv("simple", seat="random") for _ in range(n)], autoreset_mode=mode)
    ov, iv = vec.reset(seed=7)
    os_, is_ = sync.reset(seed=7)
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(30):
        assert all(np.array_equal(ov[k], os_[k]) for k in os_)
        assert np.array_equal(iv["seat"], is_["seat"]) and np.array_equal(iv["action_mask"], is_["action_mask"])
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in iv["action_mask"]])
        ov, rv, tv, trv, iv = vec.step(actions)
        os_, rs, ts, trs, is_ = sync.step(actions)
        assert np.array_equal(rv, rs) and np.array_equal(tv, ts) and np.array_equal(trv, trs)
        if mode == AutoresetMode.SAME_STEP:
            for i in np.flatnonzero(tv):
                assert all(np.array_equal(iv["final_obs"][i][k], is_["final_obs"][i][k]) for k in os_)
                assert np.array_equal(iv["final_info"]["player_scores"][i], is_["final_info"]["player_scores"][i])
        finished += int(tv.sum())
    assert finished >= 3, "the comparison must cover autoresets"
    assert vec.observation_space == sync.observation_space


def test_vector_env_rejects_bad_batches():
    vec = BlokusVectorEnv(3, "simple", illegal_action="raise")  # same shapes as above: no new compilation
    with pytest.raises(RejectedActionError, match="reset"):
        vec.step(np.zeros(3, np.int64))
    obs, info = vec.reset(seed=0)
    board = np.asarray(vec.state.board).copy()
    for bad, reason in [
        (np.zeros(2, np.int64), "shape"),
        (np.zeros(3), "dtype"),
        (np.array([0, 0, vec.core.num_actions]), "out_of_range"),
    ]:
        with pytest.raises(RejectedActionError) as err:
            vec.step(bad)
        assert err.value.reason == reason
    legal, pass_ = np.flatnonzero(info["action_mask"][0])[0], vec.core.pass_action
    with pytest.raises(RejectedActionError, match=f"sub-environment 2: action {pass_} is illegal: .* cannot pass"):
        vec.step(np.array([legal, legal, pass_]))
    assert np.array_equal(np.asarray(vec.state.board), board)
    assert np.array_equal(vec.action_masks(), info["action_mask"].astype(bool))


def test_vector_env_accepts_numpy_integer_seeds_and_rejects_bad_ones():
    vec = BlokusVectorEnv(3, "simple", seat="random")
    reference, _ = vec.reset(seed=5)
    for seed in (np.int64(5), np.int32(5), np.uint8(5), [5, 6, 7], np.arange(5, 8), (np.int64(5), 6, np.int16(7))):
        obs, info = vec.reset(seed=seed)
        assert all(np.array_equal(obs[k], reference[k]) for k in obs), seed
    obs, info = vec.reset(seed=0, options={"seat": 1})
    assert (info["seat"] == 1).all()
    before = (jax.device_get(vec.state), vec._seat.copy(), vec._mask.copy(), [r.bit_generator.state for r in vec._rngs])
    for bad in (
        dict(seed=1.5),
        dict(seed=[1, 2]),
        dict(seed="abc"),
        dict(seed=[1, 2, -3]),
        dict(seed=[1, 2, 3.0]),
        dict(seed=True),
        dict(seed=0, options={"seat": 2}),
        dict(seed=0, options={"colour": 1}),
    ):
        with pytest.raises(blokus_jax.ConfigError):
            vec.reset(**bad)
        chex.assert_trees_all_equal(jax.device_get(vec.state), before[0])
        assert np.array_equal(vec._seat, before[1]) and np.array_equal(vec._mask, before[2])
        assert [r.bit_generator.state for r in vec._rngs] == before[3]


# ------------------------------------------------------------------------------------------------------ example
class _MaskedRandomModel:
    """Stands in for a trained MaskablePPO model: ``predict`` with ``action_masks`` picks a random legal action."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def predict(self, obs, action_masks, deterministic=True):
        assert action_masks.dtype == bool and action_masks.any()
        return self.rng.choice(np.flatnonzero(action_masks)), None


def test_maskable_ppo_example_evaluates_with_action_masks():
    """The example's train/evaluate/main exist, and its evaluation loop (the part that talks to our env: masks,
    seeds, rewards) runs. Training itself needs the optional sb3-contrib + torch and is not run here."""
    tree = ast.parse(EXAMPLE.read_text())
    assert {"train", "evaluate", "main"} <= {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}
    module = load_script(EXAMPLE)  # sb3_contrib is imported lazily inside train()
    rate = module.evaluate(_MaskedRandomModel(0), "BlokusSimple-v0", games=4, seed=0)
    assert rate in (0.0, 0.25, 0.5, 0.75, 1.0)
