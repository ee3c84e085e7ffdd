"""The environment: pure `init` / `step` / `observe` over an immutable `State` pytree.

Two layers, as in Pgx: `Game` is the game itself (the starting position, placing a piece or passing, the next
colour, scores, the terminal test, the packed legal mask) for legal actions only; `Env` wraps it with the RL
bookkeeping (action checks and the illegal-action penalty, the finished-game no-op, step counting and truncation,
reward modes). Auto-reset is a generic wrapper, `blokus_jax.wrappers.AutoReset`.

Turn structure: colours move in order `0, 1, ..., C-1, 0, ...`. When the colour to move has no legal placement,
its only legal action is `pass_action`; passing marks it *passed* and later turns skip it without recomputing
anything (a colour that cannot place never can again: the board only fills up). The game terminates on the step in
which the last colour passes, so every colour passes exactly once, explicitly, and a game ends with at most `C`
forced passes. Keeping the rule this simple keeps `step` branch-free: no `while_loop` to skip stuck colours
and no need to inspect the next colour's mask before deciding termination.

Rewards (`State.rewards`, one entry per player) are zero until the terminal step. `reward="winloss"`: the
players with the highest score share +1 (`1/k` each on a k-way tie), everyone else gets -1. `reward="score"`:
each player's score minus the best opposing score, divided by the squares in one player's pieces.

Illegal actions (an index that is out of range or not legal here) never corrupt the board: the game terminates,
the player to move receives `illegal_action_penalty` (default -1) and the others 0. (Pgx's rule differs: there the
others get `(n - 1)` times the penalty's magnitude, +1 with two players and +3 with four; the Pgx adapter,
`blokus_jax.adapters.pgx`, follows Pgx.) The range is judged
before the action is narrowed to int32 (see `action_id`), so `np.int64(4294976750)` is out of range, not
action 9454; an action that is not an integer (a float, a bool) raises `ActionTypeError`,
under `jit` at trace time. Use the adapters (`blokus_jax.adapters`) for a boundary that raises
`IllegalActionError` instead.
Stepping a finished game returns it unchanged with zero rewards.
"""

from __future__ import annotations

import functools
import math
import numbers
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from blokus_jax import rules
from blokus_jax.errors import ActionTypeError, VariantError
from blokus_jax.observe import Observation, observe
from blokus_jax.tables import Tables
from blokus_jax.variants import Variant, get_variant

REWARD_MODES = ("winloss", "score")


@struct.dataclass
class State:
    """One game position (an immutable pytree; add a leading axis for a batch of games).

    Attributes:
        board: `int8[H, W]`; 0 empty, `c + 1` for colour `c`.
        remaining: `int8[C, P]` copies of each piece each colour still has.
        current_color: `int32` colour to move.
        current_player: `int32` player to move (the owner of `current_color`; for a shared colour, the player
            whose turn it is to place it).
        rewards: `float32[num_players]` reward of the step that produced this state.
        terminated: `bool`, the game is over (or an illegal action ended it).
        truncated: `bool`, the step limit `max_steps` was reached first.
        scores: `int32[C]` standard scores: minus unplaced squares, plus bonuses.
        step_count: `int32` steps taken (placements and passes).
        last_action: `int32` action of the previous step (-1 at the start).
        legal_bits: `uint32[O, H]` legal placements of `current_color`, packed (bit `c` of word `[o, r]`:
            orientation `o` anchored at `(r, c)`); `legal_action_mask` unpacks it.
        pieces_placed: `int32[C]` pieces each colour has placed (0 means its next placement is its first).
        passed: `bool[C]` colours that have passed (and so can never place again).
        last_was_monomino: `bool[C]` each colour's last placed piece was the monomino (for the +5 bonus).
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
    passed: jax.Array
    pieces_placed: jax.Array
    last_was_monomino: jax.Array

    @property
    def legal_action_mask(self) -> jax.Array:
        """`bool[num_actions]` legal actions of the colour to move (pass is legal exactly when nothing else is).

        Computed from the packed bitboard on access, so the state stays small; works on batched states too. Outside
        `jit` it runs as one compiled program (per shape) rather than operation by operation.
        """
        fields = (self.legal_bits, self.terminated, self.truncated)
        if _traced(fields):
            return rules.legal_mask(self.legal_bits, self.board.shape[-1], self.terminated | self.truncated)
        return _legal_mask_compiled(*fields, width=self.board.shape[-1])


def _traced(args: Any) -> bool:
    """Whether any leaf of `args` is a tracer (the call is inside a user's `jit`, `vmap` or `scan`): the plain body
    is then traced into the caller's program; otherwise a compiled program runs it."""
    return any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(args))


@functools.partial(jax.jit, static_argnames="width")
def _legal_mask_compiled(bits: jax.Array, terminated: jax.Array, truncated: jax.Array, *, width: int) -> jax.Array:
    """`State.legal_action_mask` for concrete fields, compiled once per shape."""
    return rules.legal_mask(bits, width, terminated | truncated)


class Game:
    """The rules of one variant as pure functions over `State` (Pgx's `Game`): the starting position, the
    transition for a legal action, the packed legal mask, the player to move and the scores.

    `step` assumes `action` is legal for the colour to move and never looks at the bookkeeping fields
    (`rewards`, `truncated`, `step_count`, `last_action`), which it leaves as they are; `Env` adds
    them. The transition is split in two so that `Env.step` can select between the moved and the unmoved
    position on the small fields and then compute the mask once: `move` (everything but the mask) and
    `with_legal_bits` (the mask of the colour now to move).

    Args:
        tables: The variant's precomputed tables.
    """

    def __init__(self, tables: Tables):
        self.tables = tables
        self.variant = tables.variant

    def init(self) -> State:
        """The starting position (precomputed once on the host, so inside a jitted function it is a constant)."""
        return jax.tree.map(jnp.asarray, self._initial)

    def step(self, state: State, action: jax.Array) -> State:
        """The position after a legal action of the colour to move.

        Args:
            state: The position.
            action: A legal placement or, when nothing can be placed, the pass (not checked: `Env` checks).

        Returns:
            The next position: the piece placed, the next colour, passes, scores, `terminated` and the new mask.
        """
        return self.with_legal_bits(self.move(state, action))

    def move(self, state: State, action: jax.Array, apply: jax.Array | bool = True) -> State:
        """`step` without the mask: `legal_bits` is left stale (call `with_legal_bits`). Only the
        fields in `POSITION_FIELDS` change, and only where `apply` is true: a masked update, so that
        `Env.advance` keeps the position on an illegal or finished step without a select per field.

        Turn order: the next colour is the first one after the mover, cyclically, that has not passed; a colour
        that passes is marked and skipped from then on; `terminated` is set on the step in which the last colour
        passes. Stepping a terminated position is not defined here (`Env` makes it a no-op).

        Args:
            state: The position.
            action: A legal action of the colour to move (not checked).
            apply: Where false (a `bool` scalar), the position is returned unchanged.

        Returns:
            The next position with a stale `legal_bits`.
        """
        t = self.tables
        action = jnp.asarray(action, jnp.int32)
        apply = jnp.asarray(apply, bool)
        num_colors = self.variant.num_colors
        color = state.current_color
        is_pass = action == t.pass_action
        places = apply & ~is_pass
        orientation = jnp.clip(t.split_action(action)[0], 0, t.num_orientations - 1)
        piece = jnp.asarray(t.orientation_piece)[orientation]

        board = jnp.where(places & rules.placement_plane(t, action), (color + 1).astype(jnp.int8), state.board)
        remaining = state.remaining.at[color, piece].add(-places.astype(jnp.int8))
        pieces_placed = state.pieces_placed.at[color].add(places.astype(jnp.int32))
        last_mono = state.last_was_monomino.at[color].set(
            jnp.where(places, jnp.asarray(t.piece_sizes)[piece] == 1, state.last_was_monomino[color])
        )
        passed = state.passed.at[color].set(state.passed[color] | (apply & is_pass))
        candidates = (color + 1 + jnp.arange(num_colors)) % num_colors
        next_color = jnp.where(apply, candidates[jnp.argmax(~passed[candidates])], color).astype(jnp.int32)
        return state.replace(
            board=board,
            remaining=remaining,
            current_color=next_color,
            current_player=self.player_of(next_color, pieces_placed),
            scores=rules.color_scores(t, remaining, last_mono),
            pieces_placed=pieces_placed,
            passed=passed,
            last_was_monomino=last_mono,
            terminated=jnp.where(apply, jnp.all(passed), state.terminated),
        )

    def with_legal_bits(self, state: State) -> State:
        """Recompute the legal mask of a position's colour to move.

        Args:
            state: The position (its `legal_bits` may be stale).

        Returns:
            `state` with `legal_bits` recomputed.
        """
        return state.replace(
            legal_bits=self.placement_bits(state.board, state.remaining, state.pieces_placed, state.current_color)
        )

    def placement_bits(
        self, board: jax.Array, remaining: jax.Array, pieces_placed: jax.Array, color: jax.Array
    ) -> jax.Array:
        """The legal placements of a colour in a position given by its fields.

        Args:
            board: `int8[H, W]`, as in `State.board`.
            remaining: `int8[C, P]`, as in `State.remaining`.
            pieces_placed: `int32[C]`, as in `State.pieces_placed`.
            color: The colour (an `int32` scalar).

        Returns:
            Packed `uint32[O, H]`: bit `c` of word `[o, r]` is orientation `o` anchored at `(r, c)`.
        """
        t = self.tables
        own = rules.pack_rows(board == (color + 1).astype(jnp.int8))
        occupied = rules.pack_rows(board != 0)
        forbidden, corners = rules.forbidden_and_corners(
            t, own, occupied, rules.is_first_move(pieces_placed, color), color
        )
        bits = rules.legal_bits(t, forbidden, corners, remaining[color] > 0)
        # Materialise the mask once: without the barrier XLA:CPU fuses the gathers into each consumer (the legality
        # test, the sampler, the caller's selects) with a transposed layout, which made a step up to 30x slower.
        return jax.lax.optimization_barrier(bits)

    def player_of(self, color: jax.Array, pieces_placed: jax.Array) -> jax.Array:
        """The player who places a colour next (for a shared colour, the players take turns).

        Args:
            color: The colour (an `int32` scalar).
            pieces_placed: `int32[C]`, as in `State.pieces_placed`.

        Returns:
            An `int32` scalar.
        """
        owner = jnp.asarray(self.tables.color_owner)[color]
        shared_turn = pieces_placed[color] % self.variant.num_players
        return jnp.where(owner < 0, shared_turn, owner).astype(jnp.int32)

    def player_scores(self, state: State) -> jax.Array:
        """Each player's score: the sum of its colours' (a shared colour counts for nobody).

        Args:
            state: The position.

        Returns:
            `int32[num_players]`.
        """
        return rules.player_scores(self.tables, state.scores)

    @functools.cached_property
    def _initial(self) -> State:
        """The starting position as NumPy arrays, computed once by one small compiled function (called as an AOT
        executable, so it runs even when first asked for inside another function's trace)."""
        return jax.device_get(jax.jit(self._build_initial).lower().compile()())

    def _build_initial(self) -> State:
        t = self.tables
        rows, cols = self.variant.board_shape
        c, p, n = self.variant.num_colors, self.variant.num_pieces, self.variant.num_players
        board = jnp.zeros((rows, cols), jnp.int8)
        remaining = jnp.broadcast_to(jnp.asarray(t.piece_copies, jnp.int8), (c, p))
        placed = jnp.zeros((c,), jnp.int32)
        color = jnp.int32(0)
        return State(
            board=board,
            remaining=remaining,
            current_color=color,
            current_player=self.player_of(color, placed),
            rewards=jnp.zeros((n,), jnp.float32),
            terminated=jnp.bool_(False),
            truncated=jnp.bool_(False),
            scores=rules.color_scores(t, remaining, jnp.zeros((c,), bool)),
            step_count=jnp.int32(0),
            last_action=jnp.int32(-1),
            legal_bits=self.placement_bits(board, remaining, placed, color),
            passed=jnp.zeros((c,), bool),
            pieces_placed=placed,
            last_was_monomino=jnp.zeros((c,), bool),
        )


#: The `State` fields that `Game.move` changes (the position); `legal_bits` follows from them and the
#: remaining fields are the `Env`'s bookkeeping.
POSITION_FIELDS = (
    "board",
    "remaining",
    "current_color",
    "current_player",
    "scores",
    "pieces_placed",
    "passed",
    "last_was_monomino",
    "terminated",
)

_INT32 = np.iinfo(np.int32)


def action_id(action: Any) -> jax.Array:
    """`action` as an `int32` scalar, saturated to the int32 range so that a value outside `[0, num_actions)`
    stays outside it (a plain cast would wrap `np.int64(4294976750)` to 9454).

    The range is judged on the host for a concrete Python or NumPy integer and in the array's own dtype for a JAX
    array or tracer. Raises `ActionTypeError` (at trace time under `jit`) for a bool,
    a float or anything that is not one integer. Note that with x64 disabled (JAX's default) `jax.jit` itself
    narrows a 64-bit NumPy *argument* to 32 bits before any function sees it: pass actions as int32 there.

    Args:
        action: One integer action (a Python int, a NumPy integer scalar, or a JAX integer array of shape `()`).

    Returns:
        An `int32` scalar array.

    Raises:
        ActionTypeError: `action` is a bool, a float, a string, `None`, or an array of another dtype or shape.
    """
    if isinstance(action, (bool, np.bool_)):
        raise ActionTypeError(f"action {action!r} is a bool; pass one integer action index")
    if isinstance(action, numbers.Integral):
        return jnp.int32(min(max(int(action), _INT32.min), _INT32.max))
    if not isinstance(action, jax.Array):
        if isinstance(action, (str, bytes, float, complex)) or action is None:
            raise ActionTypeError(f"action {action!r} is a {type(action).__name__}; pass one integer action index")
        action = np.asarray(action)
    dtype = action.dtype
    if not jnp.issubdtype(dtype, jnp.integer):
        raise ActionTypeError(
            f"action {action!r} has dtype {dtype}; pass one integer action index (floats and "
            f"bools are not converted: 9454.9 would silently play 9454)"
        )
    if action.shape != ():
        raise ActionTypeError(
            f"action has shape {action.shape}; pass one integer action index (shape ()), or "
            f"jax.vmap the step over a batch"
        )
    if isinstance(action, np.ndarray):
        return action_id(int(action))
    if dtype.itemsize < 4 or dtype == jnp.int32:
        return action.astype(jnp.int32)
    info = jnp.iinfo(dtype)
    low = jnp.asarray(max(info.min, _INT32.min), dtype)
    return jnp.clip(action, low, jnp.asarray(_INT32.max, dtype)).astype(jnp.int32)


@functools.lru_cache(maxsize=64)
def _game_of(variant: Variant) -> Game:
    """The `Game` of a variant, one per process: its tables and its starting position are computed once, however
    many `Env` share the variant.

    Args:
        variant: The rules.

    Returns:
        The variant's `Game`.
    """
    return Game(Tables(variant))


class Env:
    """A Blokus variant as an RL environment: the `Game` plus the bookkeeping around it. Build one with
    `blokus_jax.make`.

    `init`, `step`, `observe`, `sample_action` and `legal_action_mask` are pure and work under
    `jax.jit` and `jax.vmap`; the action codec helpers (`action_cells` and friends) are host-side NumPy.

    An `Env` holds no game state (that is the `State` pytree) and is immutable: two built with the same arguments
    are equal, hash alike, and share the variant's tables and the programs compiled for calls outside `jit`.

    Args:
        variant: The rules: board, colours, players, start cells, pieces and scoring.
        reward: How a finished game pays the players: `"winloss"` (+1 to the winners, shared on a tie, -1 to the
            others) or `"score"` (score minus the best other player's, divided by the most squares a player
            owns); see `REWARD_MODES`.
        illegal_action_penalty: Reward of the player whose illegal action ends the game (the others get 0).
        max_steps: Truncate a game after this many steps (placements and passes); `None` for no limit.

    Raises:
        VariantError: `variant` is not a `Variant`, `reward` is not a known mode, `max_steps` is not a positive
            int32 or `None`, or `illegal_action_penalty` is not a finite number.
    """

    def __init__(
        self,
        variant: Variant,
        reward: str = "winloss",
        illegal_action_penalty: float = -1.0,
        max_steps: int | None = None,
    ):
        if not isinstance(variant, Variant):
            raise VariantError(f"Env needs a Variant, got {type(variant).__name__}; use blokus_jax.make(name)")
        if not isinstance(reward, str) or reward not in REWARD_MODES:
            raise VariantError(f"unknown reward mode {reward!r}; valid modes are {list(REWARD_MODES)}")
        if max_steps is not None and (
            not isinstance(max_steps, numbers.Integral)
            or isinstance(max_steps, bool)
            or not 1 <= max_steps <= _INT32.max
        ):
            raise VariantError(f"max_steps must be a positive int (at most {_INT32.max}) or None, got {max_steps!r}")
        if (
            not isinstance(illegal_action_penalty, numbers.Real)
            or isinstance(illegal_action_penalty, bool)
            or not math.isfinite(illegal_action_penalty)
        ):
            raise VariantError(f"illegal_action_penalty must be a finite number, got {illegal_action_penalty!r}")
        game = _game_of(variant)
        fields = {
            "variant": variant,
            "tables": game.tables,
            "game": game,
            "reward": reward,
            "illegal_action_penalty": float(illegal_action_penalty),
            "max_steps": None if max_steps is None else int(max_steps),
        }
        self.__dict__.update(fields)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"an Env is immutable (it cannot set {name!r}); build another with blokus_jax.make(...) and the "
            "arguments you want"
        )

    def __delattr__(self, name: str) -> None:
        self.__setattr__(name, None)

    def _key(self) -> tuple:
        return (self.variant, self.reward, self.illegal_action_penalty, self.max_steps)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Env) and type(other) is type(self) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Env({self.variant.name!r}, reward={self.reward!r}, num_actions={self.num_actions})"

    # ------------------------------------------------------------------------------------------------ properties
    @property
    def num_actions(self) -> int:
        """Size of the action space: `num_orientations * H * W` placements plus the pass."""
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
        """`(num_orientations, H, W)`: the placement part of the action space as a tensor."""
        return (self.num_orientations, *self.board_shape)

    # -------------------------------------------------------------------------------------------- pure functions
    def init(self, key: jax.Array | None = None) -> State:
        """The starting position of a game.

        Args:
            key: Accepted for API symmetry only (Blokus has no chance moves); may be `None`.

        Returns:
            The initial `State`: colour 0 to move, every piece in hand, its legal mask computed.
        """
        del key
        return self.game.init()

    def step(self, state: State, action: jax.Array) -> State:
        """Play `action` for the colour to move and return the next state (see the module doc for the rules on
        passes, termination, rewards and illegal actions). The same as `refresh(advance(state, action))`.

        An illegal action (out of range, not legal here, or the pass while a placement exists) ends the game with
        `illegal_action_penalty` for the mover; stepping a finished game returns it unchanged with zero rewards.
        Pure: jit and vmap it.

        Args:
            state: The position to move from.
            action: One integer action index in `[0, num_actions)`; `pass_action` passes.

        Returns:
            The next `State`, with the step's `rewards`, `terminated`, `truncated` and the new legal mask.

        Raises:
            ActionTypeError: `action` is not one integer (a bool, a float, an array of another shape); at trace
                time under `jit`.
        """
        return self._run("step", state, action_id(action))

    def advance(self, state: State, action: jax.Array) -> State:
        """`step` without computing the new legal mask (`legal_bits` is stale until `refresh`).

        The bookkeeping around `Game.move`: the move is applied only when it is legal and the game is not
        over (a masked update of the small position fields), so the mask can then be computed exactly once, from the
        resulting position; a kept position reproduces the stored mask, so `legal_bits` needs no select.
        `AutoReset` uses the split to put the initial position in place of a finished
        one before the mask is computed.

        Args:
            state: The position to move from.
            action: One integer action index.

        Returns:
            The next `State` with rewards, `terminated`, `truncated` and `step_count` set and a stale mask.

        Raises:
            ActionTypeError: `action` is not one integer.
        """
        return self._advance_id(state, action_id(action))

    def _advance_id(self, state: State, action: jax.Array) -> State:
        """`advance` for an action already converted by `action_id`."""
        done = state.terminated | state.truncated
        play = self._is_legal_id(state, action)
        illegal = ~play & ~done
        moved = self.game.move(state, action, apply=play)
        terminated = moved.terminated | illegal
        step_count = state.step_count + (~done).astype(jnp.int32)
        truncated = state.truncated
        if self.max_steps is not None:
            truncated = truncated | (play & ~terminated & (step_count >= self.max_steps))
        penalty = jnp.zeros((self.num_players,), jnp.float32).at[state.current_player].set(self.illegal_action_penalty)
        rewards = jnp.where(
            play & terminated, self.final_rewards(moved.scores), jnp.where(illegal, penalty, 0.0)
        ).astype(jnp.float32)
        return moved.replace(
            terminated=terminated,
            truncated=truncated,
            step_count=step_count,
            last_action=jnp.where(done, state.last_action, action),
            rewards=rewards,
        )

    def refresh(self, state: State) -> State:
        """Recompute the derived field of a position, the legal mask of the colour to move (after `advance`).

        Args:
            state: The position.

        Returns:
            `state` with `legal_bits` recomputed.
        """
        return self.game.with_legal_bits(state)

    def step_autoreset(self, state: State, action: jax.Array) -> tuple[State, jax.Array, jax.Array]:
        """Step, and start a fresh game in place of a finished one: the building block for rollouts of endless
        batched play; the same as `AutoReset(env).step` (`blokus_jax.wrappers.AutoReset`).

        Args:
            state: The position to move from.
            action: One integer action index.

        Returns:
            `(next_state, rewards, done)`: `rewards` and `done` (terminated or truncated) describe the step just
            taken and `next_state` is the initial position whenever `done`.

        Raises:
            ActionTypeError: `action` is not one integer.
        """
        return self._run("step_autoreset", state, action_id(action))

    def is_legal(self, state: State, action: jax.Array) -> jax.Array:
        """Whether `action` is in range and legal for the colour to move (False once the game is over).

        Args:
            state: The position.
            action: One integer action index.

        Returns:
            A `bool` scalar array.

        Raises:
            ActionTypeError: `action` is not one integer.
        """
        return self._run("is_legal", state, action_id(action))

    def legal_action_mask(self, state: State) -> jax.Array:
        """The legal actions of the colour to move, unpacked from the state's bitboard.

        Args:
            state: The position (or a batch of them, with a leading axis).

        Returns:
            `bool[num_actions]`, the same as `state.legal_action_mask`: the pass is legal exactly when no placement
            is, and nothing is legal once the game is over.
        """
        return state.legal_action_mask

    def observe(self, state: State, player: jax.Array | int | None = None) -> Observation:
        """Egocentric features of the position for one player; see `blokus_jax.observe` for the planes.

        Args:
            state: The position.
            player: Whose view (an `int32` scalar); default the player to move.

        Returns:
            An `Observation`: board planes, pieces in hand and the colour to move, in `player`'s colour order.
        """
        return self._run("observe", state, state.current_player if player is None else player)

    def sample_action(self, key: jax.Array, state: State) -> jax.Array:
        """A uniformly random legal action. Cheap: it works on the packed bitboard with popcounts and never builds
        the full mask.

        Args:
            key: A JAX PRNG key.
            state: The position.

        Returns:
            An `int32` action index: a legal placement, or the pass when nothing can be placed or the game is over.
        """
        return self._run("sample_action", key, state)

    def placement_bits(self, state: State, color: jax.Array | int) -> jax.Array:
        """The legal placements `color` would have if it were to move in this position, for lookahead and
        evaluation; the colour to move's own mask is already in the state. Count them with `rules.popcount`.

        Args:
            state: The position.
            color: The colour (an `int32` scalar).

        Returns:
            Packed `uint32[O, H]`: bit `c` of word `[o, r]` is orientation `o` anchored at `(r, c)`.
        """
        return self.game.placement_bits(
            state.board, state.remaining, state.pieces_placed, jnp.asarray(color, jnp.int32)
        )

    def player_scores(self, state: State) -> jax.Array:
        """Each player's score: the sum of its colours' (a shared colour counts for nobody).

        Args:
            state: The position.

        Returns:
            `int32[num_players]`.
        """
        return self.game.player_scores(state)

    def is_first_move(self, state: State, color: jax.Array | int | None = None) -> jax.Array:
        """Whether a colour's next placement is its first, so it must cover a start cell.

        Args:
            state: The position.
            color: The colour; default the colour to move.

        Returns:
            A `bool` scalar array.
        """
        return rules.is_first_move(state.pieces_placed, state.current_color if color is None else color)

    # ------------------------------------------------------------------------------------------------- internals
    @functools.cached_property
    def _pure(self) -> dict[str, Any]:
        """The bodies of `step`, `step_autoreset`, `is_legal`, `observe` and `sample_action`, after the action's
        check on the host (`action_id`)."""
        from blokus_jax.wrappers import AutoReset

        def sample(key: jax.Array, state: State) -> jax.Array:
            action = rules.sample_from_bits(key, state.legal_bits, self.board_shape[1], self.pass_action)
            return jnp.where(state.terminated | state.truncated, self.pass_action, action)

        return {
            "step": lambda state, action: self.refresh(self._advance_id(state, action)),
            "step_autoreset": lambda state, action: AutoReset(self).step(state, action),
            "is_legal": self._is_legal_id,
            "observe": lambda state, player: observe(self.tables, state, player),
            "sample_action": sample,
        }

    @functools.cached_property
    def _compiled(self) -> dict[str, Any]:
        """`_pure`, each jitted once for every env equal to this one."""
        return _jitted_bodies(self)

    def _run(self, name: str, *args: Any) -> Any:
        """Body `name` on `args`: traced into the caller's program inside a user's `jit`, `vmap` or `scan` (the
        compiled code is what it always was), and as one compiled program when called outside any (a Duo step: one
        dispatch instead of hundreds, and one compilation instead of hundreds on the first call)."""
        if _traced(args):
            return self._pure[name](*args)
        return self._compiled[name](*args)

    def _is_legal_id(self, state: State, action: jax.Array) -> jax.Array:
        """`is_legal` for an action already converted by `action_id`."""
        t = self.tables
        in_range = (action >= 0) & (action < t.num_actions)
        o, r, c = t.split_action(jnp.clip(action, 0, t.pass_action - 1))
        bit = ((state.legal_bits[o, r] >> c.astype(jnp.uint32)) & 1) == 1
        ok = jnp.where(action == t.pass_action, ~rules.has_placement(state.legal_bits), bit)
        return in_range & ok & ~(state.terminated | state.truncated)

    def final_rewards(self, scores: jax.Array) -> jax.Array:
        """The terminal rewards of a finished game, in the env's reward mode.

        Args:
            scores: `int32[num_colors]` colour scores (`State.scores`).

        Returns:
            `float32[num_players]`.
        """
        player_scores = rules.player_scores(self.tables, scores).astype(jnp.float32)
        if self.reward == "winloss":
            shares = rules.win_shares(player_scores)
            return jnp.where(shares > 0, shares, -1.0)
        n = self.num_players
        others = jnp.where(jnp.eye(n, dtype=bool), -jnp.inf, player_scores[None, :]).max(axis=1)
        others = jnp.where(n > 1, others, 0.0)
        squares = self.variant.squares_per_color * max(len(c) for c in self.variant.players_to_colors)
        return (player_scores - others) / squares

    # ------------------------------------------------------------------------------------- action codec (host)
    def action_cells(self, action: int) -> np.ndarray:
        """The board cells a placement covers (host-side NumPy).

        Args:
            action: A placement index, or the pass.

        Returns:
            `int32[k, 2]` `(row, col)` cells, `k` the piece's size (no rows for the pass).

        Raises:
            IllegalActionError: `action` is not one integer in `[0, num_actions)`, or it puts the piece partly off
                the board.
        """
        return self.tables.action_cells(action)

    def action_from_cells(self, cells: Any) -> int:
        """The action that places a piece on exactly `cells` (host-side NumPy).

        Args:
            cells: `(row, col)` pairs in any order.

        Returns:
            The placement's action index.

        Raises:
            IllegalActionError: `cells` are not `(row, col)` pairs, are empty, are off the board, or no piece of the
                variant has that shape.
        """
        return self.tables.action_from_cells(cells)

    def decode_action(self, action: int) -> tuple[int, int, int, int]:
        """A placement index split into its parts (host-side).

        Args:
            action: A placement index.

        Returns:
            `(piece, orientation_in_piece, row, col)`, `(row, col)` the top-left of the orientation's bounding box.

        Raises:
            IllegalActionError: `action` is not one integer in `[0, num_actions)`, or it is the pass.
        """
        return self.tables.decode(action)

    def encode_action(self, piece: int, orientation: int, row: int, col: int) -> int:
        """The action index of a placement given by its parts (the inverse of `decode_action`).

        Args:
            piece: Index of the piece in the variant's piece list.
            orientation: Index among that piece's distinct orientations.
            row: Row of the top-left of the orientation's bounding box.
            col: Column of the same.

        Returns:
            The action index.

        Raises:
            IllegalActionError: `piece` or `orientation` is out of range, or the anchor is off the board.
        """
        return self.tables.encode(piece, orientation, row, col)


@functools.lru_cache(maxsize=64)
def _jitted_bodies(env: Env) -> dict[str, Any]:
    """`env._pure`, each jitted: one set per distinct env (equal envs share it, so a test suite or a notebook that
    builds the same env again compiles its eager calls once)."""
    return {name: jax.jit(body) for name, body in env._pure.items()}


def make(
    variant: str | Variant = "classic",
    *,
    reward: str = "winloss",
    illegal_action_penalty: float = -1.0,
    max_steps: int | None = None,
    **overrides,
) -> Env:
    """Build an `Env` for a registered variant name (see `blokus_jax.variants.VARIANTS`) or a custom
    `Variant`.

    Args:
        variant: A name from `variant_names()` (`"classic"`, `"duo"`, ...) or a `Variant`.
        reward: `"winloss"` or `"score"` (see `Env`).
        illegal_action_penalty: Reward of a player whose illegal action ends the game.
        max_steps: Truncate a game after this many steps; `None` for no limit.
        **overrides: `Variant` fields to replace (e.g. `board_shape`, `start_cells`).

    Returns:
        The environment.

    Raises:
        VariantError: An unknown variant name or field, a field value the variant rejects, or a bad `reward`,
            `max_steps` or `illegal_action_penalty`.
    """
    return Env(
        get_variant(variant, **overrides),
        reward=reward,
        illegal_action_penalty=illegal_action_penalty,
        max_steps=max_steps,
    )
