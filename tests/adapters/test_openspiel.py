"""The OpenSpiel adapter: OpenSpiel's own random_sim_test on every registered variant, the shipped contract check,
OpenSpiel's MCTSBot against the project's mcts agent through evaluate_bots, and 100 random Duo games whose final
scores must be identical through OpenSpiel and through the core."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import evaluate_bots, mcts

import blokus_jax as bj
from blokus_jax import errors
from blokus_jax.adapters import openspiel as bos
from blokus_jax.io import render
from blokus_jax.rollout import max_game_length
from blokus_jax.testing import check_env, check_openspiel_game

TINY = bj.get_variant("simple", name="tiny", board_shape=(6, 6), start_cells=(((0, 0),), ((5, 5),)))


@pytest.mark.parametrize("name", sorted(bos.GAMES))
def test_random_sim_test_passes_on_every_registered_variant(name):
    assert name in pyspiel.registered_names()
    game = pyspiel.load_game(name)
    assert isinstance(game, bos.BlokusGame) and game.variant.name == bos.GAMES[name]
    # OpenSpiel's own check (clone, serialisation, observations, action strings, sorted legal actions, returns)
    pyspiel.random_sim_test(game, num_sims=3 if name == "blokus_simple" else 1, serialize=True, verbose=False)


def test_the_shipped_contract_check_passes_through_the_adapter():
    check_env(pyspiel.load_game("blokus_simple"))


def test_a_custom_variant_through_the_game_parameter():
    parameter = bos.variant_parameter(TINY)
    assert parameter.replace("-", "").replace("_", "").isalnum()
    game = pyspiel.load_game("blokus_simple", {"variant": parameter})
    assert game.variant == TINY and game.core.board_shape == (6, 6)
    pyspiel.random_sim_test(game, num_sims=2, serialize=True, verbose=False)
    check_openspiel_game(game, seed=2)
    again, _ = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, game.new_initial_state()))
    assert again.variant == TINY


def test_a_custom_variant_with_another_number_of_players():
    four = bj.get_variant(
        "simple",
        name="simple_4p",
        num_colors=4,
        players_to_colors=((0,), (1,), (2,), (3,)),
        start_cells=(((0, 0),), ((0, 6),), ((6, 6),), ((6, 0),)),
    )
    game = pyspiel.load_game("blokus_simple", {"variant": bos.variant_parameter(four)})
    assert game.num_players() == 4 and game.get_type().max_num_players == 4
    pyspiel.random_sim_test(game, num_sims=1, serialize=True, verbose=False)


@pytest.mark.parametrize("bad", ["not base64!", bos.variant_parameter(TINY)[:-9], "e30"])
def test_a_bad_variant_parameter_is_refused(bad):
    with pytest.raises(bj.VariantError, match="variant"):
        pyspiel.load_game("blokus_simple", {"variant": bad})


def test_check_catches_an_adapter_that_breaks_the_contract():
    class SwappedReturns(bos.BlokusState):
        def returns(self):
            return list(reversed(super().returns()))

    class Broken(bos.BlokusGame):
        game_name = "blokus_simple"

        def new_initial_state(self):
            return SwappedReturns(self)

    with pytest.raises(AssertionError):
        check_openspiel_game(Broken({}), seed=0)


def test_state_basics_action_strings_and_errors():
    game = pyspiel.load_game("blokus_simple")
    state = game.new_initial_state()
    env = game.core
    first = state.legal_actions()[0]
    text = state.action_to_string(first)
    assert text == render.cells_text(env.variant, env.action_cells(first))
    assert state.string_to_action(text) == first
    assert state.action_to_string(env.pass_action) == "pass"
    forbidden = next(a for a in range(env.num_actions) if a not in set(state.legal_actions()))
    with pytest.raises(bj.IllegalActionError, match="not legal"):
        state.apply_action(forbidden)
    assert state.history() == [] and state.legal_actions()[0] == first  # unchanged
    obs = np.asarray(state.observation_tensor(1)).reshape(-1)
    assert obs.size == game.observation_tensor_size() and ((obs == 0) | (obs == 1) | ((obs > 0) & (obs < 1))).all()
    assert "a b c" in str(state)
    with pytest.raises(ValueError):  # clones share the position: its arrays are read-only
        state.core_state.board[0, 0] = 1
    with pytest.raises(errors.RecordError):
        bos._replayed("simple", (env.pass_action,))  # a pass while placements exist: a corrupt serialised state


@pytest.mark.slow
def test_mcts_bot_against_the_project_mcts_agent_through_evaluate_bots():
    game = pyspiel.load_game("blokus_simple")
    rng = np.random.RandomState(0)
    theirs = mcts.MCTSBot(game, 2.0, 8, mcts.RandomRolloutEvaluator(1, rng), random_state=rng)
    ours = bos.ProjectBot("mcts:sims=4,k=4", seed=0)
    for bots in ([theirs, ours], [ours, theirs]):
        state = game.new_initial_state()
        returns = evaluate_bots.evaluate_bots(state, bots, rng)
        assert state.is_terminal() and sorted(returns) in ([-1.0, 1.0], [0.5, 0.5])
        np.testing.assert_allclose(returns, np.asarray(state.core_state.rewards))
    with pytest.raises(bj.ConfigError):
        ours.step(pyspiel.load_game("tic_tac_toe").new_initial_state())


def test_project_bot_replays_with_its_seed():
    game = pyspiel.load_game("blokus_simple")

    def play(seed):
        state = game.new_initial_state()
        evaluate_bots.evaluate_bots(state, [bos.ProjectBot("random", seed), bos.ProjectBot("greedy", seed)], None)
        return state.history()

    assert play(3) == play(3)


def test_100_random_duo_games_score_the_same_through_openspiel_and_the_core():
    game = pyspiel.load_game("blokus_duo")
    env = game.core
    rng = np.random.default_rng(0)
    histories, finals = [], []
    for _ in range(100):
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(int(rng.choice(state.legal_actions())))
        histories.append(state.history())
        finals.append((state.core_state.scores, state.returns()))
    # the core replays all 100 games at once: vmap over games, scan over moves (a finished game ignores the pad)
    length = max_game_length(env.variant)
    padded = np.full((100, length), env.pass_action, np.int32)
    for i, h in enumerate(histories):
        padded[i, : len(h)] = h

    @jax.jit
    def replay(actions):
        start = jax.tree.map(lambda x: jnp.broadcast_to(x, (100, *x.shape)), env.init())

        def move(carry, a):
            state, total = carry
            state = jax.jit(jax.vmap(env.step))(state, a)
            return (state, total + state.rewards), None

        return jax.lax.scan(move, (start, jnp.zeros((100, env.num_players))), actions.T)[0]

    core, rewards = jax.device_get(replay(padded))
    assert core.terminated.all()
    np.testing.assert_array_equal(core.step_count, [len(h) for h in histories])
    np.testing.assert_array_equal(core.scores, np.stack([s for s, _ in finals]))
    np.testing.assert_allclose(rewards, np.asarray([r for _, r in finals]))
