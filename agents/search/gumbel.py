"""Batched Gumbel MuZero search over the exact environment (mctx): the node embedding with its candidate table, the
values and signs of the paranoid two-sided reduction, the `rollout`, `network` and `mixed` evaluators and
`make_search`. The agents built on it live in `blokus_agents.search.mcts`; the design is described in
`docs/design.md`."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
from flax import struct

from blokus_agents.core.masking import MASKED_LOGIT
from blokus_agents.search.anytime import gumbel_on_the_clock
from blokus_agents.search.playouts import PlayoutPolicy, centre_move_scores, corner_move_scores
from blokus_agents.search.playouts import playout as bitboard_playout
from blokus_agents.search.settings import PLAYOUTS, VALUE_SCALE, SearchSettings, takes_settings
from blokus_jax import rules
from blokus_jax.env import Env, State
from blokus_jax.errors import VariantError

#: An evaluator: `(params, key, state, root_player) -> (logits f32[num_actions - 1], value f32)`; logits over
#: the placements (illegal entries are ignored), value from the view of the side of the player to move.
Evaluator = Callable[[Any, jax.Array, State, jax.Array], tuple[jax.Array, jax.Array]]


@struct.dataclass
class Node:
    """The embedding of one search node: the exact position, its candidate table and the root's player.

    Attributes:
        state: the game position.
        actions: `int32[k]` full action id of each candidate slot.
        valid: `bool[k]` slots that hold a legal action (slot 0 is the pass in a pass-only position).
        root_player: `int32` the player to move at the root, whose side the paranoid reduction plays.
    """

    state: State
    actions: jax.Array
    valid: jax.Array
    root_player: jax.Array


class SearchOutput(NamedTuple):
    """Result of a batched search: `action` `int32[B]` full action ids to play, `action_weights` `float32[B,
    num_actions]` the search's improved policy over full action ids (hints; computed only when used under `jit`),
    `value` `float32[B]` the root value from the mover's view, and the same improved policy in compact form, the
    training target of `blokus_agents.training.alphazero`: `candidates` `int32[B, k]` the root's candidate action ids
    and `candidate_weights` `float32[B, k]` their weights (0 on invalid slots; the pass in a pass-only position has
    weight 1)."""

    action: jax.Array
    action_weights: jax.Array
    value: jax.Array
    candidates: jax.Array
    candidate_weights: jax.Array


# ------------------------------------------------------------------------------------------------ values and signs
def root_utility(rewards: jax.Array, root_player: jax.Array) -> jax.Array:
    """`float32`: the result for the root's side in the paranoid reduction, `(r_root - max_{q != root} r_q) / 2`
    (`r_root` alone for one player); 0 for the all-zero rewards of a non-final step."""
    n = rewards.shape[-1]
    if n == 1:
        return rewards[root_player]
    others = jnp.where(jnp.arange(n) == root_player, -jnp.inf, rewards).max()
    return (rewards[root_player] - others) / 2


def egocentric_seats(values: jax.Array, player: jax.Array) -> jax.Array:
    """`values` (`f32[..., num_players]`, indexed by absolute seat, e.g. the env's final rewards) in `player`'s
    egocentric seat order: entry `i` is seat `(player + i) % num_players` (`player` itself first, then the
    next players in turn order, the order of `blokus_jax.observe.observe`'s colours whenever a player places
    its own colour). The value targets of AlphaZero's per-seat head; `absolute_seats` is its inverse."""
    n = values.shape[-1]
    return jnp.take(values, (player + jnp.arange(n)) % n, axis=-1)


def absolute_seats(values: jax.Array, player: jax.Array) -> jax.Array:
    """The inverse of `egocentric_seats`: `values` in `player`'s egocentric seat order back by absolute
    seat (entry `q` is egocentric entry `(q - player) % num_players`)."""
    n = values.shape[-1]
    return jnp.take(values, (jnp.arange(n) - player) % n, axis=-1)


def network_side_value(value: jax.Array, mover: jax.Array, root_player: jax.Array) -> jax.Array:
    """`float32`: a value head's output for a position whose player to move is `mover`, as the value of the
    mover's side in the paranoid reduction of the search rooted at `root_player`. A scalar `value` (two
    players, or a head that predicts the mover's result) is that value as it is; a per-seat `value`
    (`f32[num_players]`, `mover`'s egocentric order) is `root_utility` of it in absolute seats, signed for
    the mover's side (`side_sign`).

    Args:
        value: The value head's output: a scalar, or `f32[num_players]` in `mover`'s egocentric order.
        mover: The player to move in the position.
        root_player: The player to move at the search's root.

    Returns:
        The value of the mover's side, a `float32` scalar.
    """
    if value.ndim == 0:
        return value
    return side_sign(mover, root_player) * root_utility(absolute_seats(value, mover), root_player)


def side_sign(player: jax.Array, root_player: jax.Array) -> jax.Array:
    """`float32`: +1 when `player` is on the root's side (is the root's player), -1 otherwise."""
    return jnp.where(player == root_player, 1.0, -1.0)


def transition_signs(state: State, child: State, root_player: jax.Array) -> tuple[jax.Array, jax.Array]:
    """`(reward, discount)` of the tree edge `state -> child` from the view of `state`'s mover: the reward is
    the final result for the mover's side when `child` ends the game (else 0); the discount is 0 into a finished
    game, +1 when the child's mover is on the same side (the same player moves again, or in the paranoid reduction
    another opponent of the root), -1 when the side to move changes.

    Args:
        state: The position of the edge's parent.
        child: The position after the edge's move.
        root_player: The player to move at the search's root.

    Returns:
        `(reward, discount)`, `float32` scalars.
    """
    mover = side_sign(state.current_player, root_player)
    reward = mover * root_utility(child.rewards, root_player)
    same_side = side_sign(child.current_player, root_player) == mover
    discount = jnp.where(child.terminated | child.truncated, 0.0, jnp.where(same_side, 1.0, -1.0))
    return reward, discount


# ------------------------------------------------------------------------------------------------------ candidates
def top_candidates(env: Env, k: int, key: jax.Array, state: State, logits: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The `k` legal placements with the largest `logits`. Legality comes from the state's mask alone: NaN or
    infinite logits rank lowest or highest among the legal placements but never make a legal placement invalid or
    an illegal one valid.

    Args:
        env: The environment.
        k: Candidates returned, at most the variant's placements.
        key: The PRNG key that breaks ties at random.
        state: One unbatched position.
        logits: Scores of the placements, `f32[num_actions - 1]`.

    Returns:
        `(actions int32[k], valid bool[k])`. When nothing can be placed (or the game is over), slot 0 is the pass
        and the only valid slot.
    """
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
    """`logits` with NaN mapped to `-LOGIT_BOUND` and everything clipped to `[-LOGIT_BOUND, LOGIT_BOUND]`, so a
    diverged network or an underflowing temperature cannot turn the search's arithmetic into NaN."""
    return jnp.clip(jnp.nan_to_num(logits, nan=-LOGIT_BOUND), -LOGIT_BOUND, LOGIT_BOUND)


def finite_value(value: jax.Array) -> jax.Array:
    """A leaf value in `[-1, 1]` (the range of every result the search scores; NaN reads as 0)."""
    return jnp.clip(jnp.nan_to_num(value, nan=0.0), -1.0, 1.0)


def full_action_weights(actions: jax.Array, valid: jax.Array, weights: jax.Array, num_actions: int) -> jax.Array:
    """Map candidate `weights` back to full action ids (invalid slots dropped), the inverse of reading `full[actions]`.

    Args:
        actions: The candidates' action ids, `int32[..., k]`.
        valid: Which candidate slots are valid, `bool[..., k]`.
        weights: The candidates' weights, `f32[..., k]`.
        num_actions: The number of actions.

    Returns:
        `f32[..., num_actions]`, each action's summed weight (0 for actions not among the valid candidates).
    """
    weights = jnp.where(valid, weights, 0.0)

    def one(a, w):
        return jnp.zeros((num_actions,), w.dtype).at[a].add(w)

    flat_a, flat_w = actions.reshape(-1, actions.shape[-1]), weights.reshape(-1, weights.shape[-1])
    return jax.vmap(one)(flat_a, flat_w).reshape(*actions.shape[:-1], num_actions)


# ------------------------------------------------------------------------------------------------------ evaluators
#: The `local` playout draws a placement with probability in proportion to this base to the power of its size.
LOCAL_SIZE_BASE = 3.0
#: The `attach` playout (`local` with Pentobi's attach-point weight) also weighs a placement by this base to the
#: power of its shape's corner cells less one.
ATTACH_BASE = 1.8


def playout_value(
    env: Env,
    playouts: int = SearchSettings.playouts,
    playout: str = SearchSettings.playout,
    margin: float = 0.0,
    margin_scale: float = 10.0,
) -> Callable[[jax.Array, State, jax.Array], jax.Array]:
    """The value of the `rollout` evaluator, `(key, state, root_player) -> f32`: the mean over `playouts` games
    played to the end from the position by the `playout` policy (`"greedy"`, `"random"` or `"block"`: greedy,
    preferring placements that cover an opponent's corner cells; `"local"`: answering the opponent's last piece
    nearby, drawing pieces in proportion to `3 ** size`; `"attach"`: `local` with each piece's weight also
    multiplied by `1.8 ** (corners - 1)`, its shape's corner cells, as Pentobi weighs attach points; see
    `blokus_agents.search.playouts.playout`), each scored by `root_utility` of the env's final rewards, blended
    with weight `margin` with `tanh(score margin / margin_scale)` of the root's player against the best other (a
    denser signal than win or loss when playouts are few), and signed for the mover's side (0 for a finished
    game). Used by `rollout_evaluator` and `mixed_evaluator`.

    Args:
        env: The environment.
        playouts: Games played out from each position, at least 1.
        playout: The playout policy: `"greedy"`, `"random"`, `"block"`, `"local"` or `"attach"`.
        margin: The weight of the score-margin term in each playout's result (0: the result alone).
        margin_scale: Divides the score margin inside the `tanh`.

    Returns:
        `value(key, state, root_player) -> f32`, for one unbatched state.

    Raises:
        VariantError: An unknown playout policy, or `playouts` below 1.
    """
    if playout not in PLAYOUTS:
        raise VariantError(f"unknown playout policy {playout!r}; valid playout policies are {sorted(PLAYOUTS)}")
    if int(playouts) < 1:
        raise VariantError(f"playouts must be a positive int, got {playouts!r}")
    local = playout in ("local", "attach")
    policy = PlayoutPolicy(
        greedy=playout in ("greedy", "block"),
        block=playout == "block",
        local=local,
        size_base=LOCAL_SIZE_BASE if local else 0.0,
        attach_base=ATTACH_BASE if playout == "attach" else 0.0,
    )
    playouts, margin = int(playouts), float(margin)

    def play_out(key: jax.Array, state: State, root_player: jax.Array) -> jax.Array:
        remaining, last_mono = bitboard_playout(env.tables, key, state, policy)
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
    playouts: int = SearchSettings.playouts,
    playout: str = SearchSettings.playout,
    temperature: float = 1.0,
    margin: float = 0.0,
    margin_scale: float = 10.0,
    size_weight: float = 1.0,
    centre: float = 0.0,
) -> Evaluator:
    """The `rollout` evaluator: logits = (`corners` move scores + `centre` times the centre-approach score of
    `centre_move_scores`) / `temperature`; value = `playout_value` with these `playouts`, `playout` policy
    and `margin` blend.

    Args:
        env: The environment.
        playouts: Games played out from each leaf, at least 1.
        playout: The playout policy (see `playout_value`).
        temperature: Divides the move scores, positive.
        margin: The weight of the score-margin term in each playout's result.
        margin_scale: Divides the score margin inside the `tanh`.
        size_weight: Weight of the piece size in the `corners` score.
        centre: Weight of the centre-approach score, non-negative.

    Returns:
        An `Evaluator`, `(params, key, state, root_player) -> (logits, value)` (`params` unused).

    Raises:
        VariantError: A bad playout policy or count (see `playout_value`), a `temperature` that is not positive,
            or a negative or infinite `centre`.
    """
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
    """The `network` evaluator: `apply_fn(params, observation) -> (logits f32[num_actions], value)` (a
    `PolicyValueNet`'s `apply`; `value` a scalar or `f32[num_players]` per seat) on the mover's egocentric
    observation; logits of the placements as the prior, the value head as the
    mover's side value (`network_side_value`). Returns an `Evaluator`."""

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
    playouts: int = SearchSettings.playouts,
    playout: str = SearchSettings.playout,
    margin: float = SearchSettings.margin,
    margin_scale: float = 10.0,
) -> Evaluator:
    """The `network` evaluator whose leaf value mixes in playouts (AlphaGo's lambda): prior = the network's logits,
    value = `(1 - mix) * value head + mix * playout result`, the playout result being `playout_value` (the
    `rollout` evaluator's value, with its `margin` blend) of `playouts` games by the `playout` policy.
    `mix=0` is exactly `network_evaluator` (no playouts are run); `mix=1` values leaves by playouts alone
    under the network's prior.

    Args:
        env: The environment.
        apply_fn: The network's `apply(params, observation) -> (logits, value)` (see `network_evaluator`).
        mix: The weight of the playout result in the leaf value, in `[0, 1]`.
        playouts: Games played out from each leaf, at least 1.
        playout: The playout policy (see `playout_value`).
        margin: The weight of the score-margin term in each playout's result.
        margin_scale: Divides the score margin inside the `tanh`.

    Returns:
        An `Evaluator`, `(params, key, state, root_player) -> (logits, value)`.

    Raises:
        VariantError: A `mix` outside `[0, 1]`, or (with `mix` above 0) a bad playout policy or playout
            count (see `playout_value`).
    """
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
#: The search settings that shape the tree itself, the keyword parameters of `make_search` (the others choose its
#: evaluator).
TREE_SETTINGS = ("sims", "k", "considered", "gumbel_scale")


@takes_settings(SearchSettings(), TREE_SETTINGS)
def make_search(
    env: Env,
    evaluator: Evaluator,
    *,
    root_noise: float = 0.0,
    root_alpha: float = 0.3,
    value_scale: float = VALUE_SCALE,
    stop_after: float = 0.0,
    cap: Callable[[State], jax.Array] | None = None,
    **settings: Any,
) -> Callable[[Any, jax.Array, State], SearchOutput]:
    """A batched search `(params, key, states) -> SearchOutput` (`states` with a leading batch axis) running
    `sims` simulations of Gumbel MuZero over the top-`k` candidates of every node, with sequential halving over
    `considered` root candidates and Gumbel noise scaled by `gumbel_scale` (0: deterministic given the
    priors). `params` go to the evaluator (network weights; `None` for `rollout`).

    Gumbel noise alone cannot explore once a trained network's logits are far apart (on small boards self-play then
    collapses to one game); `root_noise` keeps every candidate's prior probability bounded below.

    Args:
        env: The environment.
        evaluator: The `Evaluator` of every node: its prior logits and value.
        root_noise: Self-play exploration, 0 to play: the root's prior becomes `(1 - root_noise) * p + root_noise
            * Dirichlet(root_alpha)` over its valid candidates, AlphaZero's root noise.
        root_alpha: The Dirichlet concentration of `root_noise`.
        value_scale: mctx's completed-Q scale (`mctx.qtransform_completed_by_mix_value`, default `VALUE_SCALE`):
            a child's Q enters the improved policy as `(50 + max visits) * value_scale * Q` (Q rescaled to [0, 1]
            among the node's children) against the prior logits, so larger values let the values overrule the
            prior after fewer visits.
        stop_after: A clock for play one game at a time, 0 to run all `sims`: the search plans its sequential
            halving for the simulations this many seconds afford (at most `sims`) and stops once they have passed
            (`blokus_agents.search.anytime`). The move then depends on the machine's speed and load.
        cap: With `stop_after`, `cap(state) -> int32` the most simulations at an unbatched state (at most `sims`,
            which then only sizes the tree): the searches of every phase of a phased budget in one program.
            `None`: `sims`.
        **settings: The search settings `TREE_SETTINGS` (`sims`, `k`, `considered`, `gumbel_scale`), each
            defaulting to `SearchSettings`' declaration.

    Returns:
        The search function, not yet compiled.

    Raises:
        VariantError: `sims`, `k` or `considered` is not positive.
    """
    import mctx  # the search library (and chex) load only when a search is built

    sims, k, considered = int(settings["sims"]), int(settings["k"]), int(settings["considered"])
    gumbel_scale = settings["gumbel_scale"]
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
            policy = mctx.gumbel_muzero_policy
            if stop_after > 0:
                caps = None if cap is None else jax.vmap(cap)(states)
                policy = functools.partial(gumbel_on_the_clock, seconds=stop_after, cap=caps)
            out = policy(
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
    """`jax.vmap(fn, in_axes)`, except that a batch of one calls `fn` directly on the unbatched arguments (then
    adds the batch axis back): the same result for the same keys, but the batch-1 search that `play` and matches
    against outside engines use avoids vmap's batched gathers and runs `lax.cond` branches as real branches."""
    vmapped = jax.vmap(fn, in_axes=in_axes)

    def call(*args):
        mapped = [a for a, axis in zip(args, in_axes) if axis is not None]
        if jax.tree_util.tree_leaves(mapped)[0].shape[0] != 1:
            return vmapped(*args)
        unbatched = [a if axis is None else jax.tree_util.tree_map(lambda x: x[0], a) for a, axis in zip(args, in_axes)]
        return jax.tree_util.tree_map(lambda x: x[None], fn(*unbatched))

    return call


def _mix_dirichlet(key: jax.Array, logits: jax.Array, valid: jax.Array, fraction: float, alpha: float) -> jax.Array:
    """Prior logits `[B, k]` whose softmax is `(1 - fraction) * softmax(logits) + fraction * Dirichlet(alpha)`
    over the `valid` slots (invalid slots stay masked)."""
    probs = jax.nn.softmax(jnp.where(valid, logits, MASKED_LOGIT), axis=-1)
    noise = jax.random.dirichlet(key, jnp.full(logits.shape, alpha))
    noise = jnp.where(valid, noise, 0.0)
    noise = noise / jnp.maximum(noise.sum(-1, keepdims=True), 1e-12)
    mixed = (1 - fraction) * probs + fraction * noise
    return jnp.where(valid, jnp.log(jnp.maximum(mixed, 1e-30)), MASKED_LOGIT)


def _single(search: Callable[[Any, jax.Array, State], SearchOutput]) -> Callable[[Any, jax.Array, State], jax.Array]:
    """`(params, key, state) -> action` for one unbatched state from a batched search."""

    def act(params, key: jax.Array, state: State) -> jax.Array:
        return search(params, key, jax.tree_util.tree_map(lambda x: x[None], state)).action[0]

    return act


__all__ = [
    "LOGIT_BOUND",
    "PLAYOUTS",
    "TREE_SETTINGS",
    "Evaluator",
    "Node",
    "SearchOutput",
    "absolute_seats",
    "egocentric_seats",
    "finite_logits",
    "finite_value",
    "full_action_weights",
    "make_search",
    "mixed_evaluator",
    "network_evaluator",
    "network_side_value",
    "playout_value",
    "rollout_evaluator",
    "root_utility",
    "side_sign",
    "top_candidates",
    "transition_signs",
]
