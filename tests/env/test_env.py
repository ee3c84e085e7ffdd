"""Environment semantics on tiny hand-made variants: passes and termination, bonuses, the shared colour, rewards,
illegal actions, finished and truncated games, observations, and jit/vmap purity."""

from __future__ import annotations

import functools
from collections.abc import Callable

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import reference

import blokus_jax as bj
from blokus_jax import Piece, Variant, rules

MONO = Piece("1", ((0, 0),))
DOMINO = Piece("2", ((0, 0), (0, 1)))

#: 4x4, three colours with three monominoes each. Colour 1 starts on colour 0's only diagonal, so colour 0 is stuck
#: after its first piece, passes once and is skipped from then on; the game ends when the last colour passes.
STUCK = Variant(
    "stuck", (4, 4), 3, ((0,), (1,), (2,)), (((0, 0),), ((1, 1),), ((3, 3),)), (Piece("1", ((0, 0),), copies=3),)
)
#: The scripted STUCK game (each placement is the lowest legal action): colour, cell or None for the pass.
STUCK_SCRIPT = [
    (0, (0, 0)),
    (1, (1, 1)),
    (2, (3, 3)),
    (0, None),
    (1, (0, 2)),
    (2, (2, 2)),
    (1, (1, 3)),
    (2, (3, 1)),
    (1, None),
    (2, None),
]
#: 4x4, two colours with a monomino and a domino each (bonus rules).
PAIR = Variant("pair", (4, 4), 2, ((0,), (1,)), (((0, 0),), ((3, 3),)), (MONO, DOMINO))
#: Colour 0 places the monomino last (+20), colour 1 the domino last (+15); then both pass and the game ends.
PAIR_SCRIPT = [[(0, 0), (0, 1)], [(3, 3)], [(1, 2)], [(2, 1), (2, 2)]]
#: 8x8 with the classic_2p structure (player 0 plays colours 0 and 2, player 1 plays 1 and 3).
SMALL_2P = dict(
    board_shape=(8, 8),
    start_cells=(((0, 0),), ((0, 7),), ((7, 7),), ((7, 0),)),
    pieces=bj.standard_pieces(["1", "2"], copies=2) + bj.standard_pieces(["V3", "L4"]),
)


@functools.cache
def _compiled(variant: Variant | str, **kwargs) -> tuple[bj.Env, Callable]:
    """``(env, jitted step)`` for ``bj.make(variant, **kwargs)``, built once per module so each compiles once."""
    env = bj.make(variant, **kwargs)
    return env, jax.jit(env.step)


def _play_cells(env: bj.Env, step, moves, state: bj.State | None = None) -> list[bj.State]:
    """Step each move (a cell list, or ``None`` for the pass) and return all states, the initial one first."""
    states = [env.init() if state is None else state]
    for cells in moves:
        action = env.pass_action if cells is None else env.action_from_cells(cells)
        states.append(step(states[-1], action))
    return states


def _legal_set(env: bj.Env, state: bj.State) -> list[int]:
    return np.flatnonzero(np.asarray(state.legal_action_mask)).tolist()


@pytest.fixture(scope="module")
def stuck():
    """The STUCK env, its jitted step and the scripted game's states."""
    env, step = _compiled(STUCK)
    return env, step, _play_cells(env, step, [None if cell is None else [cell] for _, cell in STUCK_SCRIPT])


@pytest.fixture(scope="module")
def small_2p():
    """An 8x8 classic_2p-structured env, its jitted step and its jitted observe."""
    env, step = _compiled("classic_2p", **SMALL_2P)
    return env, step, jax.jit(env.observe)


# ------------------------------------------------------------------------------------------- passes, termination
def test_scripted_stuck_game_turns_and_passes(stuck):
    env, _, states = stuck
    for (color, cell), state, after in zip(STUCK_SCRIPT, states, states[1:]):
        assert int(state.current_color) == color and int(state.current_player) == color
        assert not bool(state.terminated)
        board = np.asarray(state.board)
        expected = reference.legal_placements(
            board,
            color,
            np.asarray(state.remaining[color]),
            not (board == color + 1).any(),
            STUCK.start_cells[color],
            [MONO.cells],
        )
        legal = _legal_set(env, state)
        if cell is None:
            assert expected == set() and legal == [env.pass_action]
            assert bool(env.is_legal(state, env.pass_action))
        else:
            # The script plays the lowest legal placement; the pass is not legal while a placement is.
            assert legal[0] == env.action_from_cells([cell]) and env.pass_action not in legal
            assert {frozenset([tuple(env.action_cells(a)[0])]) for a in legal} == expected
            assert not bool(env.is_legal(state, env.pass_action))
        assert int(after.step_count) == int(state.step_count) + 1
    # Colour 0 passed at step 3 and never moved again; colours 1 and 2 passed once out of pieces, and the game ended
    # on the step of the last pass (not before it, although colour 2 was already stuck).
    colors_after_pass = [int(s.current_color) for s in states[4:-1]]
    assert 0 not in colors_after_pass
    assert not any(bool(s.terminated) for s in states[:-1])
    final = states[-1]
    assert bool(final.terminated) and not bool(final.truncated)
    np.testing.assert_array_equal(final.passed, [True, True, True])
    assert int(final.step_count) == len(STUCK_SCRIPT)
    assert not np.asarray(final.legal_action_mask).any()
    np.testing.assert_array_equal(final.scores, [-2, 20, 20])
    for state in states[:-1]:
        np.testing.assert_array_equal(state.rewards, np.zeros(3, np.float32))


def test_every_colour_passes_once_before_the_game_ends():
    # One row has no diagonals: after one piece each, both colours are stuck and pass in turn; the second pass ends it.
    env = bj.make(Variant("row", (1, 5), 2, ((0,), (1,)), (((0, 0),), ((0, 4),)), (MONO, DOMINO)))
    states = _play_cells(env, jax.jit(env.step), [[(0, 0)], [(0, 4)], None, None])
    for state in states[2:4]:
        assert not bool(state.terminated) and _legal_set(env, state) == [env.pass_action]
    assert int(states[3].current_color) == 1
    final = states[-1]
    assert bool(final.terminated) and int(final.step_count) == 4
    np.testing.assert_array_equal(final.passed, [True, True])
    np.testing.assert_array_equal(final.scores, [-2, -2])
    np.testing.assert_array_equal(final.rewards, [0.5, 0.5])


def test_a_lone_stuck_colour_ends_the_game_with_its_pass():
    # The X pentomino cannot cover a corner cell, so a lone colour starting in the corner must pass at once.
    env = bj.make(Variant("blocked", (3, 3), 1, ((0,),), (((0, 0),),), bj.standard_pieces(["X"])))
    state, final = _play_cells(env, jax.jit(env.step), [None])
    assert _legal_set(env, state) == [env.pass_action] and not bool(state.terminated)
    assert bool(final.terminated) and int(final.step_count) == 1
    np.testing.assert_array_equal(final.passed, [True])
    np.testing.assert_array_equal(final.scores, [-5])
    np.testing.assert_array_equal(final.rewards, [1.0])  # a lone player is always the winner


# ----------------------------------------------------------------------------------------------- scores, rewards
@pytest.mark.parametrize("reward", ["winloss", "score"])
def test_bonus_scores_and_rewards(reward):
    env, step = _compiled(PAIR, reward=reward)
    states = _play_cells(env, step, PAIR_SCRIPT + [None, None])
    final = states[-1]
    assert bool(final.terminated) and int(final.step_count) == 6
    np.testing.assert_array_equal(states[1].scores, [-1, -3])
    np.testing.assert_array_equal(states[2].scores, [-1, -2])
    np.testing.assert_array_equal(states[3].scores, [20, -2])  # monomino last: 15 + 5
    np.testing.assert_array_equal(final.scores, [20, 15])  # domino last: 15
    np.testing.assert_array_equal(env.player_scores(final), [20, 15])
    expected = [1.0, -1.0] if reward == "winloss" else [5 / 3, -5 / 3]  # score: (mine - best other) / 3 squares
    np.testing.assert_allclose(final.rewards, expected, rtol=1e-6)
    for state in states[:-1]:
        assert not np.asarray(state.rewards).any()


def test_junior_rules_have_no_bonus():
    env = bj.make("junior", board_shape=PAIR.board_shape, start_cells=PAIR.start_cells, pieces=PAIR.pieces)
    assert not env.variant.bonus
    final = _play_cells(env, jax.jit(env.step), PAIR_SCRIPT + [None, None])[-1]
    assert bool(final.terminated)
    np.testing.assert_array_equal(final.scores, [0, 0])
    np.testing.assert_array_equal(final.rewards, [0.5, 0.5])  # a tie shares the win


def test_three_way_tie_shares_the_win_and_score_rewards(stuck):
    env, _, states = stuck
    np.testing.assert_allclose(states[-1].rewards, [-1.0, 0.5, 0.5])
    score_env, score_step = _compiled(STUCK, reward="score")
    final = _play_cells(score_env, score_step, [None if c is None else [c] for _, c in STUCK_SCRIPT])[-1]
    np.testing.assert_allclose(final.rewards, [(-2 - 20) / 3, 0.0, 0.0], rtol=1e-6)


def test_classic_3p_shared_colour_rotates_between_players():
    env = bj.make("classic_3p")

    @jax.jit
    def play(key: jax.Array):
        def body(state, key):
            action = env.sample_action(key, state)
            return env.step(state, action), (state, action)

        return jax.lax.scan(body, env.init(), jax.random.split(key, env.num_colors * (env.num_pieces + 1)))

    final, (states, actions) = jax.device_get(play(jax.random.key(3)))
    assert final.terminated
    shared_placed = 0
    for t, action in enumerate(actions):
        if states.terminated[t]:
            break
        color, player = int(states.current_color[t]), int(states.current_player[t])
        if color == 3:
            assert player == shared_placed % 3, t
            shared_placed += int(action != env.pass_action)
        else:
            assert player == color, t
    assert shared_placed >= 4
    assert int(final.pieces_placed[3]) == shared_placed
    np.testing.assert_array_equal(env.player_scores(final), np.asarray(final.scores)[:3])


# ----------------------------------------------------------------------------------- illegal and finished games
def test_illegal_actions_terminate_with_penalty_and_keep_the_board():
    env = bj.make("classic_2p", illegal_action_penalty=-2.5, **SMALL_2P)
    step = jax.jit(env.step)
    state = _play_cells(env, step, [[(0, 0)]])[-1]  # colour 1 (player 1) to move
    occupied = env.action_from_cells([(0, 0), (0, 1)])
    unreachable = env.action_from_cells([(4, 4)])
    for action in (-1, env.num_actions, 10**6, occupied, unreachable, env.pass_action):
        assert not bool(env.is_legal(state, action)), action
        after = step(state, action)
        assert bool(after.terminated) and not bool(after.truncated), action
        np.testing.assert_array_equal(after.rewards, [0.0, -2.5])
        np.testing.assert_array_equal(after.board, state.board)
        np.testing.assert_array_equal(after.remaining, state.remaining)
        np.testing.assert_array_equal(after.scores, state.scores)
        assert int(after.last_action) == action and int(after.step_count) == 2
        assert not np.asarray(after.legal_action_mask).any()
        again = step(after, env.action_from_cells([(0, 7)]))
        chex.assert_trees_all_equal(again, after.replace(rewards=jnp.zeros(2, jnp.float32)))


def test_stepping_a_finished_game_is_a_no_op(stuck):
    env, step, states = stuck
    final = states[-1]
    assert np.asarray(final.rewards).any()
    for action in (env.pass_action, 0):
        again = step(final, action)
        chex.assert_trees_all_equal(again, final.replace(rewards=jnp.zeros(3, jnp.float32)))


def test_max_steps_truncates():
    env = bj.make(STUCK, max_steps=3)
    step = jax.jit(env.step)
    states = _play_cells(env, step, [[(0, 0)], [(1, 1)], [(3, 3)]])
    assert not any(bool(s.truncated) for s in states[:-1])
    final = states[-1]
    assert bool(final.truncated) and not bool(final.terminated)
    assert not np.asarray(final.legal_action_mask).any() and not np.asarray(final.rewards).any()
    assert not bool(env.is_legal(final, env.pass_action))
    chex.assert_trees_all_equal(step(final, env.pass_action), final)


# -------------------------------------------------------------------------------------------------- observations
@pytest.mark.parametrize(
    "moves, observer, order",
    [
        (1, 1, [1, 3, 2, 0]),  # player 1 to move with colour 1: its colours first, "me, to move" at position 0
        (1, 0, [0, 2, 1, 3]),  # player 0 not to move: start from its first colour
        (2, 0, [2, 0, 3, 1]),  # player 0 to move with colour 2
        (2, 1, [1, 3, 2, 0]),
    ],
)
def test_observation_layout_and_egocentric_order(small_2p, moves, observer, order):
    env, step, observe = small_2p
    state = _play_cells(env, step, [[(0, 0), (1, 0)], [(0, 7)]][:moves])[-1]
    obs = observe(state, observer)
    rows, cols = env.board_shape
    chex.assert_shape([obs.planes, obs.pieces, obs.to_move], [(rows, cols, 8), (4, env.num_pieces), (4,)])
    chex.assert_type([obs.planes, obs.pieces, obs.to_move], jnp.float32)
    board = np.asarray(state.board)
    for i, color in enumerate(order):
        np.testing.assert_array_equal(obs.planes[..., i], board == color + 1)
        corners = np.zeros((rows, cols), bool)
        first = not (board == color + 1).any()
        for r, c in reference.contact_cells(board, color, first, env.variant.start_cells[color]):
            corners[r, c] = True
        np.testing.assert_array_equal(obs.planes[..., 4 + i], corners)
        np.testing.assert_array_equal(obs.pieces[i], np.asarray(state.remaining[color]) / [2, 2, 1, 1])
    np.testing.assert_array_equal(obs.to_move, np.asarray(order) == int(state.current_color))
    if int(state.current_player) == observer:
        chex.assert_trees_all_equal(env.observe(state), obs)


# ------------------------------------------------------------------------------------------------ jit, vmap, size
class PureFunctionTest(chex.TestCase):
    """init/step/observe/sample_action/is_legal give the same results with and without jit and under vmap."""

    @chex.variants(with_jit=True, without_jit=True)
    def test_scripted_game_matches_reference_run(self):
        env, jitted_step = _compiled(PAIR, reward="winloss")
        step = self.variant(env.step)
        sample = self.variant(env.sample_action)
        observe = self.variant(env.observe)
        states = _play_cells(env, step, PAIR_SCRIPT + [None, None], self.variant(env.init)(jax.random.key(0)))
        expected = _play_cells(env, jitted_step, PAIR_SCRIPT + [None, None])
        for got, want in zip(states, expected):
            chex.assert_trees_all_equal(got, want)
            chex.assert_trees_all_equal(observe(got, 1), env.observe(want, 1))
        key = jax.random.key(1)
        action = sample(key, states[0])
        assert bool(env.is_legal(states[0], action)) and int(action) == int(env.sample_action(key, states[0]))

    @chex.variants(with_jit=True, without_jit=True)
    def test_vmap_equals_single_games(self):
        env, jitted_step = _compiled(PAIR, reward="winloss")
        init = self.variant(jax.vmap(env.init))
        step = self.variant(jax.vmap(env.step))
        sample = self.variant(jax.vmap(env.sample_action))
        legal = self.variant(jax.vmap(env.is_legal))
        batch = init(jax.random.split(jax.random.key(0), 4))
        singles = [env.init() for _ in range(4)]
        chex.assert_trees_all_equal(batch, jax.tree.map(lambda *xs: jnp.stack(xs), *singles))
        keys = jax.random.split(jax.random.key(1), 4)
        for _ in range(3):
            keys = jax.vmap(lambda k: jax.random.split(k)[0])(keys)
            actions = sample(keys, batch)
            np.testing.assert_array_equal(legal(batch, actions), ~batch.terminated)
            batch = step(batch, actions)
            singles = [jitted_step(s, a) for s, a in zip(singles, actions)]
            chex.assert_trees_all_equal(batch, jax.tree.map(lambda *xs: jnp.stack(xs), *singles))
            chex.assert_shape(batch.legal_action_mask, (4, env.num_actions))


def test_pmap_over_local_devices_matches_jit():
    """The env also runs under ``jax.pmap``: one game per local device (1 on a plain CPU), same results as jit."""
    env, jitted_step = _compiled(PAIR, reward="winloss")
    n = jax.local_device_count()
    step, sample = jax.pmap(env.step), jax.pmap(env.sample_action)
    states = jax.pmap(env.init)(jax.random.split(jax.random.key(0), n))
    keys = jax.random.split(jax.random.key(3), n)
    for _ in range(4):
        keys = jax.vmap(lambda k: jax.random.split(k)[0])(keys)
        actions = sample(keys, states)
        stepped = step(states, actions)
        for d in range(n):
            one = jax.tree.map(lambda x: x[d], states)
            chex.assert_trees_all_equal(jax.tree.map(lambda x: x[d], stepped), jitted_step(one, actions[d]))
        states = stepped
    chex.assert_shape(states.board, (n, *env.board_shape))


def test_classic_state_is_small():
    shapes = jax.eval_shape(bj.make("classic").init)
    nbytes = sum(int(np.prod(leaf.shape)) * leaf.dtype.itemsize for leaf in jax.tree.leaves(shapes))
    assert 0 < nbytes <= 8 * 1024, nbytes


def test_placement_bits_of_the_colour_to_move_equal_the_stored_mask():
    env = bj.make("duo")
    step, sample = jax.jit(env.step), jax.jit(env.sample_action)
    bits = jax.jit(env.placement_bits)
    state, key = env.init(), jax.random.key(7)
    for _ in range(10):
        np.testing.assert_array_equal(bits(state, state.current_color), state.legal_bits)
        other = (state.current_color + 1) % env.num_colors
        assert bits(state, other).shape == state.legal_bits.shape
        key, sub = jax.random.split(key)
        state = step(state, sample(sub, state))


# ------------------------------------------------------------------------------------ action values before narrowing
@pytest.mark.parametrize(
    "action", [2**40, -(2**40), np.int64(4294976750), np.int64(-(2**32) + 9454), np.uint64(2**32 + 3), np.int64(2**31)]
)
def test_out_of_range_values_are_illegal_before_narrowing(action):
    """``np.int64(4294976750)`` wraps to the legal 9454 in int32; judged before narrowing it is out of range, so it
    is the documented illegal action: the game ends with the penalty and the board untouched (with and without jit,
    for a concrete value seen by the step)."""
    env = bj.make("duo")
    start = env.init()
    wrapped = int(np.asarray(action).astype(np.int64).astype(np.int32)) if abs(int(action)) < 2**63 else 0
    for after in (env.step(start, action), jax.jit(lambda s: env.step(s, action))(start)):
        assert bool(after.terminated), action
        np.testing.assert_array_equal(after.rewards, [-1.0, 0.0])
        np.testing.assert_array_equal(after.board, start.board)
        assert not 0 <= int(after.last_action) < env.num_actions
    assert not bool(env.is_legal(start, action))
    if 0 <= wrapped < env.num_actions and bool(start.legal_action_mask[wrapped]):
        assert not bool(env.step(start, wrapped).terminated), "the narrowed value itself is a legal move"


def test_traced_wide_dtypes_are_judged_in_their_own_dtype():
    env = bj.make("duo")
    start = env.init()
    step = jax.jit(env.step)
    for action in (np.uint32(2**32 - 1), np.uint32(2**31 + 9454), np.int16(-5)):  # out of range in any dtype
        assert bool(step(start, action).terminated), action
    legal = int(np.flatnonzero(np.asarray(start.legal_action_mask))[0])
    for dtype in (np.int16, np.uint16, np.int32, np.uint32):
        if legal <= np.iinfo(dtype).max:
            assert not bool(step(start, dtype(legal)).terminated), dtype


@pytest.mark.parametrize(
    "action",
    [
        9454.9,
        9454.0,
        np.float32(3),
        True,
        np.bool_(False),
        1 + 2j,
        "5",
        None,
        [3],
        np.array([1, 2]),
        jnp.float32(2.0),
        jnp.array([4]),
    ],
)
def test_non_integer_actions_raise_with_and_without_jit(action):
    env = bj.make("simple")
    start = env.init()
    with pytest.raises(bj.ActionTypeError, match="integer action index") as info:
        env.step(start, action)
    assert isinstance(info.value, (bj.IllegalActionError, TypeError))
    with pytest.raises(bj.ActionTypeError):
        env.is_legal(start, action)
    if isinstance(action, (float, bool, np.floating, np.bool_, np.ndarray, jax.Array)):
        with pytest.raises(bj.ActionTypeError):  # at trace time: the argument is a float/bool/array tracer
            jax.jit(env.step)(start, action)


# --------------------------------------------------------------------------------------- game core and wrappers
def test_game_step_is_the_env_step_for_legal_actions_without_bookkeeping():
    env = bj.make("simple")
    step, game_step = jax.jit(env.step), jax.jit(env.game.step)
    state, key = env.init(), jax.random.key(3)
    while not bool(state.terminated):
        key, sub = jax.random.split(key)
        action = env.sample_action(sub, state)
        expected = step(state, action)
        moved = game_step(state, action)
        bookkeeping = ("rewards", "step_count", "last_action", "truncated")
        chex.assert_trees_all_equal(moved.replace(**{k: getattr(expected, k) for k in bookkeeping}), expected)
        for k in bookkeeping:
            chex.assert_trees_all_equal(getattr(moved, k), getattr(state, k))
        state = expected


class _BatchedEnv:
    """Three games stepped together, as an env whose states have a leading batch axis."""

    def __init__(self, env: bj.Env):
        self.env = env

    def init(self, key=None):
        return jax.vmap(lambda _: self.env.init())(jnp.arange(3))

    def step(self, states, actions):
        return jax.jit(jax.vmap(self.env.step))(states, actions)


@pytest.mark.slow
def test_auto_reset_wrapper_is_generic_and_handles_leading_batch_axes():
    env = bj.make("simple")
    assert bj.AutoReset(env).num_actions == env.num_actions  # attributes pass through to the env
    wrapped = bj.AutoReset(_BatchedEnv(env))
    step = jax.jit(jax.vmap(env.step))
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(0), 3))
    key = jax.random.key(1)
    for _ in range(60):
        key, sub = jax.random.split(key)
        actions = jax.jit(jax.vmap(env.sample_action))(jax.random.split(sub, 3), states)
        batched, rewards, done = jax.jit(wrapped.step)(states, actions)  # the wrapper itself is not vmapped
        expected = jax.jit(jax.vmap(env.step_autoreset))(states, actions)
        chex.assert_trees_all_equal((batched, rewards, done), expected)
        np.testing.assert_array_equal(done, np.asarray(step(states, actions).terminated))
        states = batched
        if bool(done.any()):
            i = int(np.flatnonzero(done)[0])
            chex.assert_trees_all_equal(jax.tree.map(lambda x: x[i], states), env.init())
            return
    raise AssertionError("no game ended in 60 steps")


def test_win_shares_split_the_win_among_the_best():
    np.testing.assert_allclose(rules.win_shares(jnp.asarray([3, 7, 7, -2])), [0, 0.5, 0.5, 0])
    np.testing.assert_allclose(rules.win_shares(np.asarray([[1, 2], [4, 4], [5, 0]])), [[0, 1], [0.5, 0.5], [1, 0]])
    chex.assert_type(rules.win_shares(jnp.asarray([1, 1, 1])), jnp.float32)


def test_action_codec_on_ints_numpy_and_traced_arrays():
    env = bj.make("duo")
    t = env.tables
    actions = np.asarray([0, 1, 14, 195, 196, env.pass_action - 1])
    o, r, c = t.split_action(actions)
    for a, oo, rr, cc in zip(actions, o, r, c):
        assert t.split_action(int(a)) == (oo, rr, cc) and t.join_action(int(oo), int(rr), int(cc)) == a
    np.testing.assert_array_equal(t.join_action(o, r, c), actions)
    traced = jax.jit(lambda a: t.join_action(*t.split_action(a)))(jnp.asarray(actions, jnp.int32))
    np.testing.assert_array_equal(traced, actions)
    piece, in_piece, row, col = env.decode_action(int(actions[-1]))
    assert env.encode_action(piece, in_piece, row, col) == actions[-1]
    assert t.split_action(env.pass_action)[0] == env.num_orientations


def test_is_first_move():
    env = bj.make("duo")
    state = env.init()
    assert bool(env.is_first_move(state)) and np.asarray(rules.is_first_move(state.pieces_placed)).all()
    state = env.step(state, env.sample_action(jax.random.key(0), state))
    np.testing.assert_array_equal(rules.is_first_move(np.asarray(state.pieces_placed)), [False, True])
    assert bool(env.is_first_move(state)) and not bool(env.is_first_move(state, 0))


def test_with_x64_a_traced_int64_is_judged_before_narrowing():
    """With ``jax_enable_x64`` a jit argument keeps its int64 dtype and ``2**32 + legal`` is out of range, not the
    legal action it would wrap to. (Without x64, ``jax.jit`` narrows 64-bit arguments before any code runs; see
    ``blokus_jax.env.action_id``.) Run in a subprocess, since x64 is a process-wide switch."""
    import os
    import subprocess
    import sys

    code = (
        "import jax, numpy as np, blokus_jax as bj\n"
        "env = bj.make('simple'); s = env.init()\n"
        "legal = int(np.flatnonzero(np.asarray(s.legal_action_mask))[0])\n"
        "step = jax.jit(env.step)\n"
        "assert bool(step(s, np.int64(2**32 + legal)).terminated)\n"
        "assert not bool(step(s, np.int64(legal)).terminated)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "JAX_ENABLE_X64": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]


def test_eager_calls_run_one_compiled_program_each_and_equal_the_jitted_ones():
    """Outside `jit`, `step`, `step_autoreset`, `is_legal`, `observe` and `sample_action` each compile one program
    (the env's own jit), not one per operation; their results are those of the same calls under a user's `jit`,
    where they are traced into the caller's program."""
    # a board no other test uses, and no persistent cache: none of its programs, nor any of its operations one by
    # one, can have been compiled before
    corners = (((0, 0),), ((0, 4),), ((8, 4),), ((8, 0),))
    env = bj.make("classic_2p", board_shape=(9, 5), start_cells=corners, pieces=bj.standard_pieces(["1", "2", "V3"]))
    compiles = []

    def listen(event: str, seconds: float, **kwargs) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            compiles.append(event)

    state = env.init()
    key = jax.random.key(3)
    action = env.sample_action(key, state)  # warms the PRNG helpers, which are not the env's
    cached = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        calls = {
            "sample_action": lambda: env.sample_action(key, state),
            "is_legal": lambda: env.is_legal(state, action),
            "step": lambda: env.step(state, action),
            "step_autoreset": lambda: env.step_autoreset(state, action),
            "observe": lambda: env.observe(state),
        }
        counts = {}
        for name, call in calls.items():
            before = len(compiles)
            jax.block_until_ready(call())
            counts[name] = len(compiles) - before
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
        jax.config.update("jax_enable_compilation_cache", cached)
    assert all(n <= 1 for n in counts.values()), counts  # 0 where an earlier call compiled the same program
    jitted = jax.jit(lambda k, s, a: (env.sample_action(k, s), env.is_legal(s, a), env.step(s, a), env.observe(s)))
    for got, want in zip(
        jax.tree.leaves((env.sample_action(key, state), env.is_legal(state, action), env.step(state, action))),
        jax.tree.leaves(jitted(key, state, action)[:3]),
        strict=True,
    ):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    chex.assert_trees_all_equal(env.observe(state), jitted(key, state, action)[3])


def test_envs_built_alike_are_equal_immutable_and_share_their_tables_and_compiled_calls():
    """An `Env` holds no game state: two built with the same arguments are equal and hash alike, share the variant's
    tables, and a call outside `jit` compiled for one serves the other; any other argument makes another env."""
    a, b = bj.make("simple", max_steps=40), bj.make("simple", max_steps=40)
    assert a is not b and a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a.tables is b.tables and a.game is b.game
    for other in (bj.make("simple"), bj.make("simple", max_steps=40, reward="score"), bj.make("duo", max_steps=40)):
        assert other != a
    assert a != "simple"
    with pytest.raises(AttributeError, match="immutable"):
        a.reward = "score"
    with pytest.raises(AttributeError, match="immutable"):
        del a.max_steps
    assert a.reward == "winloss" and a.max_steps == 40

    compiled = []

    def count(event, duration, **_):
        if event == "/jax/core/compile/backend_compile_duration":
            compiled.append(event)

    jax.monitoring.register_event_duration_secs_listener(count)
    try:
        state = a.init()
        first = a.step(state, a.sample_action(jax.random.key(0), state))
        after_a = len(compiled)
        second = b.step(b.init(), b.sample_action(jax.random.key(0), b.init()))
    finally:
        jax.monitoring.unregister_event_duration_listener(count)
    assert after_a > 0 and len(compiled) == after_a  # b compiled nothing
    chex.assert_trees_all_equal(first, second)


def test_the_legal_mask_outside_jit_is_the_traced_one():
    """`State.legal_action_mask` on concrete fields (one compiled program) equals the mask traced inside `jit`, for a
    batch, one state and NumPy fields, and a finished game has nothing legal."""
    env = bj.make("simple")
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(0), 3))
    states = states.replace(terminated=jnp.asarray([False, True, False]))
    for batch in (states, jax.tree.map(lambda x: x[0], states), jax.tree.map(np.asarray, states)):
        np.testing.assert_array_equal(batch.legal_action_mask, jax.jit(lambda s: s.legal_action_mask)(batch))
    mask = np.asarray(states.legal_action_mask)
    assert not mask[1].any() and mask[0].any() and not mask[0, -1]
