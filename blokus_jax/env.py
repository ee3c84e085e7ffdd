"""The environment: pure ``init`` / ``step`` / ``observe`` over an immutable :class:`State` pytree.

Turn structure: colours move in order ``0, 1, ..., C-1, 0, ...``. When the colour to move has no legal placement,
its only legal action is ``pass_action``; passing marks it *passed* and later turns skip it without recomputing
anything (a colour that cannot place never can again: the board only fills up). The game terminates on the step in
which the last colour passes, so every colour passes exactly once, explicitly, and a game ends with at most ``C``
forced passes. Keeping the rule this simple keeps ``step`` branch-free: no ``while_loop`` to skip stuck colours
and no need to inspect the next colour's mask before deciding termination.

Rewards (``State.rewards``, one entry per player) are zero until the terminal step. ``reward="winloss"``: the
players with the highest score share +1 (``1/k`` each on a k-way tie), everyone else gets -1. ``reward="score"``:
each player's score minus the best opposing score, divided by the squares in one player's pieces.

Illegal actions (an index that is out of range or not legal here) never corrupt the board: the game terminates,
the player to move receives ``illegal_action_penalty`` (default -1) and the others 0, as in Pgx. Use the adapters
(``blokus_jax.adapters``) for a boundary that raises :class:`~blokus_jax.errors.IllegalActionError` instead.
Stepping a finished game returns it unchanged with zero rewards.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from blokus_jax import rules
from blokus_jax.errors import VariantError
from blokus_jax.observe import Observation, observe
from blokus_jax.tables import Tables
from blokus_jax.variants import Variant, get_variant

REWARD_MODES = ("winloss", "score")


@struct.dataclass
class State:
    """One game position (an immutable pytree; add a leading axis for a batch of games).

    Attributes:
        board: ``int8[H, W]``; 0 empty, ``c + 1`` for colour ``c``.
        remaining: ``int8[C, P]`` copies of each piece each colour still has.
        current_color: ``int32`` colour to move.
        current_player: ``int32`` player to move (the owner of ``current_color``; for a shared colour, the player
            whose turn it is to place it).
        rewards: ``float32[num_players]`` reward of the step that produced this state.
        terminated: ``bool``, the game is over (or an illegal action ended it).
        truncated: ``bool``, the step limit ``max_steps`` was reached first.
        scores: ``int32[C]`` standard scores: minus unplaced squares, plus bonuses.
        step_count: ``int32`` steps taken (placements and passes).
        last_action: ``int32`` action of the previous step (-1 at the start).
        legal_bits: ``uint32[O, H]`` legal placements of ``current_color``, packed (bit ``c`` of word ``[o, r]``:
            orientation ``o`` anchored at ``(r, c)``); ``legal_action_mask`` unpacks it.
        pieces_placed: ``int32[C]`` pieces each colour has placed (0 means its next placement is its first).
    """

    board: jax.Array
    remaining: jax.Array
    current_color: jax.Array
    current_player: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    scores: jax.Array
    step_count: jax.Array
    last_action: jax.Array
    legal_bits: jax.Array
    _passed: jax.Array              # bool[C] colours that have passed (and so can never place again)
    pieces_placed: jax.Array
    _last_was_monomino: jax.Array   # bool[C]

    @property
    def legal_action_mask(self) -> jax.Array:
        """``bool[num_actions]`` legal actions of the colour to move (pass is legal exactly when nothing else is).

        Computed from the packed bitboard on access, so the state stays small; works on batched states too.
        """
        width = self.board.shape[-1]
        placements = rules.unpack_rows(self.legal_bits, width)
        flat = placements.reshape(*placements.shape[:-3], -1)
        can_pass = ~rules.has_placement(self.legal_bits)
        done = self.terminated | self.truncated
        return jnp.concatenate([flat & ~done[..., None], (can_pass & ~done)[..., None]], axis=-1)


class Env:
    """A Blokus variant as pure functions. Build one with :func:`blokus_jax.make`.

    ``init``, ``step``, ``observe``, ``sample_action`` and ``legal_action_mask`` are pure and work under
    ``jax.jit`` and ``jax.vmap``; the action codec helpers (``action_cells`` and friends) are host-side NumPy.
    """

    def __init__(self, variant: Variant, reward: str = "winloss", illegal_action_penalty: float = -1.0,
                 max_steps: int | None = None):
        if reward not in REWARD_MODES:
            raise VariantError(f"unknown reward mode {reward!r}; valid modes are {list(REWARD_MODES)}")
        if max_steps is not None and int(max_steps) < 1:
            raise VariantError(f"max_steps must be a positive int or None, got {max_steps!r}")
        self.variant = variant
        self.tables = Tables(variant)
        self.reward = reward
        self.illegal_action_penalty = float(illegal_action_penalty)
        self.max_steps = None if max_steps is None else int(max_steps)

    def __repr__(self) -> str:
        return f"Env({self.variant.name!r}, reward={self.reward!r}, num_actions={self.num_actions})"

    # ------------------------------------------------------------------------------------------------ properties
    @property
    def num_actions(self) -> int:
        """Size of the action space: ``num_orientations * H * W`` placements plus the pass."""
        return self.tables.num_actions

    @property
    def pass_action(self) -> int:
        """Index of the pass (the last action)."""
        return self.tables.pass_action

    @property
    def num_players(self) -> int:
        return self.variant.num_players

    @property
    def num_colors(self) -> int:
        return self.variant.num_colors

    @property
    def num_pieces(self) -> int:
        return self.variant.num_pieces

    @property
    def num_orientations(self) -> int:
        return self.tables.num_orientations

    @property
    def board_shape(self) -> tuple[int, int]:
        return self.variant.board_shape

    @property
    def action_shape(self) -> tuple[int, int, int]:
        """``(num_orientations, H, W)``: the placement part of the action space as a tensor."""
        return (self.num_orientations, *self.board_shape)

    # -------------------------------------------------------------------------------------------- pure functions
    def init(self, key: jax.Array | None = None) -> State:
        """The starting position (Blokus has no chance moves, so ``key`` is accepted for API symmetry only)."""
        del key
        t = self.tables
        rows, cols = self.board_shape
        c, p = self.num_colors, self.num_pieces
        board = jnp.zeros((rows, cols), jnp.int8)
        remaining = jnp.broadcast_to(jnp.asarray(t.piece_copies, jnp.int8), (c, p))
        placed = jnp.zeros((c,), jnp.int32)
        color = jnp.int32(0)
        return State(
            board=board,
            remaining=remaining,
            current_color=color,
            current_player=self._player_of(color, placed),
            rewards=jnp.zeros((self.num_players,), jnp.float32),
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
            scores=rules.color_scores(t, remaining, jnp.zeros((c,), bool)),
            step_count=jnp.int32(0),
            last_action=jnp.int32(-1),
            legal_bits=self._compute_bits(board, remaining, placed, color),
            _passed=jnp.zeros((c,), bool),
            pieces_placed=placed,
            _last_was_monomino=jnp.zeros((c,), bool),
        )

    def step(self, state: State, action: jax.Array) -> State:
        """Play ``action`` for the colour to move and return the next state (see the module doc for the rules on
        passes, termination, rewards and illegal actions)."""
        return self._step(state, action, autoreset=False)[0]

    def step_autoreset(self, state: State, action: jax.Array) -> tuple[State, jax.Array, jax.Array]:
        """Step, and start a fresh game in place of a finished one. Returns ``(next_state, rewards, done)`` where
        ``rewards`` and ``done`` (terminated or truncated) describe the step just taken and ``next_state`` is the
        initial position whenever ``done``. The building block for rollouts of endless batched play."""
        return self._step(state, action, autoreset=True)

    def is_legal(self, state: State, action: jax.Array) -> jax.Array:
        """``bool``: ``action`` is in range and legal for the colour to move (False once the game is over)."""
        rows, cols = self.board_shape
        action = jnp.asarray(action, jnp.int32)
        in_range = (action >= 0) & (action < self.num_actions)
        any_placement = rules.has_placement(state.legal_bits)
        safe = jnp.clip(action, 0, self.num_actions - 2)
        o, rc = safe // (rows * cols), safe % (rows * cols)
        word = state.legal_bits[o, rc // cols]
        bit = ((word >> (rc % cols).astype(jnp.uint32)) & 1) == 1
        ok = jnp.where(action == self.pass_action, ~any_placement, bit)
        return in_range & ok & ~(state.terminated | state.truncated)

    def legal_action_mask(self, state: State) -> jax.Array:
        """``bool[num_actions]``: same as ``state.legal_action_mask``."""
        return state.legal_action_mask

    def observe(self, state: State, player: jax.Array | int | None = None) -> Observation:
        """Egocentric features for ``player`` (default: the player to move); see :mod:`blokus_jax.observe`."""
        return observe(self.tables, state, state.current_player if player is None else player)

    def sample_action(self, key: jax.Array, state: State) -> jax.Array:
        """A uniformly random legal action (``int32``); the pass when nothing can be placed. Cheap: it works on the
        packed bitboard with popcounts and never builds the full mask."""
        action = rules.sample_from_bits(key, state.legal_bits, self.board_shape[1], self.pass_action)
        return jnp.where(state.terminated | state.truncated, self.pass_action, action)

    def placement_bits(self, state: State, color: jax.Array | int) -> jax.Array:
        """Packed legal placements ``uint32[O, H]`` that ``color`` would have if it were to move in this position
        (bit ``c`` of word ``[o, r]`` = orientation ``o`` anchored at ``(r, c)``). For lookahead and evaluation;
        the colour to move's own mask is already in the state. Count placements with ``rules.popcount``."""
        return self._compute_bits(state.board, state.remaining, state.pieces_placed, jnp.asarray(color, jnp.int32))

    def player_scores(self, state: State) -> jax.Array:
        """``int32[num_players]``: each player's score (sum of its colours'; a shared colour counts for nobody)."""
        return state.scores @ jnp.asarray(self.tables.player_color_matrix.T)

    # ------------------------------------------------------------------------------------------------- internals
    def _player_of(self, color: jax.Array, pieces_placed: jax.Array) -> jax.Array:
        owner = jnp.asarray(self.tables.color_owner)[color]
        shared_turn = pieces_placed[color] % self.num_players
        return jnp.where(owner < 0, shared_turn, owner).astype(jnp.int32)

    def _compute_bits(self, board, remaining, pieces_placed, color) -> jax.Array:
        own = rules.pack_rows(board == (color + 1).astype(jnp.int8))
        occupied = rules.pack_rows(board != 0)
        forbidden, corners = rules.forbidden_and_corners(self.tables, own, occupied, pieces_placed[color] == 0, color)
        bits = rules.legal_bits(self.tables, forbidden, corners, remaining[color] > 0)
        # Materialise the mask once: without the barrier XLA:CPU fuses the gathers into each consumer (the legality
        # test, the sampler, the caller's selects) with a transposed layout, which made a step up to 30x slower.
        return jax.lax.optimization_barrier(bits)

    def _step(self, state: State, action: jax.Array, autoreset: bool) -> tuple[State, jax.Array, jax.Array]:
        """Shared body of :meth:`step` and :meth:`step_autoreset`.

        All branching is done with selects on the small fields (board, counters, flags); the packed mask is then
        computed exactly once, from the selected position. A finished or illegal step leaves board, colour and
        pieces as they were, so recomputing the mask reproduces the stored one and ``legal_bits`` never needs a
        select of its own. With ``autoreset`` a game that ends here is replaced by the initial position. Returns
        ``(state, rewards, done)``, the last two describing the step just taken.
        """
        t = self.tables
        action = jnp.asarray(action, jnp.int32)
        done = state.terminated | state.truncated
        legal = self.is_legal(state, action)
        play = legal & ~done
        illegal = ~legal & ~done
        color = state.current_color
        is_pass = action == self.pass_action
        places = play & ~is_pass
        orientation = jnp.clip(action // (self.board_shape[0] * self.board_shape[1]), 0, t.num_orientations - 1)
        piece = jnp.asarray(t.orientation_piece)[orientation]

        board = jnp.where(places & rules.placement_plane(t, action), (color + 1).astype(jnp.int8), state.board)
        remaining = state.remaining.at[color, piece].add(-places.astype(jnp.int8))
        pieces_placed = state.pieces_placed.at[color].add(places.astype(jnp.int32))
        last_mono = state._last_was_monomino.at[color].set(
            jnp.where(places, jnp.asarray(t.piece_sizes)[piece] == 1, state._last_was_monomino[color]))
        passed = state._passed.at[color].set(state._passed[color] | (play & is_pass))

        candidates = (color + 1 + jnp.arange(self.num_colors)) % self.num_colors
        can_move = ~passed[candidates]
        next_color = jnp.where(play, candidates[jnp.argmax(can_move)], color).astype(jnp.int32)
        scores = rules.color_scores(t, remaining, last_mono)
        terminated = state.terminated | illegal | (play & jnp.all(passed))
        step_count = state.step_count + (~done).astype(jnp.int32)
        truncated = state.truncated
        if self.max_steps is not None:
            truncated = truncated | (play & ~terminated & (step_count >= self.max_steps))
        penalty = jnp.zeros((self.num_players,), jnp.float32).at[state.current_player].set(
            self.illegal_action_penalty)
        rewards = jnp.where(play & terminated, self._final_rewards(scores),
                            jnp.where(illegal, penalty, 0.0)).astype(jnp.float32)
        fields = dict(board=board, remaining=remaining, current_color=next_color, scores=scores,
                      _passed=passed, pieces_placed=pieces_placed, _last_was_monomino=last_mono)
        bookkeeping = dict(step_count=step_count, last_action=jnp.where(done, state.last_action, action),
                           rewards=rewards, terminated=terminated, truncated=truncated)
        if autoreset:
            start = self.init()
            reset = terminated | truncated
            fields = {k: jnp.where(reset, getattr(start, k), v) for k, v in fields.items()}
            bookkeeping = {k: jnp.where(reset, getattr(start, k), v) for k, v in bookkeeping.items()}
        next_state = State(
            **fields,
            **bookkeeping,
            current_player=self._player_of(fields["current_color"], fields["pieces_placed"]),
            legal_bits=self._compute_bits(fields["board"], fields["remaining"], fields["pieces_placed"],
                                         fields["current_color"]),
        )
        return next_state, rewards, terminated | truncated

    def _final_rewards(self, scores: jax.Array) -> jax.Array:
        player_scores = (scores @ jnp.asarray(self.tables.player_color_matrix.T)).astype(jnp.float32)
        if self.reward == "winloss":
            winners = player_scores == player_scores.max()
            return jnp.where(winners, 1.0 / jnp.sum(winners), -1.0)
        n = self.num_players
        others = jnp.where(jnp.eye(n, dtype=bool), -jnp.inf, player_scores[None, :]).max(axis=1)
        others = jnp.where(n > 1, others, 0.0)
        squares = self.variant.squares_per_color * max(len(c) for c in self.variant.players_to_colors)
        return (player_scores - others) / squares

    # ------------------------------------------------------------------------------------- action codec (host)
    def action_cells(self, action: int) -> np.ndarray:
        """``int32[k, 2]`` cells covered by placement ``action`` (empty for the pass)."""
        return self.tables.action_cells(action)

    def action_from_cells(self, cells: Any) -> int:
        """The action index of the placement covering exactly ``cells``; raises ``IllegalActionError`` if none."""
        return self.tables.action_from_cells(cells)

    def decode_action(self, action: int) -> tuple[int, int, int, int]:
        """``(piece, orientation_in_piece, row, col)`` of a placement index."""
        return self.tables.decode(action)

    def encode_action(self, piece: int, orientation: int, row: int, col: int) -> int:
        """The action index of ``piece``'s ``orientation`` with its bounding box's top-left at ``(row, col)``."""
        return self.tables.encode(piece, orientation, row, col)


def make(variant: str | Variant = "classic", *, reward: str = "winloss", illegal_action_penalty: float = -1.0,
         max_steps: int | None = None, **overrides) -> Env:
    """Build an :class:`Env` for a registered variant name (see :data:`blokus_jax.variants.VARIANTS`) or a custom
    :class:`Variant`; ``overrides`` replace variant fields (e.g. ``board_shape``, ``start_cells``)."""
    return Env(get_variant(variant, **overrides), reward=reward, illegal_action_penalty=illegal_action_penalty,
               max_steps=max_steps)
