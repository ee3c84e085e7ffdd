"""PettingZoo adapter: api_test and seed_test on every variant, masks, rewards at the end, boundary errors and
the wrappers of ``env()``."""

from __future__ import annotations

import runpy
from pathlib import Path

import jax
import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

import blokus_jax
from blokus_jax.adapters import RejectedActionError
from blokus_jax.adapters.pettingzoo import BlokusAECEnv, env, raw_env

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pettingzoo_random.py"
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # api_test's advisory warnings (dict observations)


def _random_game(game, rng: np.random.Generator) -> list[tuple[str, np.ndarray]]:
    """Play one game with random legal actions; returns the (agent, mask) of every live turn."""
    game.reset(seed=0)
    turns = []
    for agent in game.agent_iter():
        obs, _, terminated, truncated, _ = game.last()
        if terminated or truncated:
            game.step(None)
            continue
        turns.append((agent, obs["action_mask"]))
        game.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return turns


@pytest.mark.parametrize("variant", blokus_jax.variant_names())
def test_api_test_raw_and_wrapped(variant):
    api_test(raw_env(variant), num_cycles=1000)
    api_test(env(variant), num_cycles=1000)


@pytest.mark.parametrize("variant", ["duo", "classic_3p"])
def test_seed_test(variant):
    seed_test(lambda: env(variant), num_cycles=100)


def test_agents_observations_and_rewards_at_the_end():
    game = raw_env("classic_2p", board_shape=(8, 8), start_cells=[[(0, 0)], [(0, 7)], [(7, 7)], [(7, 0)]])
    game.reset()
    assert game.agents == ["player_0", "player_1"]
    space = game.observation_space("player_0")
    rng = np.random.default_rng(1)
    seen_colours, rewards = [], {a: 0.0 for a in game.agents}
    while not any(game.terminations.values()):
        agent = game.agent_selection
        obs = game.observe(agent)
        other = game.observe("player_1" if agent == "player_0" else "player_0")
        assert space.contains(obs) and obs["action_mask"].any() and not other["action_mask"].any()
        seen_colours.append((agent, int(game.state.current_color)))
        game.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        for a, r in game.rewards.items():
            rewards[a] += r
    assert seen_colours[:4] == [("player_0", 0), ("player_1", 1), ("player_0", 2), ("player_1", 3)]
    assert all(game.terminations.values()) and not any(game.truncations.values())
    core_rewards = np.asarray(game.state.rewards)
    assert rewards == {"player_0": float(core_rewards[0]), "player_1": float(core_rewards[1])}
    assert sorted(rewards.values()) in ([-1.0, 1.0], [0.5, 0.5])


def test_masks_never_all_zero_for_the_actor_and_forced_passes_appear():
    game = env("simple")
    turns = _random_game(game, np.random.default_rng(0))
    pass_action = game.unwrapped.core.pass_action
    assert all(mask.any() for _, mask in turns)
    lone_passes = [agent for agent, mask in turns if mask[pass_action] and mask.sum() == 1]
    assert len(lone_passes) == 2, "each colour is offered exactly one forced pass, ending the game"
    assert not game.agents, "every agent is removed after the game ends"


def test_max_steps_truncates_all_agents_together():
    game = raw_env("duo", max_steps=3)
    game.reset()
    for _ in range(3):
        game.step(int(np.flatnonzero(game.observe(game.agent_selection)["action_mask"])[0]))
    assert all(game.truncations.values()) and not any(game.terminations.values())
    assert game.rewards == {"player_0": 0.0, "player_1": 0.0}


def test_raw_env_rejects_illegal_actions_and_stays_unchanged():
    game = raw_env("simple")
    game.reset()
    core = game.unwrapped.core
    board = np.asarray(game.state.board).copy()
    cases = [
        (core.action_from_cells([(3, 3)]), "illegal", "start square"),
        (core.pass_action, "illegal", "cannot pass"),
        (core.num_actions, "out_of_range", "out of range"),
        (1.5, "dtype", "integer"),
        (np.array([0]), "shape", "shape"),
    ]
    for action, reason, message in cases:
        with pytest.raises(RejectedActionError, match=message) as err:
            game.step(action)
        assert err.value.reason == reason and isinstance(err.value, blokus_jax.IllegalActionError)
        assert np.array_equal(np.asarray(game.state.board), board) and game.agent_selection == "player_0"
    with pytest.raises(RejectedActionError, match="player_0's turn") as err:
        game.act("player_1", core.action_from_cells([(6, 6)]))
    assert err.value.reason == "not_your_turn"
    game.act("player_0", core.action_from_cells([(0, 0)]))
    assert game.agent_selection == "player_1"


def test_wrapped_env_penalizes_illegal_moves_but_raises_on_malformed_ones():
    game = env("simple", illegal_action_penalty=-2.0)
    game.reset()
    with pytest.raises(RejectedActionError, match="out of range"):
        game.step(-1)
    game.step(game.unwrapped.core.action_from_cells([(3, 3)]))
    assert game.rewards["player_0"] == -2.0 and all(game.terminations.values())


def test_render_and_bad_arguments():
    game = raw_env("simple", render_mode="rgb_array")
    game.reset()
    assert game.render().shape == (56, 56, 3)
    text = raw_env("simple", render_mode="ansi")
    text.reset()
    assert "Blue to move" in text.render()
    with pytest.raises(ValueError, match="render_mode"):
        BlokusAECEnv("simple", render_mode="video")


def test_random_agents_example_runs(capsys):
    play = runpy.run_path(str(EXAMPLE))["play"]
    results = play("simple", games=2, seed=0, show=False)
    assert len(results) == 2 and all(sorted(r.values()) in ([-1.0, 1.0], [0.5, 0.5]) for r in results)


def _finish(game) -> None:
    """Play the first legal action until every agent is terminated or truncated."""
    while not all(game.terminations[a] or game.truncations[a] for a in game.agents):
        game.step(int(np.flatnonzero(game.observe(game.agent_selection)["action_mask"])[0]))


@pytest.mark.parametrize("make", [raw_env, env])
def test_done_agents_refuse_actions_with_game_over(make):
    game = make("simple", max_steps=2)
    game.reset()
    _finish(game)
    agent = game.agent_selection
    board = np.asarray(game.unwrapped.state.board).copy()
    for action in (0, game.unwrapped.core.pass_action, np.int64(3)):
        with pytest.raises(RejectedActionError, match="call reset") as err:
            game.step(action)
        assert err.value.reason == "game_over"
        assert game.agent_selection == agent and agent in game.agents
        assert np.array_equal(np.asarray(game.unwrapped.state.board), board)
    while game.agents:  # None still retires the done agents, one by one
        game.step(None)
    if make is raw_env:
        with pytest.raises(RejectedActionError, match="reset") as err:
            game.step(0)
        assert err.value.reason == "game_over"


def test_unknown_agent_names_are_a_clear_error():
    game = raw_env("simple")
    game.reset()
    for bad in ("player_2", "player_-1", "bob", "player_x", 0, None):
        for call in (game.observe, game.observation_space, game.action_space):
            with pytest.raises(blokus_jax.ConfigError, match=r"unknown agent .*\['player_0', 'player_1'\]"):
                call(bad)
        with pytest.raises(blokus_jax.ConfigError, match="unknown agent"):
            game.act(bad, 0)
    assert game.agent_selection == "player_0" and int(game.state.step_count) == 0


def test_calls_before_reset_and_bad_reset_arguments():
    game = raw_env("simple")
    with pytest.raises(RejectedActionError, match="reset"):
        game.step(0)
    with pytest.raises(blokus_jax.ConfigError, match="reset"):
        game.observe("player_0")
    game.reset(seed=np.int64(3))
    game.step(int(np.flatnonzero(game.observe("player_0")["action_mask"])[0]))
    state = jax.device_get(game.state)
    for bad in (dict(seed=1.5), dict(seed="1"), dict(options=[1])):
        with pytest.raises(blokus_jax.ConfigError):
            game.reset(**bad)
        assert np.array_equal(np.asarray(game.state.board), state.board)
        assert game.agent_selection == "player_1"
