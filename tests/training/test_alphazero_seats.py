"""AlphaZero with 3 and 4 players: the per-seat value head, its egocentric value targets, the paranoid value the
search reads from it, and a tiny training run whose checkpoint plays as ``az:RUN``."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import blokus_jax
from blokus_agents.core.policies import resolve_agent
from blokus_agents.players import checkpoint_read
from blokus_agents.players.configs import AZConfig, PPOConfig
from blokus_agents.players.networks import config_network, make_network
from blokus_agents.search.gumbel import (
    absolute_seats,
    egocentric_seats,
    mixed_evaluator,
    network_evaluator,
    network_side_value,
    playout_value,
)
from blokus_agents.training import checkpoint
from blokus_agents.training.alphazero import make_train
from blokus_agents.training.ppo import make_train as make_ppo
from blokus_agents.training.replay import buffer_finish, buffer_sample, buffer_write, empty_buffer
from blokus_agents.training.rundir import read_metrics
from blokus_agents.training.train import run, warm_start
from blokus_jax.errors import CheckpointError, ConfigError
from blokus_jax.pieces import standard_pieces
from blokus_jax.variants import VARIANTS

_CORNERS = (((0, 0),), ((0, 5),), ((5, 5),), ((5, 0),))


def _tiny4() -> blokus_jax.Variant:
    """Four players on a 6x6 board with three small pieces each: a game of at most 12 placements."""
    return blokus_jax.Variant("tiny4", (6, 6), 4, ((0,), (1,), (2,), (3,)), _CORNERS, standard_pieces(["1", "2", "V3"]))


def _tiny3() -> blokus_jax.Variant:
    """Three players and a shared fourth colour (as ``classic_3p``) on the same small board."""
    return blokus_jax.Variant(
        "tiny3", (6, 6), 4, ((0,), (1,), (2,)), _CORNERS, standard_pieces(["1", "2", "V3"]), shared_color=3
    )


@pytest.fixture(scope="module", autouse=True)
def tiny_variants():
    """Register the tiny variants for this module (training configs name a registered variant)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(VARIANTS, "tiny4", _tiny4)
        patch.setitem(VARIANTS, "tiny3", _tiny3)
        yield


TINY4 = dict(
    variant="tiny4",
    num_envs=2,
    num_steps=8,
    total_steps=2 * 8 * 3,
    sims=4,
    k=4,
    considered=2,
    games_per_env=3,
    batch_size=4,
    train_steps=2,
    channels=4,
    blocks=0,
    value_hidden=8,
)


# -------------------------------------------------------------------------------------------- value head sizes
def test_the_value_head_has_one_output_per_seat_for_alphazero_with_more_than_two_players_only():
    assert AZConfig.value_dim(2) == 1 and AZConfig.value_dim(3) == 3 and AZConfig.value_dim(4) == 4
    assert AZConfig.value_dim(1) == 1
    assert all(PPOConfig.value_dim(n) == 1 for n in (1, 2, 3, 4))  # PPO's critic: the mover's own result
    env = blokus_jax.make("tiny4")
    obs = jax.tree.map(lambda x: x[None], env.observe(env.init()))
    for config, shape in ((AZConfig(**TINY4), (1, 4)), (PPOConfig(variant="tiny4", channels=4, blocks=0), (1,))):
        network = config_network(config, env)
        params = jax.eval_shape(network.init, jax.random.key(0), obs)
        logits, value = jax.eval_shape(network.apply, params, obs)
        assert logits.shape == (1, env.num_actions) and value.shape == shape
    with pytest.raises(ConfigError, match="value_dim=3"):
        make_network(env, value_dim=3)


# ------------------------------------------------------------------------------------------------ value targets
def _buffer(env, slots: int = 3) -> object:
    """One env's per-seat buffer (no leading env axis) for ``env``."""
    return jax.tree.map(lambda x: x[0], empty_buffer(env, 1, slots, 3))


def _play(buf, env, movers: list[int], rewards: list[float]):
    """Write one position per mover into ``buf`` and end the game on the last one with final ``rewards``."""
    obs = env.observe(env.init())
    bits = jnp.zeros(buf.legal_bits.shape[-2:], jnp.uint32)
    for i, p in enumerate(movers):
        buf = buffer_write(buf, obs, bits, jnp.asarray([0, 1, 2]), jnp.asarray([1.0, 0, 0]), jnp.int32(p))
        last = i == len(movers) - 1
        buf = buffer_finish(buf, jnp.asarray(rewards if last else [0.0] * len(rewards)), jnp.asarray(last))
    return buf


def test_four_player_targets_are_every_seats_final_reward_in_the_movers_egocentric_order():
    env = blokus_jax.make("tiny4")
    buf = _buffer(env)
    assert buf.value.shape == (3, buf.player.shape[1], 4)
    # seats 0 and 2 run out of moves early; seat 3 moves three times in a row at the end (score rewards)
    buf = _play(buf, env, [0, 1, 2, 3, 1, 3, 3], [0.1, -0.3, 0.2, -0.5])
    mover_0 = [0.1, -0.3, 0.2, -0.5]
    mover_1 = [-0.3, 0.2, -0.5, 0.1]
    mover_2 = [0.2, -0.5, 0.1, -0.3]
    mover_3 = [-0.5, 0.1, -0.3, 0.2]
    expected = [mover_0, mover_1, mover_2, mover_3, mover_1, mover_3, mover_3]
    np.testing.assert_array_equal(buf.value[0, :7], np.asarray(expected, np.float32))
    assert int(buf.length[0]) == 7 and int(buf.games) == 1 and int(buf.t) == 0
    # the next game goes into the next slot, the first one is kept
    buf = _play(buf, env, [0, 1], [1.0, -1.0, -1.0, -1.0])
    np.testing.assert_array_equal(buf.value[1, :2], [[1, -1, -1, -1], [-1, -1, -1, 1]])
    np.testing.assert_array_equal(buf.value[0, :7], np.asarray(expected, np.float32))
    # a sample's targets are rows of the stored ones, per seat
    sample = buffer_sample(jax.random.key(0), buf, 16)
    assert sample.value.shape == (16, 4) and bool(sample.valid.all())
    stored = {tuple(v) for v in np.asarray(expected, np.float32)} | {(1, -1, -1, -1), (-1, -1, -1, 1)}
    assert {tuple(v) for v in np.asarray(sample.value)} <= stored


def test_three_player_targets_with_a_shared_colour_follow_the_seat_that_moved():
    env = blokus_jax.make("tiny3")
    buf = _buffer(env)
    assert buf.value.shape[-1] == 3
    # colours 0, 1, 2 then the shared colour placed by seat 0, then by seat 1; seat 2 wins alone
    buf = _play(buf, env, [0, 1, 2, 0, 0, 1, 2, 1], [-1.0, -1.0, 1.0])
    mover_0, mover_1, mover_2 = [-1, -1, 1], [-1, 1, -1], [1, -1, -1]
    expected = [mover_0, mover_1, mover_2, mover_0, mover_0, mover_1, mover_2, mover_1]
    np.testing.assert_array_equal(buf.value[0, :8], np.asarray(expected, np.float32))
    # a shared first place of seats 0 and 1 (winloss pays each half)
    buf = _play(buf, env, [2, 0, 1], [0.5, 0.5, -1.0])
    np.testing.assert_array_equal(buf.value[1, :3], [[-1, 0.5, 0.5], [0.5, 0.5, -1], [0.5, -1, 0.5]])


# ------------------------------------------------------------------------------- the paranoid value of a vector
def test_egocentric_and_absolute_seat_orders_are_inverse_rotations():
    values = jnp.asarray([10.0, 11.0, 12.0, 13.0])
    np.testing.assert_array_equal(egocentric_seats(values, 1), [11, 12, 13, 10])
    np.testing.assert_array_equal(egocentric_seats(values, 3), [13, 10, 11, 12])
    for p in range(4):
        np.testing.assert_array_equal(absolute_seats(egocentric_seats(values, p), p), values)
    np.testing.assert_array_equal(absolute_seats(jnp.asarray([2.0, -8.0, 5.0]), 1), [5, 2, -8])


# (num seats, mover, egocentric vector of the mover, {root: value of the mover's side}), computed by hand:
# absolute r[q] = v[(q - mover) % n]; root's result (r[root] - max_{q != root} r[q]) / 2, negated off the root's side.
HAND = [
    # absolute [0.9, -0.6, 0.3, -0.2]
    (4, 2, [0.3, -0.2, 0.9, -0.6], {2: -0.3, 0: -0.3, 1: 0.75, 3: 0.55}),
    # absolute [0.4, 0.7, -0.1, -0.9]: mover 0 is second to seat 1
    (4, 0, [0.4, 0.7, -0.1, -0.9], {0: -0.15, 1: -0.15, 2: 0.4, 3: 0.8}),
    # absolute [0.5, 0.2, -0.8]
    (3, 1, [0.2, -0.8, 0.5], {1: -0.15, 0: -0.15, 2: 0.65}),
    # absolute [-1, -1, 1]: seat 2 wins alone, and moves
    (3, 2, [1.0, -1.0, -1.0], {2: 1.0, 0: 1.0, 1: 1.0}),
]


@pytest.mark.parametrize("players, mover, vector, by_root", HAND)
def test_the_paranoid_value_of_a_per_seat_vector_matches_the_hand_computed_one(players, mover, vector, by_root):
    assert len(vector) == players and sorted(by_root) == list(range(players))
    for root, expected in by_root.items():
        got = network_side_value(jnp.asarray(vector, jnp.float32), jnp.int32(mover), jnp.int32(root))
        assert got.shape == () and float(got) == pytest.approx(expected, abs=1e-6), (root, float(got))
    # a scalar head (two players, PPO's critic) is the mover's side value as it is
    assert float(network_side_value(jnp.float32(0.25), jnp.int32(mover), jnp.int32(0))) == 0.25


def _fixed_head(vector):
    """An ``apply_fn`` whose value head returns ``vector`` and whose logits are zero."""

    def apply(params, obs):
        del params
        return jnp.zeros(obs.planes.shape[:-3] + (ACTIONS,)), jnp.asarray(vector, jnp.float32)

    return apply


ACTIONS = blokus_jax.Env(_tiny4()).num_actions


def test_the_network_and_mixed_evaluators_reduce_a_per_seat_head_for_the_root_of_the_search():
    env = blokus_jax.make("tiny4")
    state = env.init()
    for t in range(6):  # a position where seat 2 is to move
        state = env.step(state, env.sample_action(jax.random.key(t), state))
        if int(state.current_player) == 2:
            break
    assert int(state.current_player) == 2
    vector = [0.3, -0.2, 0.9, -0.6]  # the first HAND row: mover 2
    network = network_evaluator(env, _fixed_head(vector))
    for root, expected in HAND[0][3].items():
        logits, value = network(None, jax.random.key(0), state, jnp.int32(root))
        assert logits.shape == (env.pass_action,) and float(value) == pytest.approx(expected, abs=1e-6)
    # the mixed evaluator blends that reduced value with the playout result of the same side (one compilation)
    pure = mixed_evaluator(env, _fixed_head(vector), 0.0)  # mix=0: the network evaluator itself
    assert float(pure(None, jax.random.key(0), state, jnp.int32(1))[1]) == pytest.approx(0.75, abs=1e-6)
    mixed = mixed_evaluator(env, _fixed_head(vector), 0.25, playouts=2, margin=0.5)
    playout = playout_value(env, playouts=2, margin=0.5)
    both = jax.jit(lambda key, root: (mixed(None, key, state, root)[1], playout(key, state, root)))
    for root in (0, 2):
        value, played = both(jax.random.key(3), jnp.int32(root))
        want = 0.75 * HAND[0][3][root] + 0.25 * float(played)
        assert float(value) == pytest.approx(want, abs=1e-6), root


# --------------------------------------------------------------------------------- a tiny run that plays as az:
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A 4-player AlphaZero run of 3 updates through the training loop, and its metrics."""
    out = tmp_path_factory.mktemp("az4") / "run"
    config = AZConfig(**TINY4)
    summary = run(config, out, eval_every=0, progress=False, mesh=None)
    return out, config, summary


@pytest.mark.slow
def test_a_four_player_run_trains_with_finite_losses_and_per_seat_targets(tiny_run):
    out, config, summary = tiny_run
    assert summary["updates"] == config.num_updates == 3
    metrics = read_metrics(out)
    assert len(metrics) == 3
    trained = [m for m in metrics if m["valid_fraction"] > 0]
    assert trained, "no update trained on a finished game"
    for m in metrics:
        for name in ("policy_loss", "value_loss", "policy_kl", "param_norm", "root_value"):
            assert np.isfinite(m[name]), (name, m)
    assert any(m["value_loss"] > 0 for m in trained)
    # every finished game in the saved buffer: one vector of final rewards, rotated to each position's mover
    runner = checkpoint.restore(out, make_train(config))
    buf = jax.device_get(runner.buffer)
    assert buf.value.shape[-1] == 4
    finished = np.argwhere(buf.length > 0)
    assert len(finished) >= 1
    for n, slot in finished:
        length = int(buf.length[n, slot])
        players = buf.player[n, slot, :length]
        assert len(set(players.tolist())) == 4  # every seat moved
        rewards = np.asarray(absolute_seats(jnp.asarray(buf.value[n, slot, 0]), int(players[0])))
        winners = rewards[rewards != -1.0]  # winloss: -1 for a loss, the winners share 1
        assert len(winners) >= 1 and np.allclose(winners, 1 / len(winners))
        for t in range(length):
            np.testing.assert_array_equal(buf.value[n, slot, t], np.roll(rewards, -int(players[t])))


@pytest.mark.slow
def test_a_four_player_checkpoint_plays_legal_moves_as_az_run(tiny_run):
    out, _, _ = tiny_run
    env = blokus_jax.make("tiny4")
    agent = resolve_agent(f"az:{out},sims=4,k=4,considered=2", env)  # (mix=L: the evaluator test above)
    act = jax.jit(agent.fn)
    state, moves = env.init(), 0
    while not bool(state.terminated) and moves < 40:
        action = act(agent.params, jax.random.key(moves), state)
        assert bool(env.is_legal(state, action)), (moves, int(action))
        state, moves = env.step(state, action), moves + 1
    assert bool(state.terminated)


@pytest.mark.slow
def test_a_per_seat_checkpoint_with_a_scalar_value_head_is_a_clear_checkpoint_error(tiny_run, tmp_path):
    out, config, _ = tiny_run
    ppo = make_ppo(PPOConfig(variant="tiny4", num_envs=2, num_steps=4, channels=4, blocks=0, value_hidden=8))
    scalar = ppo.init(jax.random.PRNGKey(0)).params
    runner = checkpoint.restore(out, make_train(config))
    bad = tmp_path / "bad"
    checkpoint.save(bad, runner.replace(params=scalar), config)  # an AZ config with a PPO network's params
    with pytest.raises(CheckpointError, match=r"params/\S+: saved float32\[(8, )?1\], expected float32\[(8, )?4\]"):
        checkpoint_read.load_params(bad)


def test_a_ppo_run_warm_starts_a_per_seat_alphazero_run_except_its_value_output(tmp_path):
    ppo_config = PPOConfig(variant="tiny4", num_envs=2, num_steps=4, channels=4, blocks=0, value_hidden=8)
    ppo_runner = make_ppo(ppo_config).init(jax.random.PRNGKey(1))
    checkpoint.save(tmp_path / "ppo", ppo_runner, ppo_config)
    trainer = make_train(AZConfig(**TINY4))
    fresh = trainer.init(jax.random.PRNGKey(2))
    fresh_params = jax.device_get(fresh.params)
    warm = jax.device_get(warm_start(trainer, fresh, tmp_path / "ppo").params)
    source = jax.device_get(ppo_runner.params)
    flat = lambda tree: {jax.tree_util.keystr(k): v for k, v in jax.tree_util.tree_flatten_with_path(tree)[0]}  # noqa: E731
    source, fresh_params, warm = flat(source), flat(fresh_params), flat(warm)
    fresh_only = {k for k in warm if source[k].shape != warm[k].shape}
    assert len(fresh_only) == 2  # the value output layer's kernel [8, 4] and bias [4]
    for key, leaf in warm.items():
        np.testing.assert_array_equal(leaf, fresh_params[key] if key in fresh_only else source[key])
