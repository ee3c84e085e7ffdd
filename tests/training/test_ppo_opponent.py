"""PPO against a fixed opponent (`PPOConfig.opponent`, `--opponent`): the opponent plays the seats the network
does not, the network plays seat `i % num_players` of game `i`, and only the network's own moves are learned from."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from blokus_agents.core.policies import register_agent
from blokus_agents.players.configs import PPOConfig
from blokus_agents.training.ppo import make_train
from blokus_jax.errors import ConfigError

TINY = PPOConfig(
    variant="simple", num_envs=8, num_steps=8, total_steps=8 * 8 * 2, update_epochs=1, num_minibatches=2,
    channels=8, blocks=1, value_hidden=16,
)  # fmt: skip


def _first_legal(env):
    """A deterministic opponent whose every move a test can predict: the first legal action."""
    return lambda key, state: jnp.argmax(state.legal_action_mask).astype(jnp.int32)


register_agent("test_first_legal", _first_legal, replace=True)


@pytest.fixture(scope="module")
def against_first_legal():
    trainer = make_train(TINY.replace(opponent="test_first_legal"))
    runner = trainer.init(jax.random.PRNGKey(0))
    return trainer, runner


def test_the_opponent_plays_every_seat_but_the_networks_and_the_network_plays_each_seat_in_turn(against_first_legal):
    trainer, runner = against_first_legal
    _, traj = jax.jit(trainer.rollout)(runner.params, runner.env_state, jax.random.PRNGKey(3))
    player, action, mask = (np.asarray(x) for x in (traj.player, traj.action, traj.mask))
    seat = np.arange(TINY.num_envs) % trainer.env.num_players  # the network's seat in each game
    theirs = player != seat[None, :]
    assert theirs.any() and (~theirs).any()
    # every opponent move is the opponent's (the first legal action of its position), every move legal
    np.testing.assert_array_equal(action[theirs], np.argmax(mask, axis=-1)[theirs])
    assert np.take_along_axis(mask, action[..., None], axis=-1).all()
    # the network samples its own: not the first legal action everywhere it has a choice
    chose = ~theirs & (mask.sum(-1) > 1)
    assert (action[chose] != np.argmax(mask, axis=-1)[chose]).any()
    # both seats are the network's in some games
    assert set(seat.tolist()) == set(range(trainer.env.num_players))


def test_only_the_networks_moves_are_learned_from(against_first_legal):
    trainer, runner = against_first_legal
    selfplay = make_train(TINY)
    _, against = trainer.update(runner)
    _, alone = selfplay.update(selfplay.init(jax.random.PRNGKey(0)))
    # valid steps: about half of self-play's (one seat of two), never none
    assert 0.0 < float(against["valid_fraction"]) < 0.7 * float(alone["valid_fraction"])
    assert all(np.isfinite(float(v)) for v in against.values())


def test_a_bad_opponent_is_refused_before_the_run():
    for bad, message in (
        (" minimax", "spaces around it"),
        ("mcts:seconds=1", "fixed budget"),
    ):
        with pytest.raises(ConfigError, match=message):
            TINY.replace(opponent=bad)
    with pytest.raises(ConfigError, match="PPOConfig.opponent: .*no_such_bot"):
        make_train(TINY.replace(opponent="no_such_bot"))
    assert PPOConfig.from_dict(TINY.replace(opponent="minimax").to_dict()).opponent == "minimax"
