"""Search: legal actions on random, pass-only and near-end positions of every variant, the candidate mapping, the
fast playouts against ``Env.step``, the signs of tree edges, the winning move in solved endgames (2 and 4 players),
determinism and batching."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import FULL_BOARDS, SMALL_BOARD_VARIANTS, make_env

import blokus_jax
from blokus_agents.players.bots import greedy_bot
from blokus_agents.search import playouts
from blokus_agents.search.gumbel import (
    full_action_weights,
    make_search,
    rollout_evaluator,
    root_utility,
    top_candidates,
    transition_signs,
)
from blokus_agents.search.mcts import mcts_policy, network_search_policy
from blokus_agents.search.settings import SearchSettings
from blokus_jax import rules

#: Small search settings: compile time, not strength, is what matters here.
SMALL = {"sims": 4, "k": 4, "playouts": 1}
BATCH = 4
DEPTHS = (0, 9, 30, 60)


def random_positions(env, seed: int = 0):
    """States after ``DEPTHS`` uniformly random steps of ``BATCH`` games (so some are near the end or over), plus
    the pass-only positions met on the way, stacked into one batch."""
    step = jax.jit(jax.vmap(env.step))
    sample = jax.jit(jax.vmap(env.sample_action))
    states = jax.jit(jax.vmap(env.init))(jax.random.split(jax.random.key(seed), BATCH))
    collected, pass_only = [], []
    for t in range(max(DEPTHS) + 1):
        if t in DEPTHS:
            collected.append(states)
        mask = np.asarray(states.legal_action_mask)
        only_pass = mask[:, -1] & (mask.sum(1) == 1)
        if only_pass.any() and len(pass_only) < 2:
            pass_only.append(jax.tree.map(lambda x, m=only_pass: x[m][:1], states))
        states = step(states, sample(jax.random.split(jax.random.key(seed * 1000 + t), BATCH), states))
    return jax.tree.map(lambda *xs: jnp.concatenate(xs), *collected, *pass_only), len(pass_only)


#: Every colour and player structure: the registered small boards, and the Classic variants' structures on 8x8
#: boards (the search does not depend on the board's size; `test_search_finds_the_winning_move` keeps a full
#: board); the quick lane (``-m "not slow"``) searches the smallest one.
VARIANTS = [
    n if n == "simple" else pytest.param(n, marks=pytest.mark.slow)
    for n in (*(v for v in blokus_jax.variant_names() if v not in FULL_BOARDS), *SMALL_BOARD_VARIANTS)
]


@pytest.mark.parametrize("name", VARIANTS)
def test_search_returns_legal_actions_on_every_variant(name):
    env = make_env(name)
    states, pass_only = random_positions(env)
    assert pass_only >= 1, "random play should meet a pass-only position"
    search = jax.jit(make_search(env, rollout_evaluator(env, playouts=1), sims=4, k=4))
    out = search(None, jax.random.key(3), states)
    actions = np.asarray(out.action)
    assert actions.dtype == np.int32
    live = ~np.asarray(states.terminated | states.truncated)
    legal = np.asarray(jax.jit(jax.vmap(env.is_legal))(states, out.action))
    assert legal[live].all()
    assert (actions[~live] == env.pass_action).all()
    mask = np.asarray(states.legal_action_mask)
    only_pass = mask[:, -1] & (mask.sum(1) == 1)
    assert (actions[only_pass & live] == env.pass_action).all()
    weights = np.asarray(out.action_weights)
    np.testing.assert_allclose(weights.sum(1), 1.0, atol=1e-5)
    assert (weights[live] * ~mask[live]).sum() == 0  # visit weight only on legal actions


@pytest.fixture(scope="module")
def duo():
    env = blokus_jax.make("duo")
    states, _ = random_positions(env, seed=1)
    live = ~np.asarray(states.terminated | states.truncated)
    return env, jax.tree.map(lambda x: x[live], states)


def test_candidate_mapping_round_trip(duo):
    env, states = duo
    state = jax.tree.map(lambda x: x[1], states)
    legal = np.asarray(state.legal_action_mask[:-1])
    logits = jax.random.normal(jax.random.key(0), (env.pass_action,))
    actions, valid = top_candidates(env, 8, jax.random.key(1), state, logits)
    actions, valid = np.asarray(actions), np.asarray(valid)
    assert valid.all() and legal[actions].all() and len(set(actions.tolist())) == 8
    ranked = np.argsort(-np.where(legal, np.asarray(logits), -np.inf))[:8]
    assert set(actions.tolist()) == set(ranked.tolist())  # the top 8 legal placements by logit
    weights = jnp.arange(1.0, 9.0) / 36.0
    full = np.asarray(full_action_weights(jnp.asarray(actions), jnp.asarray(valid), weights, env.num_actions))
    np.testing.assert_allclose(full[actions], np.asarray(weights))  # full[actions] inverts the mapping
    assert full.sum() == pytest.approx(1.0) and np.count_nonzero(full) == 8

    # more slots than legal placements: the extra slots are invalid and their weights dropped
    few = int(legal.sum())
    actions, valid = top_candidates(env, few + 3, jax.random.key(1), state, logits)
    assert np.asarray(valid).sum() == few
    full = full_action_weights(actions, valid, jnp.ones(few + 3), env.num_actions)
    assert float(full.sum()) == pytest.approx(few)

    # a pass-only position: one candidate, the pass
    done = state.replace(legal_bits=jnp.zeros_like(state.legal_bits))
    actions, valid = top_candidates(env, 4, jax.random.key(1), done, logits)
    assert np.asarray(valid).tolist() == [True, False, False, False] and int(actions[0]) == env.pass_action


def test_fast_playout_plays_the_env_game(duo):
    """``playouts.playout`` makes the same moves as ``Env.step`` with ``greedy_bot`` for the same keys."""
    env, states = duo
    greedy = greedy_bot(env)

    def env_playout(key, state):
        def body(carry):
            state, key = carry
            key, sub = jax.random.split(key)
            return env.step(state, greedy(sub, state)), key

        final, _ = jax.lax.while_loop(lambda c: ~(c[0].terminated | c[0].truncated), body, (state, key))
        return final.scores

    def fast_playout(key, state):
        remaining, last_mono = playouts.playout(env.tables, key, state)
        return rules.color_scores(env.tables, remaining, last_mono)

    keys = jax.random.split(jax.random.key(5), states.board.shape[0])
    expected = jax.jit(jax.vmap(env_playout))(keys, states)
    np.testing.assert_array_equal(jax.jit(jax.vmap(fast_playout))(keys, states), expected)


@pytest.mark.slow
def test_transition_signs():
    env = blokus_jax.make("duo")
    state = env.init()
    child = env.step(state, env.sample_action(jax.random.key(0), state))
    reward, discount = transition_signs(state, child, state.current_player)
    assert (float(reward), float(discount)) == (0.0, -1.0)  # the other player moves next

    # once the opponent is out, the same player moves again: discount +1
    alone = child.replace(passed=child.passed.at[0].set(True), current_color=jnp.int32(1), current_player=jnp.int32(1))
    nxt = env.step(alone, env.sample_action(jax.random.key(1), alone))
    assert int(nxt.current_player) == 1
    assert transition_signs(alone, nxt, jnp.int32(1))[1] == 1.0
    assert transition_signs(alone, nxt, jnp.int32(0))[1] == 1.0  # root's view changes nothing

    # a finished game: discount 0, reward = the result for the mover's side
    win = jnp.asarray([1.0, -1.0])
    over = nxt.replace(terminated=jnp.bool_(True), rewards=win)
    assert [float(x) for x in transition_signs(alone.replace(current_player=jnp.int32(0)), over, 0)] == [1.0, 0.0]
    assert [float(x) for x in transition_signs(alone, over, 0)] == [-1.0, 0.0]  # player 1 moved into a loss

    # four players, paranoid: the root's player against the rest
    env4 = blokus_jax.make("classic")
    s0 = env4.init()
    s1 = env4.step(s0, env4.sample_action(jax.random.key(0), s0))
    s2 = env4.step(s1, env4.sample_action(jax.random.key(1), s1))
    assert float(transition_signs(s0, s1, 0)[1]) == -1.0  # root -> opponent
    assert float(transition_signs(s1, s2, 0)[1]) == 1.0  # opponent -> opponent: same side
    assert float(transition_signs(s1, s2, 1)[1]) == -1.0  # seen from player 1's root
    assert float(root_utility(jnp.asarray([1.0, -1.0, -1.0, -1.0]), 0)) == 1.0
    assert float(root_utility(jnp.asarray([-1.0, 1.0, -1.0, -1.0]), 0)) == -1.0
    assert float(root_utility(jnp.asarray([0.5, 0.5, -1.0, -1.0]), 0)) == 0.0
    assert float(root_utility(jnp.zeros(4), 2)) == 0.0


def _best_final_score(env, step, state, player: int, budget: list) -> int:
    """The best final score ``player`` can reach when its colour is the only one left (exhaustive, host side)."""
    if bool(state.terminated):
        return int(env.player_scores(state)[player])
    budget[0] -= 1
    if budget[0] < 0:
        raise RecursionError
    mask = np.asarray(state.legal_action_mask)
    return max(_best_final_score(env, step, step(state, int(a)), player, budget) for a in np.flatnonzero(mask))


def solved_endgame(env, seed: int):
    """A position from random play where every colour but the mover's has passed and the opponents' scores are
    set (through their unplaced pieces) so that some first moves win outright and others lose. Returns
    ``(state, winning actions, losing actions)``."""
    step = jax.jit(env.step)
    sample = jax.jit(env.sample_action)
    key = jax.random.key(seed)
    for _attempt in range(40):
        state = env.init()
        while not bool(state.terminated):
            passed = np.asarray(state.passed)
            mover = int(state.current_color)
            legal = np.flatnonzero(np.asarray(state.legal_action_mask)[:-1])
            if passed.sum() == env.num_colors - 1 and 2 <= len(legal) <= 12:
                try:
                    values = {}
                    for a in legal:
                        values[int(a)] = _best_final_score(
                            env, step, step(state, int(a)), int(state.current_player), [2000]
                        )
                except RecursionError:
                    values = {}
                distinct = sorted(set(values.values()))
                if len(distinct) >= 2 and distinct[-1] - distinct[-2] >= 2 and distinct[-1] <= 0:
                    target = distinct[-1] - 1  # opponents end between the best and the rest
                    remaining = np.asarray(state.remaining).copy()
                    sizes = env.tables.piece_sizes
                    for c in range(env.num_colors):
                        if c == mover:
                            continue
                        remaining[c] = 0
                        need = -target if c == (mover + 1) % env.num_colors else -target + 5
                        for p in np.argsort(-sizes):  # unplaced squares summing to -target
                            if 0 < sizes[p] <= need:
                                remaining[c, p] = 1
                                need -= sizes[p]
                        assert need == 0
                    remaining = jnp.asarray(remaining, jnp.int8)
                    state = state.replace(
                        remaining=remaining, scores=rules.color_scores(env.tables, remaining, state.last_was_monomino)
                    )
                    wins = [a for a, v in values.items() if v == distinct[-1]]
                    losses = [a for a, v in values.items() if v < target]
                    return state, wins, losses
            key, sub = jax.random.split(key)
            state = step(state, sample(sub, state))
    raise AssertionError("no suitable endgame found")


@pytest.mark.slow
@pytest.mark.parametrize("name", ["duo", pytest.param("classic", marks=pytest.mark.slow)])
def test_search_finds_the_winning_move(name):
    env = blokus_jax.make(name)
    state, wins, losses = solved_endgame(env, seed=0)
    assert wins and losses
    search = jax.jit(make_search(env, rollout_evaluator(env, playouts=4), sims=64, k=16))
    out = search(None, jax.random.key(0), jax.tree.map(lambda x: x[None], state))
    assert int(out.action[0]) in wins
    assert float(out.value[0]) > 0  # the mover's view: a win
    weights = np.asarray(out.action_weights[0])
    assert weights[wins].sum() > weights[losses].sum()


@pytest.mark.slow
def test_same_key_same_move_and_vmap_equals_one_by_one(duo):
    env, states = duo
    policy = jax.jit(mcts_policy(env, **SMALL))
    batched = jax.jit(jax.vmap(mcts_policy(env, **SMALL)))
    keys = jax.random.split(jax.random.key(11), states.board.shape[0])
    together = np.asarray(batched(keys, states))

    def one(i):
        return int(policy(keys[i], jax.tree.map(lambda x: x[i], states)))

    one_by_one = [one(i) for i in range(len(together))]
    assert together.tolist() == one_by_one
    again = [one(i) for i in range(len(together))]
    assert again == one_by_one


@pytest.mark.slow
def test_network_search_plays_legal_moves(duo):
    from blokus_agents.players.networks import make_network

    env, states = duo
    network = make_network(env, channels=4, blocks=0, value_hidden=8)
    params = jax.jit(network.init)(jax.random.key(0), env.observe(env.init()))
    policy = network_search_policy(env, network.apply, params, SearchSettings(sims=4, k=4))
    keys = jax.random.split(jax.random.key(3), states.board.shape[0])
    actions = jax.jit(jax.vmap(policy))(keys, states)
    assert np.asarray(jax.jit(jax.vmap(env.is_legal))(states, actions)).all()


@pytest.mark.slow
def test_value_scale_sets_how_soon_values_overrule_the_prior():
    """A prior that strongly favours a losing move: with a large ``value_scale`` the search's values overrule it
    and it plays a winning move; with a tiny one the prior decides and it plays the losing move."""
    env = blokus_jax.make("duo")
    state, wins, losses = solved_endgame(env, seed=0)
    base = rollout_evaluator(env, playouts=2)
    favourite = losses[0]

    def misleading(params, key, s, root_player):
        logits, value = base(params, key, s, root_player)
        return logits.at[favourite].add(8.0), value

    batch = jax.tree.map(lambda x: x[None], state)
    chosen = {}
    for scale in (1e-3, 100.0):
        search = jax.jit(
            make_search(env, misleading, sims=32, k=16, considered=16, gumbel_scale=0.0, value_scale=scale)
        )
        chosen[scale] = int(search(None, jax.random.key(0), batch).action[0])
    assert chosen[1e-3] == favourite
    assert chosen[100.0] in wins
