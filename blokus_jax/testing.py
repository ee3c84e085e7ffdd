"""The environment contract as one reusable check, shipped with the package (as Pgx ships `pgx.api_test`).

`check_env(env)` plays a uniformly random game of `env` to its end and asserts, step by step, everything the
public API promises: shapes and dtypes of the state, the observation and the mask; the mask agreeing with
`is_legal` and with the packed `legal_bits`; the pass legal exactly when nothing can be placed; zero rewards
before the terminal step and terminal rewards as documented; illegal and finished-game steps; jit against eager and
vmap against one-by-one stepping; init and step purity; a bounded state size; auto-reset.

Run it on any variant, registered or custom, or on a wrapper that keeps the `Env` interface (any
object with the attributes of `ENV_INTERFACE`, e.g. one that delegates to an `Env`):

```python
from blokus_jax.testing import check_env
check_env(blokus_jax.make(my_variant))
```

It also accepts the adapters' environments: a `blokus_jax.adapters.pgx.PgxEnv` or an OpenSpiel game loaded
through `blokus_jax.adapters.openspiel`. For those it checks the core env inside them with the contract above,
then plays a random game through the framework's own API and asserts that every step agrees with the core (player to
move, legal actions, rewards, termination, observation), plus the framework's own conventions. A failed check raises
`ContractError` (an `AssertionError`) whose message names the property, the variant and the step (`setup`
for what is checked outside the random game), with the original failure chained. Needs `chex` (a core dependency),
nothing else.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any

import chex
import jax
import jax.numpy as jnp
import numpy as np

import blokus_jax as bj
from blokus_jax import rules
from blokus_jax.errors import ContractError
from blokus_jax.wrappers import AutoReset

#: What `check_env` uses of an env: a `Env` has it all; a wrapper needs the same names.
ENV_INTERFACE = (
    "variant",
    "tables",
    "reward",
    "illegal_action_penalty",
    "num_actions",
    "pass_action",
    "board_shape",
    "num_players",
    "num_colors",
    "num_pieces",
    "num_orientations",
    "init",
    "step",
    "step_autoreset",
    "is_legal",
    "observe",
    "sample_action",
)


class _Checker:
    """Names every check: `with check("property", step):` turns a failure inside (an `assert`, chex's and
    NumPy's assertions, or an error the env raised) into a `ContractError` naming the property, the variant
    and the step."""

    def __init__(self, variant: str, what: str = "check_env"):
        self.variant = variant
        self.what = what

    @contextlib.contextmanager
    def __call__(self, prop: str, step: int | str = "setup") -> Iterator[None]:
        try:
            yield
        except ContractError:
            raise
        except Exception as exc:  # noqa: BLE001 (every failure is reported with its place)
            where = f"step {step}" if isinstance(step, int) else step
            detail = " ".join(str(exc).split()) or type(exc).__name__
            raise ContractError(
                f"{self.what}: {prop} fails on variant {self.variant!r} at {where}: {detail[:2000]}"
            ) from exc


def state_size_bound(env: bj.Env) -> int:
    """Most bytes one state may take: the int8 board and piece counts, the packed mask and a few words per colour
    and player (no unpacked `num_actions` mask, no float planes).

    Args:
        env: The environment.

    Returns:
        The bound in bytes.
    """
    rows, cols = env.board_shape
    c, p, n = env.num_colors, env.num_pieces, env.num_players
    return rows * cols + c * p + 4 * env.num_orientations * rows + 16 * c + 4 * n + 64


def check_state(env: Any, state: bj.State) -> None:
    """Assert the shapes, dtypes and value ranges of one (unbatched) state and its mask, and its size.

    Args:
        env: The environment (an `Env` or a wrapper with its interface).
        state: The state.

    Raises:
        AssertionError: The first broken promise (chex's message, or one naming the field).
    """
    rows, cols = env.board_shape
    c, p, n, o = env.num_colors, env.num_pieces, env.num_players, env.num_orientations
    chex.assert_shape(state.board, (rows, cols))
    chex.assert_type(state.board, jnp.int8)
    chex.assert_shape(state.remaining, (c, p))
    chex.assert_type(state.remaining, jnp.int8)
    chex.assert_shape([state.current_color, state.current_player, state.step_count, state.last_action], ())
    chex.assert_type([state.current_color, state.current_player, state.step_count, state.last_action], jnp.int32)
    chex.assert_shape(state.rewards, (n,))
    chex.assert_type(state.rewards, jnp.float32)
    chex.assert_shape([state.terminated, state.truncated], ())
    chex.assert_type([state.terminated, state.truncated], jnp.bool_)
    chex.assert_shape([state.scores, state.pieces_placed], (c,))
    chex.assert_type([state.scores, state.pieces_placed], jnp.int32)
    chex.assert_shape(state.legal_bits, (o, rows))
    chex.assert_type(state.legal_bits, jnp.uint32)
    chex.assert_shape(state.legal_action_mask, (env.num_actions,))
    chex.assert_type(state.legal_action_mask, jnp.bool_)
    board = np.asarray(state.board)
    assert board.min() >= 0 and board.max() <= c, "board values are 0 (empty) or colour + 1"
    remaining = np.asarray(state.remaining)
    assert (remaining >= 0).all() and (remaining <= env.tables.piece_copies).all(), "piece counts out of range"
    assert 0 <= int(state.current_color) < c, f"current_color {int(state.current_color)} is not in [0, {c})"
    assert 0 <= int(state.current_player) < n, f"current_player {int(state.current_player)} is not in [0, {n})"
    owner = int(env.tables.color_owner[int(state.current_color)])
    if owner >= 0:
        assert int(state.current_player) == owner, (
            f"current_player {int(state.current_player)} is not {owner}, the owner of current_color "
            f"{int(state.current_color)}"
        )
    size = sum(np.asarray(leaf).nbytes for leaf in jax.tree.leaves(state))
    assert size <= state_size_bound(env), f"state takes {size} bytes, more than {state_size_bound(env)}"


def check_observation(env: bj.Env, obs: bj.Observation) -> None:
    """Assert the shapes, dtypes and the `[0, 1]` range of one (unbatched) observation.

    Args:
        env: The environment (an `Env` or a wrapper with its interface).
        obs: The observation.

    Raises:
        AssertionError: The first broken promise.
    """
    rows, cols = env.board_shape
    c, p = env.num_colors, env.num_pieces
    chex.assert_shape(obs.planes, (rows, cols, 2 * c))
    chex.assert_shape(obs.pieces, (c, p))
    chex.assert_shape(obs.to_move, (c,))
    chex.assert_type([obs.planes, obs.pieces, obs.to_move], jnp.float32)
    for leaf in (obs.planes, obs.pieces, obs.to_move):
        leaf = np.asarray(leaf)
        assert ((leaf >= 0) & (leaf <= 1)).all(), "observation features are in [0, 1]"


def check_terminal_rewards(env: bj.Env, state: bj.State) -> None:
    """Assert the rewards of a terminal step as the env module documents them, in the env's reward mode.

    Args:
        env: The environment (an `Env` or a wrapper with its interface).
        state: The state after the terminal step.

    Raises:
        AssertionError: A reward differs from the documented one.
    """
    rewards = np.asarray(state.rewards)
    scores = np.asarray(state.scores) @ env.tables.player_color_matrix.T
    if env.reward == "winloss":
        winners = scores == scores.max()
        np.testing.assert_allclose(rewards[winners], 1.0 / winners.sum())
        np.testing.assert_array_equal(rewards[~winners], -1.0)
        np.testing.assert_allclose(rewards.sum(), 1.0 - (~winners).sum(), rtol=1e-6)
    else:
        best_other = [max([s for q, s in enumerate(scores) if q != p_], default=0) for p_ in range(env.num_players)]
        squares = env.variant.squares_per_color * max(len(cs) for cs in env.variant.players_to_colors)
        np.testing.assert_allclose(rewards, (scores - np.asarray(best_other)) / squares, rtol=1e-6)


def random_game(env: bj.Env, seed: int = 0) -> tuple[list[bj.State], list[int]]:
    """Play a uniformly random game to its end (jitted step, one action at a time).

    Args:
        env: The environment (an `Env` or a wrapper with its interface).
        seed: Seed of the PRNG key.

    Returns:
        `(states, actions)`: every state, the initial one first, and the actions taken.
    """
    step, sample = jax.jit(env.step), jax.jit(env.sample_action)
    limit = env.num_colors * (int(env.tables.piece_copies.sum()) + 1) + 1
    key = jax.random.key(seed)
    states, actions = [env.init(key)], []
    for _ in range(limit):
        if bool(states[-1].terminated) or bool(states[-1].truncated):
            break
        key, sub = jax.random.split(key)
        actions.append(int(sample(sub, states[-1])))
        states.append(step(states[-1], actions[-1]))
    return states, actions


def check_env(env: Any, seed: int = 0, eager_steps: int = 0, vmap_batch: int = 4) -> None:
    """Assert the whole environment contract on `env` with one random game (see the module doc).

    For an adapter the core env inside it is checked first, then the adapter against it.

    Args:
        env: An `Env` (any variant, registered or custom) or a wrapper with its interface (`ENV_INTERFACE`), a
            `PgxEnv` or an OpenSpiel game of `blokus_jax.adapters.openspiel`.
        seed: Seed of the random game.
        eager_steps: Steps also replayed without `jit` (op by op, slow to compile: keep it small).
        vmap_batch: States of the game stepped as one batch.

    Raises:
        ContractError: The first broken promise (an `AssertionError`), naming the property, the variant and
            the step.
        TypeError: `env` lacks the interface.
    """
    pgx_adapter = sys.modules.get("blokus_jax.adapters.pgx")
    spiel_adapter = sys.modules.get("blokus_jax.adapters.openspiel")
    if pgx_adapter is not None and isinstance(env, pgx_adapter.PgxEnv):
        check_core_env(env.core, seed, eager_steps, vmap_batch)
        check_pgx_env(env, seed)
    elif spiel_adapter is not None and isinstance(env, spiel_adapter.BlokusGame):
        check_core_env(env.core, seed, eager_steps, vmap_batch)
        check_openspiel_game(env, seed)
    else:
        missing = [name for name in ENV_INTERFACE if not hasattr(env, name)]
        if missing:
            raise TypeError(
                f"check_env needs a blokus_jax.Env or a wrapper with its interface, a "
                f"blokus_jax.adapters.pgx.PgxEnv or an OpenSpiel game of blokus_jax.adapters.openspiel; "
                f"{type(env).__name__} lacks {missing}"
            )
        check_core_env(env, seed, eager_steps, vmap_batch)


def check_core_env(env: Any, seed: int = 0, eager_steps: int = 0, vmap_batch: int = 4) -> None:
    """`check_env` for a core `Env` (or a wrapper with its interface).

    Args:
        env: The environment.
        seed: Seed of the random game.
        eager_steps: Steps also replayed without `jit`.
        vmap_batch: States of the game stepped as one batch.

    Raises:
        ContractError: The first broken promise, naming the property, the variant and the step.
    """
    check = _Checker(env.variant.name)
    n_actions, pass_action = env.num_actions, env.pass_action
    key = jax.random.key(seed)
    step = jax.jit(env.step)

    @jax.jit
    def probe(state):
        """Everything checked per state, in one compiled call."""
        legal = jax.vmap(env.is_legal, (None, 0))(state, jnp.arange(n_actions))
        bits = rules.unpack_rows(state.legal_bits, env.board_shape[1]).reshape(-1)
        views = [env.observe(state)] + [env.observe(state, p) for p in range(env.num_players)]
        return state.legal_action_mask, legal, bits, views

    # init: pure, key-independent (no chance moves), the same under jit
    with check("init is pure and key-independent"):
        start = env.init(key)
        chex.assert_trees_all_equal(start, env.init(jax.random.key(seed + 1)), jax.jit(env.init)(key))
    with check("the initial state (step 0, no last action, not over, zero rewards)", 0):
        assert int(start.step_count) == 0, f"step_count is {int(start.step_count)}"
        assert int(start.last_action) == -1, f"last_action is {int(start.last_action)}"
        assert not bool(start.terminated), "the game is over at the start"
        np.testing.assert_array_equal(start.rewards, 0.0)

    with check("a random game plays to its end"):
        states, actions = random_game(env, seed)
    final = states[-1]
    with check("a random game ends within the step bound", len(actions)):
        assert bool(final.terminated) or bool(final.truncated), f"not over after {len(actions)} steps"
    movers = set()
    for t, state in enumerate(states):
        with check("state shapes, dtypes and ranges (check_state)", t):
            check_state(env, state)
        with check("the mask, is_legal and the observations can be computed", t):
            mask, legal, bits, views = jax.device_get(probe(state))
        with check("observation shapes, dtypes and range (check_observation)", t):
            for view in views:
                check_observation(env, view)
        done = bool(state.terminated) or bool(state.truncated)
        with check("the mask agrees with is_legal", t):
            np.testing.assert_array_equal(mask, legal)
        with check("the mask agrees with legal_bits", t):
            np.testing.assert_array_equal(mask[:-1], bits & (not done))
        if done:
            with check("no action is legal once the game is over", t):
                assert not mask.any(), f"{int(mask.sum())} actions are legal"
        else:
            movers.add(int(state.current_player))
            with check("the pass is legal exactly when nothing else is", t):
                assert mask[pass_action] == (not mask[:-1].any()), f"pass legal: {bool(mask[pass_action])}"
        if t < len(actions):
            after = states[t + 1]
            with check("sample_action picks a legal action", t):
                assert mask[actions[t]], f"it chose illegal action {actions[t]}"
            with check("step advances step_count and records last_action", t):
                assert int(after.step_count) == t + 1, f"step_count {int(after.step_count)}, expected {t + 1}"
                assert int(after.last_action) == actions[t], f"last_action {int(after.last_action)} != {actions[t]}"
            if not bool(after.terminated):
                with check("rewards are zero before the end", t):
                    np.testing.assert_array_equal(after.rewards, 0.0)
    with check("every player is to move at some point of a game"):
        absent = sorted(set(range(env.num_players)) - movers)
        assert not absent, f"players {absent} were never to move (current_player was only ever {sorted(movers)})"
    if bool(final.terminated):
        with check("terminal rewards as documented (check_terminal_rewards)", len(actions)):
            check_terminal_rewards(env, final)

    # step purity: the same input gives the same output, and the input is not changed
    middle = len(actions) // 2
    mid, action = states[middle], actions[middle]
    with check("step is pure (same input, same output; input unchanged)", middle):
        before = jax.tree.map(np.array, mid)
        chex.assert_trees_all_equal(step(mid, action), step(mid, action), states[middle + 1])
        chex.assert_trees_all_equal(jax.tree.map(np.asarray, mid), before)

    # jit against eager
    for t in range(min(eager_steps, len(actions))):
        with check("step without jit equals step under jit", t):
            chex.assert_trees_all_equal(env.step(states[t], actions[t]), states[t + 1])

    # vmap against one by one (states from different points of the game)
    picks = np.linspace(0, len(actions) - 1, vmap_batch).astype(int)
    with check(f"vmap of step equals one-by-one stepping (steps {picks.tolist()})"):
        batch = jax.tree.map(lambda *xs: jnp.stack(xs), *[states[i] for i in picks])
        stepped = jax.jit(jax.vmap(env.step))(batch, jnp.asarray([actions[i] for i in picks], jnp.int32))
        for j, i in enumerate(picks):
            chex.assert_trees_all_equal(jax.tree.map(lambda x: x[j], stepped), states[i + 1])

    # a finished game is a fixed point with zero rewards
    with check("a finished game is left unchanged with zero rewards", len(actions)):
        chex.assert_trees_all_equal(step(final, pass_action), final.replace(rewards=jnp.zeros_like(final.rewards)))

    _check_illegal_actions(env, check, step, start)
    _check_autoreset(env, check, states, actions, start)


def _check_illegal_actions(env: Any, check: Any, step: Any, start: Any) -> None:
    """Part of `check_core_env`: illegal and non-integer actions from the initial position."""
    n_actions = env.num_actions
    # illegal actions: out of range (judged before narrowing to int32) or forbidden end the game with the penalty
    # for the mover and the board untouched; a non-integer action is refused when traced
    expected = np.zeros(env.num_players, np.float32)
    expected[int(start.current_player)] = env.illegal_action_penalty
    forbidden = int(np.flatnonzero(~np.asarray(start.legal_action_mask))[0])
    traced = (-1, n_actions, forbidden, np.uint32(2**31 + 1))  # jit arguments: int32 / uint32 tracers
    host = (2**40, -(2**40), np.int64(2**32 + 5))  # concrete values seen by the step itself
    with check("illegal actions can be stepped", 0):
        check_legal = jax.jit(lambda s, a: (env.step(s, a), env.is_legal(s, a)))
        results = [check_legal(start, bad) for bad in traced]
        results += jax.jit(lambda s: [(env.step(s, bad), env.is_legal(s, bad)) for bad in host])(start)
    for bad, (after, legal) in zip(traced + host, results):
        with check(f"illegal action {bad!r} ends the game with the penalty, the board untouched", 0):
            assert not bool(legal), "is_legal says it is legal"
            assert bool(after.terminated), "the game goes on"
            np.testing.assert_array_equal(after.rewards, expected)
            np.testing.assert_array_equal(after.board, start.board)
    for bad in (1.0, True, np.float32(3)):
        with check(f"a non-integer action {bad!r} raises ActionTypeError", 0):
            try:
                step(start, bad)
            except bj.ActionTypeError:
                pass
            else:
                raise AssertionError(f"action {bad!r} was accepted")


def _check_autoreset(env: Any, check: Any, states: list, actions: list, start: Any) -> None:
    """Part of `check_core_env`: a finished game restarts from the initial position."""
    final = states[-1]
    # auto-reset: a finished game restarts from the initial position, reporting the step that ended it
    last = states[-2]
    with check("auto-reset restarts a finished game and reports the step that ended it", len(actions) - 1):
        both = jax.jit(lambda s, a: (AutoReset(env).step(s, a), env.step_autoreset(s, a)))
        wrapped, method = both(last, actions[-1])
        reset_state, rewards, done = wrapped
        assert bool(done), "done is False on the final step"
        np.testing.assert_array_equal(rewards, final.rewards)
        chex.assert_trees_all_equal(reset_state, start)
        chex.assert_trees_all_equal(method, wrapped)


def check_pgx_env(env: Any, seed: int = 0) -> None:
    """The Pgx adapter against its core env: one random game through `PgxEnv.init` / `step` (Pgx's own,
    jitted) beside the core's, asserting at every step Pgx's conventions (dtypes, the stored mask equal to the
    core's and all True once over, `_step_count`, the observation equal to the core's planes for the player to
    move, rewards) and, from the start, Pgx's illegal-action rule (the offender gets the penalty, every other player
    `(n - 1)` times its magnitude) for a forbidden and two out-of-range actions. Part of `check_env`.

    Args:
        env: A `PgxEnv`.
        seed: Seed of the random game.

    Raises:
        ContractError: The first broken promise.
    """
    core = env.core
    check = _Checker(core.variant.name, "check_env (Pgx adapter)")
    n = core.num_players
    init, step = jax.jit(env.init), jax.jit(env.step)
    planes = jax.jit(lambda s: core.observe(s).planes)
    with check("a random core game plays to its end"):
        states, actions = random_game(core, seed)
    with check("init wraps the core's initial state", 0):
        state = init(jax.random.key(seed))
        chex.assert_trees_all_equal(state._core, states[0])
    for t, expected in enumerate(states):
        if t:
            with check("step runs", t):
                state = step(state, actions[t - 1])
        with check("the core state inside equals the core's own game", t):
            chex.assert_trees_all_equal(state._core, expected)
        with check("field dtypes and shapes (Pgx's conventions)", t):
            chex.assert_type([state.current_player, state._step_count], jnp.int32)
            chex.assert_type([state.terminated, state.truncated, state.legal_action_mask, state.observation], jnp.bool_)
            chex.assert_type(state.rewards, jnp.float32)
            chex.assert_shape(state.rewards, (n,))
            chex.assert_shape(state.observation, env.observation_shape)
        with check("_step_count counts the steps", t):
            assert int(state._step_count) == t, f"_step_count is {int(state._step_count)}"
        with check("current_player is the core's player to move", t):
            assert int(state.current_player) == int(expected.current_player), (
                f"{int(state.current_player)}, the core says {int(expected.current_player)}"
            )
        with check("terminated and truncated are the core's", t):
            assert bool(state.terminated) == bool(expected.terminated), f"terminated {bool(state.terminated)}"
            assert bool(state.truncated) == bool(expected.truncated), f"truncated {bool(state.truncated)}"
        with check("rewards are the core's", t):
            np.testing.assert_array_equal(state.rewards, expected.rewards)
        done = bool(expected.terminated) or bool(expected.truncated)
        with check("the stored mask is the core's, all True once over", t):
            mask = np.asarray(state.legal_action_mask)
            np.testing.assert_array_equal(mask, np.asarray(expected.legal_action_mask) | done)
        with check("the observation is the core's planes for the player to move", t):
            np.testing.assert_array_equal(state.observation, np.asarray(planes(expected)).astype(bool))
        with check("state.env_id is env.id", t):
            assert state.env_id == env.id, f"{state.env_id!r} != {env.id!r}"
    # a finished game is left alone with zero rewards (Pgx's rule)
    with check("a finished game is left alone with zero rewards", len(actions)):
        after = step(state, 0)
        np.testing.assert_array_equal(after.rewards, 0.0)
        chex.assert_trees_all_equal(after._core, state._core)
    # illegal actions: Pgx's rule, the board untouched
    start = init(jax.random.key(seed))
    penalty = core.illegal_action_penalty
    expected_rewards = np.full(n, -penalty * (n - 1), np.float32)
    expected_rewards[int(start.current_player)] = penalty
    forbidden = int(np.flatnonzero(~np.asarray(start.legal_action_mask))[0])
    for bad in (forbidden, -1, core.num_actions):
        with check(f"illegal action {bad} follows Pgx's rule (penalty, others -(n-1) times it, board kept)", 0):
            after = step(start, jnp.int32(bad))
            assert bool(after.terminated), "the game goes on"
            np.testing.assert_allclose(after.rewards, expected_rewards)
            np.testing.assert_array_equal(after._core.board, start._core.board)
            assert np.asarray(after.legal_action_mask).all(), "the stored mask is not all True once over"


def check_openspiel_game(game: Any, seed: int = 0) -> None:
    """The OpenSpiel adapter against its core env: the game's type and sizes, then one random core game replayed
    through the OpenSpiel state, asserting at every step the player to move, the sorted legal actions (the core's
    mask), action strings that read back, the observation tensor (the core's features for every player), zero
    returns until the end and the core's rewards at the end, `clone` independence and a serialisation round trip
    at a few steps. Part of `check_env`.

    Args:
        game: A `BlokusGame` of `blokus_jax.adapters.openspiel`.
        seed: Seed of the random game.

    Raises:
        ContractError: The first broken promise.
    """
    import pyspiel

    core = game.core
    check = _Checker(core.variant.name, "check_env (OpenSpiel adapter)")
    with check("the game type (sequential, deterministic, perfect information, general sum) and sizes"):
        game_type = game.get_type()
        assert game_type.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL, "dynamics"
        assert game_type.chance_mode == pyspiel.GameType.ChanceMode.DETERMINISTIC, "chance mode"
        assert game_type.information == pyspiel.GameType.Information.PERFECT_INFORMATION, "information"
        assert game_type.utility == pyspiel.GameType.Utility.GENERAL_SUM, "utility"
        assert game.num_players() == core.num_players, f"num_players {game.num_players()}"
        assert game.num_distinct_actions() == core.num_actions, f"num_distinct_actions {game.num_distinct_actions()}"
        rows, cols = core.board_shape
        c, p = core.num_colors, core.num_pieces
        size = 2 * c * rows * cols + c * p + c
        assert game.observation_tensor_size() == size, f"observation_tensor_size {game.observation_tensor_size()}"
    features = jax.jit(lambda s, player: core.observe(s, player))
    with check("a random core game plays to its end"):
        states, actions = random_game(core, seed)
    with check("max_game_length bounds a game"):
        assert len(actions) <= game.max_game_length(), f"{len(actions)} > {game.max_game_length()}"
    state = game.new_initial_state()
    for t, expected in enumerate(states):
        if t:
            with check("apply_action plays the core's move", t):
                state.apply_action(actions[t - 1])
        with check("the state's core position equals the core's own game", t):
            chex.assert_trees_all_equal(state.core_state, jax.device_get(expected))
        done = bool(expected.terminated) or bool(expected.truncated)
        with check("is_terminal is the core's", t):
            assert state.is_terminal() == done, f"is_terminal {state.is_terminal()}"
        legal = np.flatnonzero(np.asarray(expected.legal_action_mask)).tolist()
        if done:
            with check("at the end: TERMINAL, no legal actions, the core's rewards as returns", t):
                assert state.current_player() == pyspiel.PlayerId.TERMINAL, f"player {state.current_player()}"
                assert state.legal_actions() == [], "legal actions after the end"
                np.testing.assert_allclose(state.returns(), np.asarray(expected.rewards))
        else:
            with check("current_player is the core's player to move", t):
                assert state.current_player() == int(expected.current_player), (
                    f"{state.current_player()}, the core says {int(expected.current_player)}"
                )
            with check("legal_actions are the core's mask, sorted", t):
                assert state.legal_actions() == legal, "they differ"
            with check("returns are zero before the end", t):
                assert state.returns() == [0.0] * core.num_players, f"returns {state.returns()}"
            with check("other players have no legal actions", t):
                for other in range(core.num_players):
                    if other != state.current_player():
                        assert state.legal_actions(other) == [], f"player {other} has some"
            action = actions[t]
            with check("action strings read back", t):
                text = state.action_to_string(action)
                assert state.string_to_action(text) == action, f"{text!r} reads back as another action"
        for player in range(core.num_players):
            with check(f"observation_tensor({player}) is the core's features", t):
                obs = jax.device_get(features(expected, player))
                flat = np.concatenate(
                    [np.moveaxis(obs.planes, -1, 0).reshape(-1), obs.pieces.reshape(-1), obs.to_move.reshape(-1)]
                )
                np.testing.assert_array_equal(np.asarray(state.observation_tensor(player)), flat)
        if t in (0, 1, len(actions) // 2) and not done:
            with check("clone is independent of the original", t):
                copy = state.clone()
                before = str(state)
                copy.apply_action(actions[t])
                assert str(state) == before and str(copy) != before, "the clone shares its state"
            with check("a serialisation round trip gives the same state", t):
                _, back = pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(game, state))
                assert str(back) == before and back.history() == state.history(), "the loaded state differs"
