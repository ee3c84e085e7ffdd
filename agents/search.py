"""Batched Gumbel MuZero search over the exact environment (mctx), with candidate compaction.

The search is AlphaZero-style: :func:`mctx.gumbel_muzero_policy` with the *real* ``env.step`` as its recurrent
function, so there is no learned dynamics model and every position in the tree is an exact game state. An
*evaluator* supplies, for any position, prior logits over the placements and a value:

=========== =====================================================================================================
``rollout``  prior = the ``corners`` move score (plus ``centre`` times the approach to the board's centre, 0 by
             default) divided by ``temperature`` (a softmax over the candidates); value = mean final result of
             ``playouts`` batched playouts to the end of the game with a fast playout policy (``greedy``: a largest
             placeable piece, random among those; or ``random``). This is the agent ``mcts``.
``network``  prior = a policy-value network's logits restricted to the candidates, value = its value head. The
             agent ``az:RUN_DIR`` plays a trained run's network this way; ``az:RUN_DIR,mix=L``
             (:func:`mixed_evaluator`) values a leaf ``(1 - L) * value head + L * playout result`` (the ``rollout``
             value).
=========== =====================================================================================================

**Candidates.** mctx sizes its tree arrays ``[batch, simulations + 1, num_actions]``; with 17,837 (Duo) or 36,401
(Classic) actions that is gigabytes and the bookkeeping dominates. Every node is therefore compacted to its top
``k`` legal placements by prior (ties broken at random): the search works over candidate slots ``0..k-1``, the
node embedding (:class:`Node`) keeps the slot-to-action table, and :func:`full_action_weights` maps the search's
visit distribution back to full action ids. Slots beyond the legal placements are invalid (masked at the root,
prior ``-1e9`` inside the tree). A pass-only position has exactly one valid candidate, the pass.

**Values and signs.** Values are from the view of the player to move. A transition from a position whose mover is
``p`` pays ``p``'s side the final result when it ends the game (a terminal child is valued by that reward and never
expanded: its value and discount are 0), and its discount is ``-1`` when the child's mover is on the other side and
``+1`` when the same side moves again (``classic_2p`` colours of one player after an opponent's pass, Duo once the
opponent is out of moves).

**Paranoid reduction (3 and 4 players).** The search treats the game as two-sided: the root's player against all
the others, who are assumed to play together against it. The result of a finished game for the root's side is
``u = (r_root - max_{q != root} r_q) / 2`` from the env's rewards (``+1`` for an outright win, ``0`` for a shared
first place, ``-1`` when someone else wins alone under ``winloss``), every other player's side gets ``-u``. For two
players this is exactly zero-sum and equals the ordinary result. The ``network`` evaluator reduces a network's
value head the same way: a per-seat head (AlphaZero with 3-4 players: every seat's expected reward in the mover's
egocentric seat order, :func:`egocentric_seats`) is turned back into absolute seats and scored by
:func:`root_utility` (:func:`network_side_value`); a scalar head (two players, or a PPO run's critic) is the mover's
side value as it is.

Everything is pure and static-shaped: :func:`mcts_policy` and :func:`network_search_policy` return ordinary arena
policies ``(key, state) -> action`` that can be jitted and vmapped, so thousands of searches run in one call.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import mctx
from flax import struct

from blokus_agents.bots import centre_move_scores, corner_move_scores
from blokus_agents.networks import MASKED_LOGIT
from blokus_agents.policies import ParamPolicy, Policy, load_network, register_agent, register_prefix, register_run_kind
from blokus_jax import rules
from blokus_jax.env import Env, State
from blokus_jax.errors import VariantError

#: An evaluator: ``(params, key, state, root_player) -> (logits f32[num_actions - 1], value f32)``; logits over
#: the placements (illegal entries are ignored), value from the view of the side of the player to move.
Evaluator = Callable[[Any, jax.Array, State, jax.Array], tuple[jax.Array, jax.Array]]

#: Playout policies of the ``rollout`` evaluator (see :func:`blokus_jax.rules.playout`).
PLAYOUTS = ("greedy", "random", "block")


@struct.dataclass
class Node:
    """The embedding of one search node: the exact position, its candidate table and the root's player.

    Attributes:
        state: the game position.
        actions: ``int32[k]`` full action id of each candidate slot.
        valid: ``bool[k]`` slots that hold a legal action (slot 0 is the pass in a pass-only position).
        root_player: ``int32`` the player to move at the root, whose side the paranoid reduction plays.
    """

    state: State
    actions: jax.Array
    valid: jax.Array
    root_player: jax.Array


class SearchOutput(NamedTuple):
    """Result of a batched search: ``action`` ``int32[B]`` full action ids to play, ``action_weights``
    ``float32[B, num_actions]`` the search's improved policy over full action ids (hints; computed only when used
    under ``jit``), ``value`` ``float32[B]`` the root value from the mover's view, and the same improved policy in
    compact form, the training target of :mod:`blokus_agents.alphazero`: ``candidates`` ``int32[B, k]`` the root's
    candidate action ids and ``candidate_weights`` ``float32[B, k]`` their weights (0 on invalid slots; the pass
    in a pass-only position has weight 1)."""

    action: jax.Array
    action_weights: jax.Array
    value: jax.Array
    candidates: jax.Array
    candidate_weights: jax.Array


# ------------------------------------------------------------------------------------------------ values and signs
def root_utility(rewards: jax.Array, root_player: jax.Array) -> jax.Array:
    """``float32``: the result for the root's side in the paranoid reduction, ``(r_root - max_{q != root} r_q) / 2``
    (``r_root`` alone for one player); 0 for the all-zero rewards of a non-final step."""
    n = rewards.shape[-1]
    if n == 1:
        return rewards[root_player]
    others = jnp.where(jnp.arange(n) == root_player, -jnp.inf, rewards).max()
    return (rewards[root_player] - others) / 2


def egocentric_seats(values: jax.Array, player: jax.Array) -> jax.Array:
    """``values`` (``f32[..., num_players]``, indexed by absolute seat, e.g. the env's final rewards) in ``player``'s
    egocentric seat order: entry ``i`` is seat ``(player + i) % num_players`` (``player`` itself first, then the
    next players in turn order, the order of :func:`blokus_jax.observe.observe`'s colours whenever a player places
    its own colour). The value targets of AlphaZero's per-seat head; :func:`absolute_seats` is its inverse."""
    n = values.shape[-1]
    return jnp.take(values, (player + jnp.arange(n)) % n, axis=-1)


def absolute_seats(values: jax.Array, player: jax.Array) -> jax.Array:
    """The inverse of :func:`egocentric_seats`: ``values`` in ``player``'s egocentric seat order back by absolute
    seat (entry ``q`` is egocentric entry ``(q - player) % num_players``)."""
    n = values.shape[-1]
    return jnp.take(values, (jnp.arange(n) - player) % n, axis=-1)


def network_side_value(value: jax.Array, mover: jax.Array, root_player: jax.Array) -> jax.Array:
    """``float32``: a value head's output for a position whose player to move is ``mover``, as the value of the
    mover's side in the paranoid reduction of the search rooted at ``root_player``. A scalar ``value`` (two
    players, or a head that predicts the mover's result) is that value as it is; a per-seat ``value``
    (``f32[num_players]``, ``mover``'s egocentric order) is :func:`root_utility` of it in absolute seats, signed for
    the mover's side (:func:`side_sign`)."""
    if value.ndim == 0:
        return value
    return side_sign(mover, root_player) * root_utility(absolute_seats(value, mover), root_player)


def side_sign(player: jax.Array, root_player: jax.Array) -> jax.Array:
    """``float32``: +1 when ``player`` is on the root's side (is the root's player), -1 otherwise."""
    return jnp.where(player == root_player, 1.0, -1.0)


def transition_signs(state: State, child: State, root_player: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``(reward, discount)`` of the tree edge ``state -> child`` from the view of ``state``'s mover: the reward is
    the final result for the mover's side when ``child`` ends the game (else 0); the discount is 0 into a finished
    game, +1 when the child's mover is on the same side (the same player moves again, or in the paranoid reduction
    another opponent of the root), -1 when the side to move changes."""
    mover = side_sign(state.current_player, root_player)
    reward = mover * root_utility(child.rewards, root_player)
    same_side = side_sign(child.current_player, root_player) == mover
    discount = jnp.where(child.terminated | child.truncated, 0.0, jnp.where(same_side, 1.0, -1.0))
    return reward, discount


# ------------------------------------------------------------------------------------------------------ candidates
def top_candidates(env: Env, k: int, key: jax.Array, state: State, logits: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The ``k`` legal placements with the largest ``logits`` (``f32[num_actions - 1]``; ties broken at random with
    ``key``) as ``(actions int32[k], valid bool[k])``. When nothing can be placed (or the game is over), slot 0 is
    the pass and the only valid slot. Legality comes from the state's mask alone: NaN or infinite logits rank
    lowest or highest among the legal placements but never make a legal placement invalid or an illegal one
    valid."""
    legal = state.legal_action_mask[: env.pass_action]
    noise = 1e-3 * jax.random.uniform(key, logits.shape)
    ranked = jnp.where(legal, finite_logits(logits) + noise, -jnp.inf)
    _, actions = jax.lax.top_k(ranked, k)
    valid = legal[actions]
    none = ~valid[0]
    actions = jnp.where(none, env.pass_action, actions).astype(jnp.int32)
    valid = jnp.where(none, jnp.arange(k) == 0, valid)
    return actions, valid


#: Bound on prior logits inside the search (a logit difference of 1e4 is already certainty).
LOGIT_BOUND = 1e4


def finite_logits(logits: jax.Array) -> jax.Array:
    """``logits`` with NaN mapped to ``-LOGIT_BOUND`` and everything clipped to ``[-LOGIT_BOUND, LOGIT_BOUND]``, so a
    diverged network or an underflowing temperature cannot turn the search's arithmetic into NaN."""
    return jnp.clip(jnp.nan_to_num(logits, nan=-LOGIT_BOUND), -LOGIT_BOUND, LOGIT_BOUND)


def finite_value(value: jax.Array) -> jax.Array:
    """A leaf value in ``[-1, 1]`` (the range of every result the search scores; NaN reads as 0)."""
    return jnp.clip(jnp.nan_to_num(value, nan=0.0), -1.0, 1.0)


def full_action_weights(actions: jax.Array, valid: jax.Array, weights: jax.Array, num_actions: int) -> jax.Array:
    """Map candidate ``weights`` (``f32[..., k]``) back to ``f32[..., num_actions]`` over full action ids (invalid
    slots dropped); the inverse of reading ``full[actions]``."""
    weights = jnp.where(valid, weights, 0.0)

    def one(a, w):
        return jnp.zeros((num_actions,), w.dtype).at[a].add(w)

    flat_a, flat_w = actions.reshape(-1, actions.shape[-1]), weights.reshape(-1, weights.shape[-1])
    return jax.vmap(one)(flat_a, flat_w).reshape(*actions.shape[:-1], num_actions)


# ------------------------------------------------------------------------------------------------------ evaluators
def playout_value(
    env: Env, playouts: int = 8, playout: str = "greedy", margin: float = 0.0, margin_scale: float = 10.0
) -> Callable[[jax.Array, State, jax.Array], jax.Array]:
    """The value of the ``rollout`` evaluator, ``(key, state, root_player) -> f32``: the mean over ``playouts`` games
    played to the end from the position by the ``playout`` policy (``"greedy"``, ``"random"`` or ``"block"``: greedy,
    preferring placements that cover an opponent's corner cells; see :func:`blokus_jax.rules.playout`), each scored
    by :func:`root_utility` of the env's final rewards, blended with weight ``margin`` with ``tanh(score margin /
    margin_scale)`` of the root's player against the best other (a denser signal than win or loss when playouts are
    few), and signed for the mover's side (0 for a finished game). Used by :func:`rollout_evaluator` and
    :func:`mixed_evaluator`."""
    if playout not in PLAYOUTS:
        raise VariantError(f"unknown playout policy {playout!r}; valid playout policies are {sorted(PLAYOUTS)}")
    if int(playouts) < 1:
        raise VariantError(f"playouts must be a positive int, got {playouts!r}")
    greedy, block = playout in ("greedy", "block"), playout == "block"
    playouts, margin = int(playouts), float(margin)

    def play_out(key: jax.Array, state: State, root_player: jax.Array) -> jax.Array:
        remaining, last_mono = rules.playout(
            env.tables,
            key,
            state.board,
            state.remaining,
            state.pieces_placed,
            state.last_was_monomino,
            state.passed,
            state.current_color,
            greedy,
            block,
        )
        # The env's own final-reward rule (winloss or score) on the playout's final scores.
        final = rules.color_scores(env.tables, remaining, last_mono)
        result = root_utility(env.final_rewards(final), root_player)
        if margin:
            player_scores = rules.player_scores(env.tables, final).astype(jnp.float32)
            best_other = jnp.where(jnp.arange(env.num_players) == root_player, -jnp.inf, player_scores).max()
            result = (1 - margin) * result + margin * jnp.tanh((player_scores[root_player] - best_other) / margin_scale)
        done = state.terminated | state.truncated
        return jnp.where(done, 0.0, result)

    def value(key: jax.Array, state: State, root_player: jax.Array) -> jax.Array:
        results = _batched(play_out, (0, None, None))(jax.random.split(key, playouts), state, root_player)
        return side_sign(state.current_player, root_player) * jnp.mean(results)

    return value


def rollout_evaluator(
    env: Env,
    playouts: int = 8,
    playout: str = "greedy",
    temperature: float = 1.0,
    margin: float = 0.0,
    margin_scale: float = 10.0,
    size_weight: float = 1.0,
    centre: float = 0.0,
) -> Evaluator:
    """The ``rollout`` evaluator: logits = (``corners`` move scores + ``centre`` times the centre-approach score of
    :func:`~blokus_agents.bots.centre_move_scores`) / ``temperature``; value = :func:`playout_value` with these
    ``playouts``, ``playout`` policy and ``margin`` blend. Returns an :data:`Evaluator`."""
    value_of = playout_value(env, playouts, playout, margin, margin_scale)
    if not float(temperature) > 0:
        raise VariantError(f"temperature must be positive, got {temperature!r}")
    if not 0.0 <= float(centre) < float("inf"):
        raise VariantError(f"centre must be a non-negative weight, got {centre!r}")
    corners = corner_move_scores(env, size_weight)
    if centre:
        towards_centre, weight = centre_move_scores(env), float(centre)

        def scores(state: State) -> jax.Array:
            return corners(state) + weight * towards_centre(state)

    else:
        scores = corners

    def evaluate(params, key: jax.Array, state: State, root_player: jax.Array) -> tuple[jax.Array, jax.Array]:
        del params
        return scores(state) / temperature, value_of(key, state, root_player)

    return evaluate


def network_evaluator(env: Env, apply_fn: Callable) -> Evaluator:
    """The ``network`` evaluator: ``apply_fn(params, observation) -> (logits f32[num_actions], value)`` (a
    :class:`~blokus_agents.networks.PolicyValueNet`'s ``apply``; ``value`` a scalar or ``f32[num_players]`` per
    seat) on the mover's egocentric observation; logits of the placements as the prior, the value head as the
    mover's side value (:func:`network_side_value`). Returns an :data:`Evaluator`."""

    def evaluate(params, key: jax.Array, state: State, root_player: jax.Array) -> tuple[jax.Array, jax.Array]:
        del key
        logits, value = apply_fn(params, env.observe(state))
        return logits[: env.pass_action], network_side_value(value, state.current_player, root_player)

    return evaluate


def mixed_evaluator(
    env: Env,
    apply_fn: Callable,
    mix: float,
    *,
    playouts: int = 8,
    playout: str = "greedy",
    margin: float = 0.5,
    margin_scale: float = 10.0,
) -> Evaluator:
    """The ``network`` evaluator whose leaf value mixes in playouts (AlphaGo's lambda): prior = the network's logits,
    value = ``(1 - mix) * value head + mix * playout result``, the playout result being :func:`playout_value` (the
    ``rollout`` evaluator's value, with its ``margin`` blend) of ``playouts`` games by the ``playout`` policy.
    ``mix=0`` is exactly :func:`network_evaluator` (no playouts are run); ``mix=1`` values leaves by playouts alone
    under the network's prior. Raises ``VariantError`` for a ``mix`` outside ``[0, 1]``. Returns an
    :data:`Evaluator`."""
    mix = float(mix)
    if not 0.0 <= mix <= 1.0:
        raise VariantError(f"mix must be a weight between 0 and 1, got {mix!r}")
    network = network_evaluator(env, apply_fn)
    if mix == 0.0:
        return network
    value_of = playout_value(env, playouts, playout, margin, margin_scale)

    def evaluate(params, key: jax.Array, state: State, root_player: jax.Array) -> tuple[jax.Array, jax.Array]:
        logits, value = network(params, key, state, root_player)
        return logits, (1 - mix) * value + mix * value_of(key, state, root_player)

    return evaluate


# ---------------------------------------------------------------------------------------------------------- search
def make_search(
    env: Env,
    evaluator: Evaluator,
    *,
    sims: int = 64,
    k: int = 32,
    considered: int = 16,
    gumbel_scale: float = 1.0,
    root_noise: float = 0.0,
    root_alpha: float = 0.3,
    value_scale: float = 0.1,
) -> Callable[[Any, jax.Array, State], SearchOutput]:
    """A batched search ``(params, key, states) -> SearchOutput`` (``states`` with a leading batch axis) running
    ``sims`` simulations of Gumbel MuZero over the top-``k`` candidates of every node, with sequential halving over
    ``considered`` root candidates and Gumbel noise scaled by ``gumbel_scale`` (0: deterministic given the
    priors). ``params`` go to the evaluator (network weights; ``None`` for ``rollout``). ``value_scale`` is mctx's
    ``completed Q`` scale (:func:`mctx.qtransform_completed_by_mix_value`, default 0.1): a child's Q enters the
    improved policy as ``(50 + max visits) * value_scale * Q`` (Q rescaled to [0, 1] among the node's children)
    against the prior logits, so larger values let the values overrule the prior after fewer visits.

    ``root_noise`` (self-play exploration, 0 to play): the root's prior becomes ``(1 - root_noise) * p + root_noise
    * Dirichlet(root_alpha)`` over its valid candidates, AlphaZero's root noise. Gumbel noise alone cannot explore
    once a trained network's logits are far apart (on small boards self-play then collapses to one game); the
    mixture keeps every candidate's prior probability bounded below."""
    sims, k, considered = int(sims), int(k), int(considered)
    qtransform = functools.partial(mctx.qtransform_completed_by_mix_value, value_scale=float(value_scale))
    if sims < 1 or k < 1 or considered < 1:
        raise VariantError(
            f"sims, k and considered must be positive ints, got sims={sims}, k={k}, considered={considered}"
        )
    k = min(k, env.pass_action)  # never more candidates than placements exist (tiny custom variants)

    def expand(params, key: jax.Array, state: State, root_player: jax.Array) -> tuple[Node, jax.Array, jax.Array]:
        """Evaluate a position: its node (candidate table), prior logits over the slots and value (0 once over)."""
        k_eval, k_top = jax.random.split(key)
        logits, value = evaluator(params, k_eval, state, root_player)
        logits = finite_logits(logits)
        actions, valid = top_candidates(env, k, k_top, state, logits)
        prior = jnp.where(valid, logits[jnp.minimum(actions, env.pass_action - 1)], MASKED_LOGIT)
        done = state.terminated | state.truncated
        return Node(state, actions, valid, root_player), prior, jnp.where(done, 0.0, finite_value(value))

    def recurrent_one(params, key: jax.Array, slot: jax.Array, node: Node):
        child = env.step(node.state, node.actions[slot])
        reward, discount = transition_signs(node.state, child, node.root_player)
        child_node, prior, value = expand(params, key, child, node.root_player)
        return mctx.RecurrentFnOutput(reward=reward, discount=discount, prior_logits=prior, value=value), child_node

    def recurrent_fn(params, key: jax.Array, slots: jax.Array, nodes: Node):
        keys = jax.random.split(key, slots.shape[0])
        return _batched(recurrent_one, (None, 0, 0, 0))(params, keys, slots, nodes)

    def search(params, key: jax.Array, states: State) -> SearchOutput:
        k_root, k_search = jax.random.split(key)
        keys = jax.random.split(k_root, states.current_player.shape[0])
        nodes, prior, value = _batched(expand, (None, 0, 0, 0))(params, keys, states, states.current_player)
        if root_noise > 0:
            prior = _mix_dirichlet(jax.random.fold_in(k_root, 1), prior, nodes.valid, root_noise, root_alpha)
        root = mctx.RootFnOutput(prior_logits=prior, value=value, embedding=nodes)

        def tree_search(_):
            out = mctx.gumbel_muzero_policy(
                params,
                k_search,
                root,
                recurrent_fn,
                num_simulations=sims,
                invalid_actions=~nodes.valid,
                max_num_considered_actions=min(considered, k),
                gumbel_scale=gumbel_scale,
                qtransform=qtransform,
            )
            return out.action, out.action_weights, out.search_tree.node_values[:, 0]

        def forced(_):  # one legal action: nothing to search
            one = jnp.zeros(nodes.valid.shape, jnp.float32).at[:, 0].set(1.0)
            return jnp.zeros(nodes.valid.shape[:1], jnp.int32), one, value

        if nodes.valid.shape[0] == 1:
            # At batch 1 (play, matches against outside engines) a forced move (a single placement, or the pass)
            # returns at once: its narrow tree would go deep and cost the most per simulation of any position.
            slot, slot_weights, root_value = jax.lax.cond(nodes.valid[0].sum() == 1, forced, tree_search, None)
        else:
            slot, slot_weights, root_value = tree_search(None)
        action = jnp.take_along_axis(nodes.actions, slot[:, None], axis=1)[:, 0]
        # Whatever the priors and values did, play a legal move: slot 0 is always valid (the top legal placement,
        # or the pass when there is none).
        legal = jax.vmap(lambda s, a: s.legal_action_mask[a])(states, action)
        action = jnp.where(legal, action, nodes.actions[:, 0])
        compact = jnp.where(nodes.valid, slot_weights, 0.0)
        weights = full_action_weights(nodes.actions, nodes.valid, compact, env.num_actions)
        return SearchOutput(action.astype(jnp.int32), weights, root_value, nodes.actions, compact)

    return search


def _batched(fn: Callable, in_axes: tuple) -> Callable:
    """``jax.vmap(fn, in_axes)``, except that a batch of one calls ``fn`` directly on the unbatched arguments (then
    adds the batch axis back): the same result for the same keys, but the batch-1 search that ``play`` and matches
    against outside engines use avoids vmap's batched gathers and runs ``lax.cond`` branches as real branches."""
    vmapped = jax.vmap(fn, in_axes=in_axes)

    def call(*args):
        mapped = [a for a, axis in zip(args, in_axes) if axis is not None]
        if jax.tree_util.tree_leaves(mapped)[0].shape[0] != 1:
            return vmapped(*args)
        unbatched = [a if axis is None else jax.tree_util.tree_map(lambda x: x[0], a) for a, axis in zip(args, in_axes)]
        return jax.tree_util.tree_map(lambda x: x[None], fn(*unbatched))

    return call


def _mix_dirichlet(key: jax.Array, logits: jax.Array, valid: jax.Array, fraction: float, alpha: float) -> jax.Array:
    """Prior logits ``[B, k]`` whose softmax is ``(1 - fraction) * softmax(logits) + fraction * Dirichlet(alpha)``
    over the ``valid`` slots (invalid slots stay masked)."""
    probs = jax.nn.softmax(jnp.where(valid, logits, MASKED_LOGIT), axis=-1)
    noise = jax.random.dirichlet(key, jnp.full(logits.shape, alpha))
    noise = jnp.where(valid, noise, 0.0)
    noise = noise / jnp.maximum(noise.sum(-1, keepdims=True), 1e-12)
    mixed = (1 - fraction) * probs + fraction * noise
    return jnp.where(valid, jnp.log(jnp.maximum(mixed, 1e-30)), MASKED_LOGIT)


def _single(search: Callable[[Any, jax.Array, State], SearchOutput]) -> Callable[[Any, jax.Array, State], jax.Array]:
    """``(params, key, state) -> action`` for one unbatched state from a batched search."""

    def act(params, key: jax.Array, state: State) -> jax.Array:
        return search(params, key, jax.tree_util.tree_map(lambda x: x[None], state)).action[0]

    return act


def mcts_policy(
    env: Env,
    *,
    sims: int = 128,
    k: int = 16,
    playouts: int = 8,
    playout: str = "greedy",
    considered: int = 16,
    temperature: float = 1.0,
    margin: float = 0.5,
    gumbel_scale: float = 0.0,
    value_scale: float = 0.1,
    centre: float = 0.0,
    seconds: float = 0.0,
) -> Policy:
    """The agent ``mcts`` (``mcts:sims=128,k=32``): Gumbel MuZero search over the exact env with the ``rollout``
    evaluator (see the module doc for the options). Returns a pure ``policy(key, state) -> int32``.

    ``seconds=S > 0`` replaces ``sims`` by a time budget: the number of simulations that one batch-1 search on this
    machine runs in at most ``S`` seconds (:func:`calibrate_sims`; the policy then plays that fixed budget, also
    batched in the arena, so a match against it costs what its moves would cost one at a time).

    Defaults chosen on Duo against ``minimax`` (see ``benchmarks/RESULTS.md``, "Search"): 128 simulations, 8 greedy
    playouts per leaf blended with the score margin, no Gumbel noise when playing."""
    evaluator = rollout_evaluator(
        env, playouts=playouts, playout=playout, temperature=temperature, margin=margin, centre=centre
    )

    built: dict[int, Callable[[jax.Array, State], jax.Array]] = {}

    def build(n: int) -> Callable[[jax.Array, State], jax.Array]:
        # One policy object per budget: the calibration's compiled search of the chosen budget is the one the caller
        # jits again (JAX shares the compilation of a function object), so a seconds= agent compiles it once.
        if n not in built:
            act = _single(
                make_search(
                    env,
                    evaluator,
                    sims=n,
                    k=k,
                    considered=considered,
                    gumbel_scale=gumbel_scale,
                    value_scale=value_scale,
                )
            )
            built[n] = lambda key, state: act(None, key, state)
        return built[n]

    if seconds:
        options = (k, playouts, playout, considered, temperature, margin, gumbel_scale, value_scale, centre)
        return build(calibrate_sims(env, build, seconds, ("mcts",) + options))
    return build(sims)


#: The most simulations a ``seconds=`` budget calibrates to (the memory estimate of such an agent assumes it).
MAX_BUDGET_SIMS = 1 << 15
#: The share of a ``seconds=`` budget that calibration aims at, leaving room for the machine's load to vary.
BUDGET_SHARE = 0.75
#: Calibrated simulation counts, by (variant, agent options, seconds, machine); calibrating costs two compilations.
_CALIBRATED: dict[tuple, int] = {}


def calibrated_sims() -> list[int]:
    """The simulation counts that the ``seconds=`` budgets calibrated so far in this process came to, oldest first
    (what a time-budgeted agent actually searched, for a match's record)."""
    return list(_CALIBRATED.values())


def _calibration_positions(env: Env) -> list[State]:
    """Positions of one random game at every phase where a search has a choice: the start (the longest playouts)
    and every few moves after it while at least two actions are legal (narrow late positions grow deep trees)."""
    step, sample = jax.jit(env.step), jax.jit(env.sample_action)
    state, positions, t = env.init(jax.random.key(0)), [], 0
    while not bool(state.terminated):
        if t % (2 * env.num_colors) == 0 and int(state.legal_action_mask.sum()) > 1:
            positions.append(state)
        state, t = step(state, sample(jax.random.key(100 + t), state)), t + 1
    return positions


def calibrate_sims(
    env: Env,
    build: Callable[[int], Callable[[jax.Array, State], jax.Array]],
    seconds: float,
    cache_key: tuple = (),
    probe: int = 32,
    max_sims: int = MAX_BUDGET_SIMS,
) -> int:
    """The simulations a batch-1 search built by ``build(sims) -> policy`` runs in ``BUDGET_SHARE * seconds`` on
    this machine, measured after compilation on positions of every phase of a game (the slowest one counts; forced
    moves return at once): a probe search of ``probe`` simulations gives the time per simulation, the budget is
    extrapolated from it, then timed and shrunk once more if it still overruns. Cached per ``cache_key``, variant,
    budget, ``probe`` and ``max_sims``. Raises ``VariantError`` for a budget that is not a positive finite number of
    seconds."""
    seconds = float(seconds)
    if not 0 < seconds <= 3600:
        raise VariantError(f"seconds must be a time budget in (0, 3600] seconds per move, got {seconds!r}")
    key = (env.variant, cache_key, seconds, probe, max_sims, jax.default_backend())
    if key in _CALIBRATED:
        return _CALIBRATED[key]
    states = _calibration_positions(env)
    target = BUDGET_SHARE * seconds

    def timed(sims: int) -> float:
        # The slowest phase of the game (the median of three calls at each position) sets the budget.
        act = jax.jit(build(sims))
        jax.block_until_ready(act(jax.random.key(1), states[0]))  # compile
        worst = 0.0
        for state in states:
            times = []
            for i in range(3):
                start = time.perf_counter()
                jax.block_until_ready(act(jax.random.key(2 + i), state))
                times.append(time.perf_counter() - start)
            worst = max(worst, sorted(times)[1])
        return worst

    per_sim = timed(probe) / probe
    sims = int(min(max_sims, max(1, target / per_sim)))
    spent = timed(sims)
    if spent > target:
        sims = int(max(1, sims * target / spent))
    _CALIBRATED[key] = sims
    return sims


def network_search_policy(
    env: Env,
    apply_fn: Callable,
    params: Any,
    *,
    sims: int = 64,
    k: int = 16,
    considered: int = 16,
    gumbel_scale: float = 0.0,
    mix: float = 0.0,
    playouts: int = 8,
    playout: str = "greedy",
    margin: float = 0.5,
    seconds: float = 0.0,
) -> ParamPolicy:
    """Gumbel MuZero search guided by a policy-value network (the ``network`` evaluator): ``apply_fn(params, obs)
    -> (logits, value)``. Returns a :class:`~blokus_agents.policies.ParamPolicy` (a policy ``(key, state) -> int32``
    whose ``params`` the arena passes into its compiled match). ``gumbel_scale=0`` plays the search's best move;
    self-play training wants ``gumbel_scale=1`` (exploration, and the policy-improvement guarantee of Gumbel
    sampling). ``mix > 0`` mixes playouts into the leaf values (:func:`mixed_evaluator` with ``playouts``,
    ``playout`` and ``margin``; unused at ``mix=0``).

    ``seconds=S > 0`` replaces ``sims`` by a time budget, as for :func:`mcts_policy`: the simulations one batch-1
    search with these ``params`` runs in at most ``S`` seconds on this machine (:func:`calibrate_sims`, cached per
    network architecture and options)."""
    evaluator = mixed_evaluator(env, apply_fn, mix, playouts=playouts, playout=playout, margin=margin)

    def build(n: int) -> Callable[[Any, jax.Array, State], jax.Array]:
        return _single(make_search(env, evaluator, sims=n, k=k, considered=considered, gumbel_scale=gumbel_scale))

    if seconds:
        # The cost of a simulation depends on the network's architecture (its repr names every layer size), not on
        # the values of its weights.
        network = repr(getattr(apply_fn, "__self__", apply_fn))
        options = (network, k, considered, gumbel_scale, mix, playouts, playout, margin)
        built: dict[int, Callable[[Any, jax.Array, State], jax.Array]] = {}

        def build_policy(n: int) -> Callable[[jax.Array, State], jax.Array]:
            # One search function per budget, so the calibration's compilation of the chosen one is reused.
            if n not in built:
                built[n] = build(n)
            return functools.partial(built[n], params)

        sims = calibrate_sims(env, build_policy, seconds, ("network",) + options)
        return ParamPolicy(built[sims] if sims in built else build(sims), params)
    return ParamPolicy(build(sims), params)


def az_policy(
    env: Env,
    run_dir: str,
    *,
    sims: int = 64,
    k: int = 16,
    considered: int = 16,
    gumbel_scale: float = 0.0,
    mix: float = 0.0,
    playouts: int = 8,
    playout: str = "greedy",
    margin: float = 0.5,
    seconds: float = 0.0,
) -> ParamPolicy:
    """The agent ``az:RUN_DIR`` (``az:runs/duo,sims=64``, ``az:runs/duo,mix=0.5``): the newest checkpoint of a
    training run directory played with :func:`network_search_policy` and these options (the play budget; independent
    of the ``sims`` an AlphaZero run trained with; ``mix`` the weight of ``playouts`` playout results in the leaf
    values; ``seconds=S`` a time budget a move instead of ``sims``). An AlphaZero run directory given as an agent
    plays the same way. Raises ``CheckpointError`` when the run's checkpoint is corrupt or was trained on another
    variant, and ``AgentSpecError`` when there is none."""
    from blokus_agents.checkpoint import require_agent_run

    require_agent_run(run_dir, f"az:{run_dir}")
    network, params = load_network(run_dir, env)
    return network_search_policy(
        env,
        network.apply,
        params,
        sims=sims,
        k=k,
        considered=considered,
        gumbel_scale=gumbel_scale,
        mix=mix,
        playouts=playouts,
        playout=playout,
        margin=margin,
        seconds=seconds,
    )


def _teacher_settings(env: Env, spec: str) -> dict[str, Any]:
    """Every :func:`mcts_policy` setting of a teacher spec (the spec's options over the defaults), checked as
    :func:`teacher_search` documents; raises ``AgentSpecError``."""
    import inspect

    from blokus_agents.policies import AgentSpecError, agent_options

    name, options = agent_options(spec, env)
    if name != "mcts":
        raise AgentSpecError(
            f"teacher {spec!r}: a teacher is the network-free search 'mcts' with its options (e.g. "
            f"'mcts:sims=64,playouts=4'), whose moves and visit weights the network learns from"
        )
    fixed = sorted({"k", "gumbel_scale", "seconds"} & set(options))
    if fixed:
        raise AgentSpecError(
            f"teacher {spec!r}: {', '.join(fixed)} cannot be set for a teacher: the run's k sizes its stored "
            f"targets, its gumbel_scale and root_noise explore, and a time budget would make training depend on the "
            f"machine (give sims)"
        )
    defaults = {n: p.default for n, p in inspect.signature(mcts_policy).parameters.items() if n != "env"}
    return {**defaults, **options}


def teacher_search(
    env: Env, spec: str, *, k: int, gumbel_scale: float, root_noise: float, root_alpha: float
) -> Callable[[Any, jax.Array, State], SearchOutput]:
    """The batched search of an AlphaZero run's ``teacher`` (an ``mcts`` agent spec, ``mcts:sims=64,playouts=4``):
    :func:`make_search` with the ``rollout`` evaluator and the spec's settings (the defaults of :func:`mcts_policy`
    for those not given), ``(params, key, states) -> SearchOutput`` like the network's search (``params`` unused).
    The run's ``k`` sizes the stored targets and its ``gumbel_scale``, ``root_noise`` and ``root_alpha`` explore, so
    the spec may not set ``k`` or ``gumbel_scale``, nor ``seconds`` (a time budget would make the run depend on the
    machine). Raises ``AgentSpecError`` for any other agent or a bad option."""
    o = _teacher_settings(env, spec)
    evaluator = rollout_evaluator(
        env,
        playouts=o["playouts"],
        playout=o["playout"],
        temperature=o["temperature"],
        margin=o["margin"],
        centre=o["centre"],
    )
    return make_search(
        env,
        evaluator,
        sims=o["sims"],
        k=k,
        considered=o["considered"],
        gumbel_scale=gumbel_scale,
        root_noise=root_noise,
        root_alpha=root_alpha,
        value_scale=o["value_scale"],
    )


def teacher_memory(env: Env, spec: str, k: int) -> int:
    """Estimated bytes of one game's teacher search (:func:`teacher_search` of ``spec`` with the run's ``k``): its
    tree and playouts, as :func:`blokus_agents.options.search_bytes` counts them but without XLA's working copies
    (a lower estimate, like the trainer's other parts). Raises ``AgentSpecError`` for a bad spec."""
    o = _teacher_settings(env, spec)
    return search_bytes(env, o["sims"], min(k, env.pass_action), o["playouts"]) // XLA_OVERHEAD


#: The search settings of the agent ``strong`` (its budget is ``seconds``), chosen by the matches of
#: ``benchmarks/RESULTS.md`` ("Search that scales"): today's default settings, except where a variant has measured
#: better ones at the same time a move (:data:`STRONG_BY_VARIANT`, :data:`STRONG_SPECS`).
STRONG = {"k": 16, "playouts": 8, "playout": "greedy", "considered": 16, "margin": 0.5, "gumbel_scale": 0.0}
#: Variant name -> the ``mcts`` settings of ``strong`` there. Duo: 64 candidates a node, 32 at the root and the centre
#: prior, the setting whose strength rises with its simulations, which beat :data:`STRONG` at the same 2 s a move.
#: Classic (4 players): the same 64 and 32 candidates (the centre prior was not measured there), which beat the
#: default settings at 2 s a move where :data:`STRONG` with the same budget did not.
STRONG_BY_VARIANT = {
    "duo": {**STRONG, "k": 64, "considered": 32, "centre": 1.0},
    "classic": {**STRONG, "k": 64, "considered": 32},
}
#: Variant name -> an agent spec that ``strong`` plays there instead of ``mcts``, with ``strong``'s time budget
#: added (``seconds=S``): a shipped network guiding the search where that beat the network-free search at the same
#: time a move. Duo: ``baseline:duo`` (its network's prior and half its value head, half 8 greedy playouts) over 64
#: candidates a node, 32 at the root.
STRONG_SPECS = {"duo": "baseline:duo,k=64,considered=32"}


def strong_settings(env: Env) -> dict[str, Any]:
    """The :func:`mcts_policy` settings of the agent ``strong`` on ``env``'s variant (budget aside) where it plays
    ``mcts``; a fresh dict, so a caller that edits it does not change ``strong`` for the rest of the process."""
    return dict(STRONG_BY_VARIANT.get(env.variant.name, STRONG))


def strong_spec(env: Env, seconds: float = 2.0) -> str:
    """The agent spec that ``strong:seconds=S`` plays on ``env``'s variant: :data:`STRONG_SPECS`'s with the budget
    added, else ``mcts`` with :func:`strong_settings` and the budget."""
    if env.variant.name in STRONG_SPECS:
        return f"{STRONG_SPECS[env.variant.name]},seconds={float(seconds)!r}"
    options = {**strong_settings(env), "seconds": float(seconds)}
    return "mcts:" + ",".join(f"{name}={value}" for name, value in options.items())


def strong_policy(env: Env, *, seconds: float = 2.0) -> Policy:
    """The agent ``strong`` (``strong``, ``strong:seconds=5``): the best player of the project at ``seconds`` a move
    on this machine, on every variant: the agent of :func:`strong_spec` (on Duo the shipped network's search, else
    :func:`mcts_policy` with :func:`strong_settings`) with that time budget (the simulations are calibrated once per
    process, which costs two extra compilations)."""
    if env.variant.name in STRONG_SPECS:
        from blokus_agents.policies import resolve_agent

        return resolve_agent(strong_spec(env, seconds), env)
    return mcts_policy(env, seconds=seconds, **strong_settings(env))


def _strong_memory(env: Env, options: dict) -> int:
    """Estimated bytes of one game of ``strong`` with ``options`` where it plays ``mcts``; 0 where it plays an agent
    of :data:`STRONG_SPECS`, whose own estimate is checked when :func:`strong_policy` resolves it."""
    if env.variant.name in STRONG_SPECS:
        return 0
    return search_memory(env, {**strong_settings(env), **options})


# Declared options of the search agents (type and range, checked when a spec is resolved, see
# blokus_agents.options) and their memory estimate for one game (the tree of mctx, the playouts).
from blokus_agents.options import PLACEMENTS, XLA_OVERHEAD, Option, search_bytes  # noqa: E402

SEARCH_OPTIONS = {
    "sims": Option(int, 1, 10**6, doc="simulations per move"),
    "k": Option(int, 1, PLACEMENTS, doc="candidate placements per node"),
    "considered": Option(int, 1, PLACEMENTS, doc="root candidates of sequential halving"),
    "gumbel_scale": Option(float, 0.0, 100.0, doc="Gumbel noise when playing; 0 plays the search's best move"),
}
MCTS_OPTIONS = {
    **SEARCH_OPTIONS,
    "playouts": Option(int, 1, 10**4, doc="playouts per evaluated position"),
    "playout": Option(str, choices=PLAYOUTS, doc="the playout policy"),
    "temperature": Option(float, 1e-4, 1e4, doc="divides the prior's move scores; smaller values overflow float32"),
    "margin": Option(float, 0.0, 1.0, doc="weight of the score margin in the value"),
    "value_scale": Option(float, 1e-3, 100.0, doc="weight of Q against the prior in the tree (mctx's, 0.1)"),
    "centre": Option(float, 0.0, 100.0, doc="prior weight of moving towards the centre (per cell); 0: off"),
    "seconds": Option(float, 0.0, 3600.0, doc="time budget per move at batch 1 (replaces sims); 0: off"),
}
STRONG_OPTIONS = {"seconds": Option(float, 0.01, 3600.0, doc="time budget per move at batch 1")}
AZ_OPTIONS = {
    **SEARCH_OPTIONS,
    "mix": Option(float, 0.0, 1.0, doc="weight of the playout result in the leaf value; 0: the value head alone"),
    **{name: MCTS_OPTIONS[name] for name in ("playouts", "playout", "margin", "seconds")},
}


def search_memory(env: Env, options: dict) -> int:
    """Estimated bytes of one game's search with ``options`` (:func:`blokus_agents.options.search_bytes`)."""
    sims = MAX_BUDGET_SIMS if options.get("seconds") else options["sims"]
    return search_bytes(env, sims, min(options["k"], env.pass_action), options.get("playouts", 0))


register_agent("mcts", mcts_policy, options=MCTS_OPTIONS, memory=search_memory)  # "mcts", "mcts:sims=128,k=32"
register_agent(
    "strong",
    strong_policy,
    options=STRONG_OPTIONS,
    memory=_strong_memory,
)  # "strong", "strong:seconds=5"


def az_memory(env: Env, options: dict) -> int:
    """Estimated bytes of one game's ``az:`` search with ``options``: the tree, and playouts only when ``mix > 0``."""
    return search_memory(env, {**options, "playouts": options["playouts"] if options["mix"] else 0})


register_prefix("az", az_policy, options=AZ_OPTIONS, memory=az_memory)  # "az:runs/duo,sims=64", "az:runs/duo,mix=0.5"
# An AlphaZero run directory given as an agent ("runs/az") plays with its search, like "az:runs/az".
register_run_kind("alphazero", lambda run_dir, env, **options: az_policy(env, run_dir, **options))

__all__ = [
    "AZ_OPTIONS",
    "MCTS_OPTIONS",
    "PLAYOUTS",
    "SEARCH_OPTIONS",
    "STRONG",
    "STRONG_BY_VARIANT",
    "STRONG_SPECS",
    "STRONG_OPTIONS",
    "Evaluator",
    "Node",
    "SearchOutput",
    "absolute_seats",
    "az_memory",
    "az_policy",
    "calibrate_sims",
    "egocentric_seats",
    "full_action_weights",
    "make_search",
    "mcts_policy",
    "mixed_evaluator",
    "network_evaluator",
    "network_search_policy",
    "network_side_value",
    "playout_value",
    "rollout_evaluator",
    "root_utility",
    "search_memory",
    "side_sign",
    "strong_policy",
    "strong_settings",
    "strong_spec",
    "teacher_memory",
    "teacher_search",
    "top_candidates",
    "transition_signs",
]
