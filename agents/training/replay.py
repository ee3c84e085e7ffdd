"""The replay ring of AlphaZero self-play: a fixed-size buffer on device (`Buffer`), the training batch drawn
from it (`Sample`) and its pure operations (write a move, finish games, sample)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from flax import struct

from blokus_agents.players.networks import value_size
from blokus_agents.search.gumbel import egocentric_seats, root_utility
from blokus_jax.env import Env
from blokus_jax.observe import Observation
from blokus_jax.rollout import max_game_length


class Buffer(struct.PyTreeNode):
    """The replay ring. Leading axes `[N, G, L]`: env, slot (`games_per_env`), position in the game
    (`max_game_length`). A slot holds one game: finished when `length > 0` (positions `0..length-1` are
    sampleable), being written or empty when `length == 0`. `games[n]` counts the games env `n` has started
    (its current slot is `games % G`) and `t[n]` the positions written of its current game.
    """

    planes: jax.Array  # bool[N, G, L, H, W, 2C] observation planes of the mover
    pieces: jax.Array  # f32[N, G, L, C, P]
    to_move: jax.Array  # f32[N, G, L, C]
    legal_bits: jax.Array  # uint32[N, G, L, O, H] packed legal placements
    candidates: jax.Array  # int32[N, G, L, k] root candidate action ids
    weights: jax.Array  # f32[N, G, L, k] search policy over the candidates
    player: jax.Array  # int32[N, G, L] seat that moved
    # value target, set when the game ends: f32[N, G, L] the final result of that seat (two players), or
    # f32[N, G, L, num_players] every seat's final reward in that seat's egocentric order (3-4 players)
    value: jax.Array
    length: jax.Array  # int32[N, G] positions of the finished game in the slot, 0 if none
    games: jax.Array  # int32[N]
    t: jax.Array  # int32[N]


class Sample(struct.PyTreeNode):
    """A training batch drawn from the buffer (leading axes `[N, b]`): observations, packed legal bits, candidate
    ids and weights, value targets and `valid` (false for a draw from an env with no finished game yet)."""

    obs: Observation
    legal_bits: jax.Array
    candidates: jax.Array
    weights: jax.Array
    value: jax.Array
    valid: jax.Array


def empty_buffer(env: Env, num_envs: int, games_per_env: int, k: int, value_dim: int | None = None) -> Buffer:
    """An empty `Buffer` for `num_envs` games of `env` with `games_per_env` slots each.

    Args:
        env: The environment.
        num_envs: Games played side by side, the buffer's leading axis.
        games_per_env: Slots of each env's ring, one game each.
        k: Candidates stored per position (the search's `k`).
        value_dim: Entries of a position's value target; default the size of AlphaZero's value head for `env`
            (`value_size` per seat); 1 stores scalar targets.

    Returns:
        The buffer, every field zero.
    """
    value_dim = value_size(env.num_players, per_seat=True) if value_dim is None else int(value_dim)
    rows, cols = env.board_shape
    colors, pieces = env.num_colors, env.num_pieces
    lead = (num_envs, games_per_env, max_game_length(env.variant))
    return Buffer(
        planes=jnp.zeros((*lead, rows, cols, 2 * colors), bool),
        pieces=jnp.zeros((*lead, colors, pieces), jnp.float32),
        to_move=jnp.zeros((*lead, colors), jnp.float32),
        legal_bits=jnp.zeros((*lead, env.num_orientations, rows), jnp.uint32),
        candidates=jnp.zeros((*lead, k), jnp.int32),
        weights=jnp.zeros((*lead, k), jnp.float32),
        player=jnp.zeros(lead, jnp.int32),
        value=jnp.zeros(lead if value_dim == 1 else (*lead, value_dim), jnp.float32),
        length=jnp.zeros(lead[:2], jnp.int32),
        games=jnp.zeros(lead[:1], jnp.int32),
        t=jnp.zeros(lead[:1], jnp.int32),
    )


def buffer_write(
    buf: Buffer,
    obs: Observation,
    legal_bits: jax.Array,
    candidates: jax.Array,
    weights: jax.Array,
    player: jax.Array,
    root_value: jax.Array | None = None,
) -> Buffer:
    """One env's buffer (no leading `N` axis; `vmap` it) with a position appended to its current game.

    Args:
        buf: One env's buffer.
        obs: The mover's observation of the position.
        legal_bits: The position's packed legal placements.
        candidates: The search's root candidate action ids, `int32[k]`.
        weights: The search policy over the candidates, `f32[k]`.
        player: The seat that moved.
        root_value: The search's root value, from the mover's view (scalar value targets only), or `None`; the
            position's value target holds it until the game ends, for `buffer_finish`'s blend.

    Returns:
        The buffer with the position written.
    """
    slot, t = buf.games % buf.length.shape[0], jnp.minimum(buf.t, buf.player.shape[1] - 1)
    if root_value is not None:
        buf = buf.replace(value=buf.value.at[slot, t].set(root_value))
    return buf.replace(
        planes=buf.planes.at[slot, t].set(obs.planes.astype(bool)),
        pieces=buf.pieces.at[slot, t].set(obs.pieces),
        to_move=buf.to_move.at[slot, t].set(obs.to_move),
        legal_bits=buf.legal_bits.at[slot, t].set(legal_bits),
        candidates=buf.candidates.at[slot, t].set(candidates),
        weights=buf.weights.at[slot, t].set(weights),
        player=buf.player.at[slot, t].set(player),
        t=t + 1,
    )


def buffer_finish(buf: Buffer, rewards: jax.Array, done: jax.Array, blend: float = 0.0) -> Buffer:
    """One env's buffer after a step with `rewards` (`f32[num_players]`) that ended its game when `done`: the
    game's positions get their value targets and become sampleable, and the next slot is cleared for the next game
    (the oldest game is dropped). Unchanged when not `done`. A scalar target (a buffer of `empty_buffer` with
    `value_dim=1`) is `root_utility(rewards, player)` of each position's mover, the result as the search values
    it; a per-seat target is `egocentric_seats(rewards, player)`, the rewards in the mover's seat order. `blend > 0`
    makes a target `(1 - blend) * result + blend * root value` of the root values `buffer_write` stored.

    Args:
        buf: One env's buffer (no leading `N` axis; `vmap` it).
        rewards: The step's rewards, `f32[num_players]`.
        done: Whether the step ended the game.
        blend: The weight of the stored root values in the targets (a Python float, scalar targets only).

    Returns:
        The buffer after the step.

    Raises:
        ValueError: `blend` is nonzero and the buffer holds per-seat value targets.
    """
    slots = buf.length.shape[0]
    slot = buf.games % slots
    target = root_utility if buf.value.ndim == 2 else egocentric_seats  # [G, L] scalar or [G, L, n] per seat
    results = jax.vmap(target, in_axes=(None, 0))(rewards, buf.player[slot])
    if blend:
        if buf.value.ndim != 2:
            raise ValueError("a root-value blend needs scalar (two-player) value targets")
        results = (1.0 - blend) * results + blend * buf.value[slot]
    value = buf.value.at[slot].set(jnp.where(done, results, buf.value[slot]))
    length = buf.length.at[slot].set(jnp.where(done, buf.t, buf.length[slot]))
    games = buf.games + done.astype(jnp.int32)
    length = length.at[games % slots].set(jnp.where(done, 0, length[games % slots]))
    return buf.replace(value=value, length=length, games=games, t=jnp.where(done, 0, buf.t))


def buffer_sample(key: jax.Array, buf: Buffer, size: int) -> Sample:
    """`size` positions drawn uniformly (with replacement) from one env's finished games (no leading `N` axis;
    `vmap` it). With no finished game yet every draw is marked invalid.

    Args:
        key: The PRNG key of the draws.
        buf: One env's buffer.
        size: Positions drawn.

    Returns:
        The `Sample` (leading axis `size`), observation planes as `float32`.
    """
    length = buf.player.shape[1]
    valid = (jnp.arange(length)[None, :] < buf.length[:, None]).reshape(-1)
    flat = jax.random.categorical(key, jnp.where(valid, 0.0, -jnp.inf), shape=(size,))
    slot, t = flat // length, flat % length
    take = lambda x: x[slot, t]  # noqa: E731
    return Sample(
        obs=Observation(
            planes=take(buf.planes).astype(jnp.float32), pieces=take(buf.pieces), to_move=take(buf.to_move)
        ),
        legal_bits=take(buf.legal_bits),
        candidates=take(buf.candidates),
        weights=take(buf.weights),
        value=take(buf.value),
        valid=valid[flat],
    )


__all__ = ["Buffer", "Sample", "buffer_finish", "buffer_sample", "buffer_write", "empty_buffer"]
