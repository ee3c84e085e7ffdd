"""Heuristic bots: pure JAX policies `(key, state) -> action` that work under `jax.jit` and `jax.vmap`.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

from blokus_agents.core.options import PLACEMENTS, Option, lookahead_bytes
from blokus_agents.core.policies import Policy
from blokus_agents.search.playouts import (
    color_weights,
    corner_move_scores,
)
from blokus_jax import rules
from blokus_jax.env import Env, State
from blokus_jax.errors import VariantError


# ------------------------------------------------------------------------------------------------- shared helpers
def _noisy_scores(key: jax.Array, scores: jax.Array, legal: jax.Array) -> jax.Array:
    """Integer-valued `scores` plus uniform noise in `[0, 0.5)` where `legal`, `-inf` elsewhere, so an argmax
    or top-k picks a best legal entry with ties broken uniformly at random."""
    noise = 0.5 * jax.random.uniform(key, scores.shape)
    return jnp.where(legal, scores.astype(jnp.float32) + noise, -jnp.inf)


def _placement_mask(env: Env, state: State) -> jax.Array:
    """`bool[O * H * W]` legal placements of the colour to move (the mask without the pass entry)."""
    return state.legal_action_mask[: env.pass_action]


def _all_legal_bits(env: Env, state: State) -> jax.Array:
    """`uint32[C, O, H]` packed legal placements of every colour in `state` (as if it were that colour's turn)."""
    colors = jnp.arange(env.num_colors, dtype=jnp.int32)
    return jax.vmap(lambda c: env.placement_bits(state, c))(colors)


def _mobility_balance(env: Env, state: State, weights: jax.Array) -> jax.Array:
    """`int32`: legal placements of every colour, weighted by `weights` (own minus opponents')."""
    counts = jnp.sum(rules.popcount(_all_legal_bits(env, state)), axis=(1, 2))
    return jnp.sum(weights * counts).astype(jnp.int32)


# ----------------------------------------------------------------------------------------------------------- bots
def random_bot(env: Env) -> Policy:
    """The bot `random`: a uniformly random legal action.

    Args:
        env: The environment.

    Returns:
        A pure `policy(key, state) -> int32` for one unbatched state; it always plays a legal action.
    """
    return env.sample_action


def greedy_bot(env: Env) -> Policy:
    """The bot `greedy`: a largest placeable piece, chosen uniformly among all legal placements of that size
    (every piece, orientation and cell).

    Args:
        env: The environment.

    Returns:
        A pure `policy(key, state) -> int32` for one unbatched state; it always plays a legal action.
    """
    sizes = jnp.asarray(env.tables.orientation_size)
    cols = env.board_shape[1]

    def policy(key: jax.Array, state: State) -> jax.Array:
        bits = state.legal_bits
        placeable = jnp.any(bits != 0, axis=1)
        best = jnp.max(jnp.where(placeable, sizes, 0))
        return rules.sample_from_bits(key, jnp.where((sizes == best)[:, None], bits, 0), cols, env.pass_action)

    return policy


def corners_bot(env: Env, size_weight: float = 1.0) -> Policy:
    """The bot `corners`: the placement maximising the corner-balance change of `corner_scores` plus
    `size_weight` times the piece size (ties random).

    Args:
        env: The environment.
        size_weight: Weight of the piece size; an integer keeps ties exact.

    Returns:
        A pure `policy(key, state) -> int32` for one unbatched state; it always plays a legal action.
    """
    scores = corner_move_scores(env, size_weight)

    def policy(key: jax.Array, state: State) -> jax.Array:
        legal = _placement_mask(env, state)
        best = jnp.argmax(_noisy_scores(key, scores(state), legal)).astype(jnp.int32)
        return jnp.where(jnp.any(legal), best, env.pass_action)

    return policy


def _top_candidates(
    env: Env, scores: Callable[[State], jax.Array], k: int, key: jax.Array, state: State
) -> tuple[jax.Array, jax.Array]:
    """The `k` best legal placements by `scores` (ties random) and which of them exist: `(int32[k], bool[k])`.
    When nothing can be placed, candidate 0 is the pass and marked valid."""
    legal = _placement_mask(env, state)
    values, actions = jax.lax.top_k(_noisy_scores(key, scores(state), legal), k)
    valid = jnp.isfinite(values)
    none = ~jnp.any(legal)
    actions = jnp.where(none, jnp.full((k,), env.pass_action), actions).astype(jnp.int32)
    valid = jnp.where(none, jnp.arange(k) == 0, valid)
    return actions, valid


def _pick(key: jax.Array, actions: jax.Array, valid: jax.Array, values: jax.Array) -> jax.Array:
    """The valid candidate with the highest integer `values` (ties random)."""
    return actions[jnp.argmax(_noisy_scores(key, values, valid))]


def mobility_bot(env: Env, k: int = 16, size_weight: float = 1.0) -> Policy:
    """The bot `mobility`, a one-ply lookahead: among the `k` best placements by the `corners` score, play the
    one after which own legal placements minus opponents' legal placements (all colours, from the packed legal
    masks) is largest.

    Args:
        env: The environment.
        k: Candidate placements looked at, at most the variant's placements.
        size_weight: Weight of the piece size in the `corners` score.

    Returns:
        A pure `policy(key, state) -> int32` for one unbatched state; it always plays a legal action.
    """
    scores = corner_move_scores(env, size_weight)
    step = jax.vmap(env.step, in_axes=(None, 0))

    def policy(key: jax.Array, state: State) -> jax.Array:
        k_top, k_pick = jax.random.split(key)
        actions, valid = _top_candidates(env, scores, k, k_top, state)
        weights = color_weights(env, state)
        children = step(state, actions)
        balance = jax.vmap(lambda s: _mobility_balance(env, s, weights))(children)
        return _pick(k_pick, actions, valid, balance)

    return policy


def minimax_bot(env: Env, k: int = 8, depth: int = 2, score_weight: int = 4, size_weight: float = 1.0) -> Policy:
    """The bot `minimax`: a two-player minimax search over the `k` best placements by the `corners` score at
    each ply. Leaves are valued, for the player to move at the root, as `score_weight` times the score
    difference plus the legal-placement difference; a finished game is worth +-10**6 plus the score difference.

    Args:
        env: The environment.
        k: Candidate placements looked at each ply, at most the variant's placements.
        depth: Plies searched, 1 or 2.
        score_weight: Weight of the score difference at the leaves.
        size_weight: Weight of the piece size in the `corners` score.

    Returns:
        A pure `policy(key, state) -> int32` for one unbatched state; it always plays a legal action.

    Raises:
        VariantError: The variant has other than two players, or `depth` is not 1 or 2.
    """
    if env.num_players != 2:
        raise VariantError(f"minimax is a two-player bot; variant {env.variant.name!r} has {env.num_players} players")
    if depth not in (1, 2):
        raise VariantError(f"minimax depth must be 1 or 2, got {depth!r}")
    scores = corner_move_scores(env, size_weight)
    step = jax.vmap(env.step, in_axes=(None, 0))

    def leaf_value(state: State, me: jax.Array, weights: jax.Array) -> jax.Array:
        player_scores = env.player_scores(state)
        diff = player_scores[me] - player_scores[1 - me]
        result = jnp.sign(diff) * 10**6 + diff
        heuristic = score_weight * diff + _mobility_balance(env, state, weights)
        return jnp.where(state.terminated | state.truncated, result, heuristic).astype(jnp.int32)

    def policy(key: jax.Array, state: State) -> jax.Array:
        k_top, k_reply, k_pick = jax.random.split(key, 3)
        me = state.current_player
        weights = color_weights(env, state)
        actions, valid = _top_candidates(env, scores, k, k_top, state)
        children = step(state, actions)
        if depth == 1:
            values = jax.vmap(lambda s: leaf_value(s, me, weights))(children)
            return _pick(k_pick, actions, valid, values)

        def reply_value(child: State, reply_key: jax.Array) -> jax.Array:
            replies, ok = _top_candidates(env, scores, k, reply_key, child)
            leaves = jax.vmap(lambda s: leaf_value(s, me, weights))(step(child, replies))
            big = jnp.iinfo(jnp.int32).max
            best_for_me = jnp.max(jnp.where(ok, leaves, -big))
            worst_for_me = jnp.min(jnp.where(ok, leaves, big))
            value = jnp.where(child.current_player == me, best_for_me, worst_for_me)
            done = child.terminated | child.truncated
            return jnp.where(done, leaf_value(child, me, weights), value)

        values = jax.vmap(reply_value)(children, jax.random.split(k_reply, k))
        return _pick(k_pick, actions, valid, values)

    return policy


#: Bot factories by name: `BOTS[name](env, **options) -> Policy`.
BOTS: dict[str, Callable[..., Policy]] = {
    "random": random_bot,
    "greedy": greedy_bot,
    "corners": corners_bot,
    "mobility": mobility_bot,
    "minimax": minimax_bot,
}


_WEIGHT = Option(float, -100.0, 100.0, doc="weight of the piece size in the corners score")
_TOP_K = Option(int, 1, PLACEMENTS, doc="candidate placements looked at")

#: Declared options of the bots (type and range; checked by `blokus_agents.core.policies.resolve_agent` before a
#: bot is built from a spec such as `minimax:k=8`).
BOT_OPTIONS: dict[str, dict[str, Option]] = {
    "corners": {"size_weight": _WEIGHT},
    "mobility": {"k": _TOP_K, "size_weight": _WEIGHT},
    "minimax": {
        "k": _TOP_K,
        "depth": Option(int, 1, 2, doc="plies searched"),
        "score_weight": Option(int, -1000, 1000, doc="weight of the score difference at the leaves"),
        "size_weight": _WEIGHT,
    },
}

#: Memory estimates of the bots that look ahead (bytes for one game, the options filled in): `mobility` holds
#: `k` child positions, `minimax` `k + k**depth`.
BOT_MEMORY: dict[str, Callable[[Env, dict], int]] = {
    "mobility": lambda env, o: lookahead_bytes(env, min(o["k"], env.pass_action)),
    "minimax": lambda env, o: lookahead_bytes(
        env, sum(min(o["k"], env.pass_action) ** d for d in range(1, o["depth"] + 1))
    ),
}


def get_bot(name: str, env: Env, **options) -> Policy:
    """The bot `name` from `BOTS` bound to `env`, without the option checks of `resolve_agent`.

    Args:
        name: A key of `BOTS` (`"random"`, `"greedy"`, `"corners"`, `"mobility"`, `"minimax"`).
        env: The environment.
        **options: Keyword arguments of the bot's factory (e.g. `k=8`).

    Returns:
        A pure `policy(key, state) -> int32` for one unbatched state.

    Raises:
        ValueError: An unknown name (the message lists the valid bots).
        VariantError: `minimax` on a variant without two players, or a bad `depth`.
    """
    if name not in BOTS:
        raise ValueError(f"unknown bot {name!r}; valid bots are {sorted(BOTS)}")
    return BOTS[name](env, **options)
