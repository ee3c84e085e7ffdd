"""Gymnasium adapters: one learner against opponent policies, as a single env and as a batched `VectorEnv`.

Importing this module registers the ids below (`import blokus_jax.adapters.gymnasium`), after which standard code
works unchanged: `gymnasium.make("BlokusDuo-v0")`, `gymnasium.make_vec("BlokusDuo-v0", num_envs=1024,
vectorization_mode="vector_entry_point")`.

=========================== ============== ====================================================================
id                          variant        opponents
=========================== ============== ====================================================================
`BlokusClassic-v0`        `classic`    random (3 opponents)
`BlokusClassic2P-v0`      `classic_2p` random (the learner plays two colours)
`BlokusClassic3P-v0`      `classic_3p` random (the shared colour is placed in turn)
`BlokusDuo-v0`            `duo`        random
`BlokusJunior-v0`         `junior`     random
`BlokusSimple-v0`         `simple`     random (7x7 board, for quick experiments)
`Blokus<...>Greedy-v0`    same           `greedy` bot from `blokus_agents.players.bots` (largest piece first)
=========================== ============== ====================================================================

**Episode.** The learner holds one seat (player index; `seat="random"` draws one per episode from the env's seeded
RNG). `reset` and `step` let the opponents move, inside one jitted device call, until it is the learner's turn
or the game is over. Opponents are pure JAX policies `(key, state) -> action` or bot names; their randomness comes
from a key drawn from the env's RNG at `reset`, so `reset(seed=s)` replays a game exactly.

**Observation** (`gymnasium.spaces.Dict`, the learner's egocentric view, see `blokus_jax.observe`):
`planes` float32 [H, W, 2C], `pieces` float32 [C, P], `to_move` float32 [C] and `action_mask` int8
[num_actions] (all zero once the game is over). `info` holds `action_mask` (a copy), `seat` and
`player_scores`; `BlokusGymEnv.action_masks` serves sb3-contrib's `MaskablePPO`. Actions are
`Discrete(num_actions)` in the core's dense layout (the last index is the pass, legal only when nothing can be
placed). Sample a legal one with `env.action_space.sample(mask=info["action_mask"])`.

**Reward** is zero until the end, then the learner's entry of the core's rewards (`reward="winloss"`: +1 win,
-1 loss, 1/k on a k-way tie; `reward="score"`: score margin).

**Bad actions.** A value that is not one integer in `[0, num_actions)` (a float, a bool, an array, an index out of
range) always raises `RejectedActionError` (a `ValueError` and a `BlokusError`)
and leaves the env unchanged, as does a `step` after the game is over. An in-range action that the mask forbids
follows `illegal_action`: `"penalize"` (default) ends the episode with `illegal_action_penalty` for the
learner, the board untouched and the reason in `info["illegal_action"]` (Gymnasium requires every element of the
action space to be accepted by `step`, and `check_env` steps with unmasked samples); `"raise"` raises
`RejectedActionError` naming the rule broken and leaves the env unchanged.

**Vector env.** `BlokusVectorEnv` runs `num_envs` games with one jitted, vmapped device call per step.
`autoreset_mode` is `AutoresetMode.NEXT_STEP` (Gymnasium's default: the step after a sub-env ends resets it and
ignores its action, returning reward 0) or `AutoresetMode.SAME_STEP` (a finished game is replaced in the same
step; the terminal observation and info are in `info["final_obs"]` / `info["final_info"]`). Sub-env `i` of
`reset(seed=s)` plays exactly the games of a single env reset with `seed=s + i` (as `SyncVectorEnv` seeds).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax import _extras

try:
    import gymnasium
    from gymnasium import spaces
    from gymnasium.utils import seeding
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError:  # one line naming the extra instead of a bare ModuleNotFoundError
    _extras.require("gym", "blokus_jax.adapters.gymnasium (the Gymnasium adapter)")
    raise

from blokus_jax.adapters._boundary import (
    Policy,
    RejectedActionError,
    action_batch,
    action_index,
    opponents_identity,
    rejection,
    render_state,
    resolve_opponents,
)
from blokus_jax.env import Env, State, make
from blokus_jax.errors import ConfigError
from blokus_jax.pieces import is_int
from blokus_jax.variants import Variant, get_variant

ILLEGAL_ACTION_MODES = ("penalize", "raise")

#: Registered ids: name stem -> core variant name.
GYM_IDS: dict[str, str] = {
    "BlokusClassic": "classic",
    "BlokusClassic2P": "classic_2p",
    "BlokusClassic3P": "classic_3p",
    "BlokusDuo": "duo",
    "BlokusJunior": "junior",
    "BlokusSimple": "simple",
}


# ------------------------------------------------------------------------------------------------- shared core
class _Game:
    """Everything the single and the vector env share for one configuration: the core `Env`, the spaces and
    the pure `turn` and `view` functions (jitted once per configuration, see `_game`)."""

    def __init__(
        self, variant: Variant | Env, opponents: Any, reward: str, illegal_action_penalty: float, max_steps: int | None
    ):
        self.env = (
            variant
            if isinstance(variant, Env)
            else make(variant, reward=reward, illegal_action_penalty=illegal_action_penalty, max_steps=max_steps)
        )
        env = self.env
        self.policies = resolve_opponents(opponents, env)
        rows, cols = env.board_shape
        c, p = env.num_colors, env.num_pieces
        self.observation_space = spaces.Dict(
            {
                "planes": spaces.Box(0.0, 1.0, (rows, cols, 2 * c), np.float32),
                "pieces": spaces.Box(0.0, 1.0, (c, p), np.float32),
                "to_move": spaces.Box(0.0, 1.0, (c,), np.float32),
                "action_mask": spaces.MultiBinary(env.num_actions),
            }
        )
        self.step = jax.jit(self.turn_and_view)
        self.batch_step = jax.jit(self._batch_step, static_argnames="same_step")

    def opponent_action(self, key: jax.Array, state: State, seat: jax.Array) -> jax.Array:
        """The action of the opponent to move: policy `k` plays the `k`-th player after the learner."""
        if all(p is self.policies[0] for p in self.policies):
            return self.policies[0](key, state)
        index = (state.current_player - seat - 1) % self.env.num_players
        return jax.lax.switch(jnp.clip(index, 0, len(self.policies) - 1), self.policies, key, state)

    def turn(
        self, state: State, key: jax.Array, seat: jax.Array, action: jax.Array, fresh: jax.Array, seed: jax.Array
    ) -> tuple[State, jax.Array]:
        """Play the learner's `action` (or, when `fresh`, start a new game with PRNG `seed` instead), then the
        opponents until the learner is to move or the game is over. Returns the new state and key.

        The learner's move is the first pass of the same loop that plays the opponents, so `Env.step` is traced
        once (half the compile time of a separate step)."""
        env = self.env
        key = jnp.where(fresh, jax.random.PRNGKey(seed), key)
        state = jax.tree.map(lambda a, b: jnp.where(fresh, a, b), env.init(), state)

        def waiting(carry):
            s, _, pending = carry
            return pending | (~(s.terminated | s.truncated) & (s.current_player != seat))

        def move(carry):
            s, k, pending = carry
            k_next, sub = jax.random.split(k)
            a = jax.lax.cond(pending, lambda: action, lambda: self.opponent_action(sub, s, seat))
            return env.step(s, a), jnp.where(pending, k, k_next), jnp.bool_(False)

        state, key, _ = jax.lax.while_loop(waiting, move, (state, key, ~fresh))
        return state, key

    def view(self, state: State, seat: jax.Array) -> tuple[dict, jax.Array, jax.Array, jax.Array, jax.Array]:
        """The learner's observation dict, reward, terminated, truncated and the players' scores."""
        obs = self.env.observe(state, seat)
        out = {
            "planes": obs.planes,
            "pieces": obs.pieces,
            "to_move": obs.to_move,
            "action_mask": state.legal_action_mask.astype(jnp.int8),
        }
        return out, state.rewards[seat], state.terminated, state.truncated, self.env.player_scores(state)

    def turn_and_view(self, state, key, seat, action, fresh, seed):
        state, key = self.turn(state, key, seat, action, fresh, seed)
        return state, key, self.view(state, seat)

    def _batch_step(self, state, key, seat, action, fresh, seed, next_seat, next_seed, same_step: bool):
        """Vmapped `turn_and_view`. With `same_step` a game that ends is restarted in the same call (with
        `next_seed` and `next_seat`). Returns `(state, key, seat, view, terminal_view)`; the terminal view
        differs from the view only for games restarted this way."""
        step = jax.vmap(self.turn_and_view)
        state, key, view = step(state, key, seat, action, fresh, seed)
        if not same_step:
            return state, key, seat, view, view
        done = view[2] | view[3]

        def restart(args):
            state, key, seat, view = args
            seat = jnp.where(done, next_seat, seat)
            new_state, new_key, new_view = step(state, key, seat, action, done, next_seed)
            pick = lambda a, b: jnp.where(done.reshape(-1, *[1] * (a.ndim - 1)), a, b)  # noqa: E731
            return (
                jax.tree.map(pick, new_state, state),
                pick(new_key, key),
                seat,
                (jax.tree.map(pick, new_view[0], view[0]), *view[1:4], pick(new_view[4], view[4])),
            )

        # lax.cond skips the restart pass entirely on the (common) steps where no game ends
        state, key, seat, fresh_view = jax.lax.cond(jnp.any(done), restart, lambda args: args, (state, key, seat, view))
        return state, key, seat, fresh_view, view


@functools.lru_cache(maxsize=64)
def _cached_game(*config) -> _Game:
    return _Game(*config[:-1])  # the last entry is the opponents' identity, only a cache key


def _game(
    variant: str | Variant | Env,
    opponents: Any,
    reward: str,
    illegal_action_penalty: float,
    max_steps: int | None,
    overrides: dict,
) -> _Game:
    """The `_Game` of a configuration, shared by equal configurations (so the many envs of a
    `SyncVectorEnv` share compiled code); unhashable opponent specs get a private one."""
    if isinstance(variant, Env):
        if overrides:
            raise ConfigError(
                f"variant overrides {sorted(overrides)} cannot apply to a ready Env; pass a variant "
                f"name or Variant instead"
            )
    else:
        variant = get_variant(variant, **overrides)
    opponents = tuple(opponents) if isinstance(opponents, list) else opponents
    config = (variant, opponents, reward, illegal_action_penalty, max_steps)
    try:
        hash(config)
    except TypeError:
        return _Game(*config)
    # keyed on what the opponents load, too: a run directory retrained since is loaded again
    return _cached_game(*config, opponents_identity(opponents))


def _draw_episode(rng: np.random.Generator, seat: int | str, num_players: int) -> tuple[np.uint32, int]:
    """The PRNG seed of the opponents and the learner's seat for a new episode, drawn from the env's RNG."""
    seed = rng.integers(0, 2**32, dtype=np.uint32)
    drawn = int(rng.integers(num_players)) if seat == "random" else int(seat)
    return seed, drawn


def _check_config(game: _Game, seat: int | str, illegal_action: str) -> None:
    n = game.env.num_players
    if not (seat == "random" or (is_int(seat) and 0 <= seat < n)):
        raise ConfigError(
            f"seat {seat!r} is not a player of {game.env.variant.name!r}; pass an int in [0, {n}) or 'random'"
        )
    if illegal_action not in ILLEGAL_ACTION_MODES:
        raise ConfigError(f"illegal_action {illegal_action!r} is not one of {list(ILLEGAL_ACTION_MODES)}")


def _check_seed(seed: Any) -> int | None:
    """`seed` as a Python int (NumPy integers accepted) or `None`; raises `ConfigError` otherwise."""
    if seed is None:
        return None
    if not is_int(seed) or seed < 0:
        raise ConfigError(f"seed {seed!r} is not a non-negative int; pass an int >= 0 or None")
    return int(seed)


def _reset_seat(game: _Game, options: Any) -> int | None:
    """The seat a `reset` option fixes for the episode (`None` when not given), after checking the options."""
    if options is None:
        return None
    if not isinstance(options, dict):
        raise ConfigError(f"reset options {options!r} must be a dict such as {{'seat': 0}} or None")
    unknown = sorted(map(repr, set(options) - {"seat"}))
    if unknown:
        raise ConfigError(f"unknown reset options {', '.join(unknown)}; the only option is 'seat'")
    if "seat" not in options:
        return None
    seat = options["seat"]
    n = game.env.num_players
    if not is_int(seat) or not 0 <= seat < n:
        raise ConfigError(f"seat {seat!r} is not a player of {game.env.variant.name!r}; pass an int in [0, {n})")
    return int(seat)


def _to_numpy(tree: Any) -> Any:
    """Fresh, writable NumPy copies of a pytree of device arrays (one transfer per leaf)."""
    return jax.tree.map(np.array, tree)


# --------------------------------------------------------------------------------------------------- single env
class BlokusGymEnv(gymnasium.Env):
    """One learner seat of a Blokus game against opponent policies, as a `gymnasium.Env` (see the module doc).

    Args:
        variant: a registered variant name, a `Variant` or a ready `Env`.
        seat: the learner's player index, or `"random"` for a seat drawn per episode.
        opponents: a bot name (`"random"`, `"greedy"`, `"corners"`, ...), a pure policy `(key, state) ->
            action`, or a list of `num_players - 1` of them for the players after the learner in turn order.
        reward: `"winloss"` or `"score"` (see `blokus_jax.make`).
        illegal_action: `"penalize"` or `"raise"` for an in-range action the mask forbids.
        illegal_action_penalty: the learner's reward for an illegal action under `"penalize"`.
        max_steps: truncate games after this many core steps (all players' moves).
        render_mode: `"ansi"`, `"rgb_array"`, `"human"` (prints the text board) or `None`.
        **overrides: fields of the variant to replace (e.g. `board_shape`).

    Raises:
        ConfigError: `seat` is not a player of the variant nor `"random"`, `illegal_action` or `render_mode` is
            not a known mode, `overrides` are given with a ready `Env`, or `opponents` is not a spec, a policy
            or a list of exactly `num_players - 1` of them.
        VariantError: An unknown variant name or field, or a bad `reward`, `max_steps` or
            `illegal_action_penalty` (see `blokus_jax.make`).
        AgentSpecError: An opponent spec names no agent, has a bad option, or names a missing run directory.
        CheckpointError: An opponent's run directory or baseline cannot be loaded for this variant.
    """

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 2}

    def __init__(
        self,
        variant: str | Variant | Env = "duo",
        *,
        seat: int | str = 0,
        opponents: str | Policy | Sequence[str | Policy] | None = "random",
        reward: str = "winloss",
        illegal_action: str = "penalize",
        illegal_action_penalty: float = -1.0,
        max_steps: int | None = None,
        render_mode: str | None = None,
        **overrides,
    ):
        self._game = _game(variant, opponents, reward, illegal_action_penalty, max_steps, overrides)
        _check_config(self._game, seat, illegal_action)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}")
        self.core = self._game.env
        self.seat_option = seat
        self.illegal_action = illegal_action
        self.render_mode = render_mode
        self.observation_space = self._game.observation_space
        self.action_space = spaces.Discrete(self.core.num_actions)
        self.seat = 0 if seat == "random" else int(seat)
        self._state = self.core.init()
        self._key = jax.random.PRNGKey(0)
        self._mask: np.ndarray | None = None
        self._done = True

    @property
    def state(self) -> State:
        """The current core `State` (a device pytree; read it, do not step it yourself)."""
        return self._state

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        """Start a new game and let the opponents before the learner move.

        Args:
            seed: Reseeds the env's RNG (a non-negative int; NumPy integers are accepted); `None` keeps it.
            options: `{"seat": k}` fixes the learner's seat for this episode; `None` draws it as configured.

        Returns:
            `(observation, info)`.

        Raises:
            ConfigError: A bad seed, options that are not a dict, an unknown option, or a seat that is not a
                player; nothing changes.
        """
        seed, seat = _check_seed(seed), _reset_seat(self._game, options)
        super().reset(seed=seed)
        game_seed, drawn = _draw_episode(self.np_random, self.seat_option, self.core.num_players)
        self.seat = drawn if seat is None else seat
        obs, *_ = self._advance(self.core.pass_action, fresh=True, seed=game_seed)
        return obs, self._info()

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        """Play the learner's action and the opponents' replies.

        Args:
            action: One integer action index.

        Returns:
            `(observation, reward, terminated, truncated, info)`; with `illegal_action="penalty"` an illegal
            action ends the game and `info["illegal_action"]` says why.

        Raises:
            RejectedActionError: A malformed action, a step before `reset` or after the end, or (with
                `illegal_action="raise"`) a forbidden one; the env is unchanged.
        """
        index = action_index(action, self.core.num_actions)
        if self._mask is None:
            raise RejectedActionError("step() before reset(); call reset() first", action, "game_over")
        illegal = None
        if not self._mask[index]:
            error = rejection(self.core, self._state, index)
            if self.illegal_action == "raise" or error.reason == "game_over":
                raise error
            illegal = str(error)
        obs, reward, terminated, truncated = self._advance(index, fresh=False, seed=np.uint32(0))
        info = self._info()
        if illegal is not None:
            info["illegal_action"] = illegal
        return obs, reward, terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """`bool[num_actions]` legal actions of the learner now (the hook sb3-contrib's `MaskablePPO` calls)."""
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The position as text (`"ansi"`), an RGB array (`"rgb_array"`), printed text (`"human"`) or
        `None` without a render mode."""
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode; pass render_mode= to the constructor")
        return render_state(self._state, self.core, self.render_mode)

    def _advance(self, action: int, fresh: bool, seed: np.uint32) -> tuple[dict, float, bool, bool]:
        self._state, self._key, view = self._game.step(
            self._state, self._key, np.int32(self.seat), np.int32(action), np.bool_(fresh), seed
        )
        obs, reward, terminated, truncated, scores = _to_numpy(view)
        self._mask = obs["action_mask"]
        self._scores = scores
        self._done = bool(terminated) or bool(truncated)
        return obs, float(reward), bool(terminated), bool(truncated)

    def _info(self) -> dict:
        return {"action_mask": self._mask.copy(), "seat": self.seat, "player_scores": self._scores.copy()}


# --------------------------------------------------------------------------------------------------- vector env
class BlokusVectorEnv(VectorEnv):
    """`num_envs` learner-vs-opponents games stepped together by one jitted, vmapped device call per `step`.

    Observations are the single env's dict with a leading batch axis; `infos` follow Gymnasium's vector
    convention (`infos[key]` an array over sub-envs, `infos["_" + key]` which entries are set).

    Args:
        num_envs: Games stepped together.
        variant: As for `BlokusGymEnv`; so are `seat`, `opponents`, `reward`, `illegal_action`,
            `illegal_action_penalty`, `max_steps` and `**overrides`.
        autoreset_mode: `AutoresetMode.NEXT_STEP` (the default) or `SAME_STEP`; see the module doc.
        render_mode: Must be `None`: the vector env does not render.

    Raises:
        ConfigError: `num_envs` is not a positive int, `autoreset_mode` is not `NEXT_STEP` or `SAME_STEP`,
            `render_mode` is given, or an argument shared with `BlokusGymEnv` is bad (see there; so are the
            other errors it raises).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(
        self,
        num_envs: int = 1,
        variant: str | Variant | Env = "duo",
        *,
        seat: int | str = 0,
        opponents: str | Policy | Sequence[str | Policy] | None = "random",
        reward: str = "winloss",
        illegal_action: str = "penalize",
        illegal_action_penalty: float = -1.0,
        max_steps: int | None = None,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        render_mode: str | None = None,
        **overrides,
    ):
        if not is_int(num_envs) or num_envs < 1:
            raise ConfigError(f"num_envs must be a positive int, got {num_envs!r}")
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError as exc:
            raise ConfigError(f"autoreset_mode {autoreset_mode!r} is not one of NEXT_STEP, SAME_STEP") from exc
        if mode not in (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP):
            raise ConfigError(f"autoreset_mode {mode} is not supported; use NEXT_STEP or SAME_STEP")
        if render_mode is not None:
            raise ConfigError("BlokusVectorEnv does not render; use BlokusGymEnv or blokus_jax.io.render on one state")
        self._game = _game(variant, opponents, reward, illegal_action_penalty, max_steps, overrides)
        _check_config(self._game, seat, illegal_action)
        self.core = self._game.env
        self.num_envs = int(num_envs)
        self.seat_option = seat
        self.illegal_action = illegal_action
        self.autoreset_mode = mode
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.render_mode = None
        self.single_observation_space = self._game.observation_space
        self.single_action_space = spaces.Discrete(self.core.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        n = self.num_envs
        self._state = jax.vmap(lambda _: self.core.init())(jnp.arange(n))
        self._key = jnp.zeros((n, 2), jnp.uint32)
        self._rngs: list[np.random.Generator] = []
        self._mask: np.ndarray | None = None
        self._needs_reset = np.zeros(n, bool)

    @property
    def state(self) -> State:
        """The batched core `State` of the sub-envs (leading axis `num_envs`)."""
        return self._state

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict, dict]:
        """Start `num_envs` new games.

        Args:
            seed: One int (sub-env `i` is seeded with `seed + i`) or one seed a sub-env (`seed[i]`); NumPy
                integers are accepted; `None` for fresh entropy.
            options: `{"seat": k}` fixes the learner's seat of this episode in every sub-env.

        Returns:
            The batched `(observations, infos)`.

        Raises:
            ConfigError: A bad seed or wrong number of seeds, or bad options; nothing changes.
        """
        n = self.num_envs
        if seed is None:
            seeds = [None] * n
        elif is_int(seed):
            seeds = [_check_seed(seed) + i for i in range(n)]
        elif isinstance(seed, (str, bytes, dict)) or not hasattr(seed, "__len__"):
            raise ConfigError(f"seed {seed!r} is neither an int nor a sequence of {n} ints; pass one of those")
        else:
            seeds = [_check_seed(s) for s in seed]
            if len(seeds) != n:
                raise ConfigError(f"got {len(seeds)} seeds for {n} sub-environments; pass one int or {n} seeds")
        seat = _reset_seat(self._game, options)
        rngs = [seeding.np_random(s)[0] for s in seeds]
        first = [_draw_episode(rng, self.seat_option, self.core.num_players) for rng in rngs]
        seats = np.asarray([s if seat is None else seat for _, s in first], np.int32)
        upcoming = [_draw_episode(rng, self.seat_option, self.core.num_players) for rng in rngs]
        self._state, self._key, _, view, _ = self._game.batch_step(
            self._state,
            self._key,
            seats,
            np.full(n, self.core.pass_action, np.int32),
            np.ones(n, bool),
            np.asarray([s for s, _ in first], np.uint32),
            seats,
            np.zeros(n, np.uint32),
            same_step=False,
        )
        self._rngs, self._seat, self._next = rngs, seats, upcoming
        obs, _, _, _, scores = _to_numpy(view)
        self._needs_reset[:] = False
        self._mask = obs["action_mask"]
        return obs, self._infos(scores)

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every sub-env with its action (sub-envs that finished last step restart instead under
        `NEXT_STEP`).

        Args:
            actions: `num_envs` integer action indices.

        Returns:
            The batched `(observations, rewards, terminations, truncations, infos)`.

        Raises:
            RejectedActionError: Malformed actions, a step before `reset`, or (with `illegal_action="raise"`) a
                forbidden action in some sub-env (the message names the first); nothing changes.
        """
        if self._mask is None:
            raise RejectedActionError("step() before reset(); call reset() first", actions, "game_over")
        n = self.num_envs
        actions = action_batch(actions, n, self.core.num_actions)
        playing = ~self._needs_reset
        illegal = np.flatnonzero(playing & (self._mask[np.arange(n), actions] == 0))
        if illegal.size and self.illegal_action == "raise":
            i = int(illegal[0])
            state = jax.tree.map(lambda x: x[i], self._state)
            raise rejection(self.core, state, int(actions[i]), prefix=f"sub-environment {i}: ")
        same_step = self.autoreset_mode == AutoresetMode.SAME_STEP
        fresh = self._needs_reset.copy()
        seeds, seats = np.zeros(n, np.uint32), self._seat.copy()
        for i in np.flatnonzero(fresh):  # NEXT_STEP: these restart now, with their pre-drawn episode
            seeds[i], seats[i] = self._take_next(i)
        next_seeds = np.asarray([s for s, _ in self._next], np.uint32)
        next_seats = np.asarray([s for _, s in self._next], np.int32)
        self._state, self._key, seat_dev, view, final = self._game.batch_step(
            self._state, self._key, seats, actions, fresh, seeds, next_seats, next_seeds, same_step=same_step
        )
        obs, rewards, terminated, truncated, scores = _to_numpy(view)
        done = terminated | truncated
        infos: dict[str, Any] = {}
        if same_step and done.any():
            final_obs, _, _, _, final_scores = _to_numpy(final)
            for i in np.flatnonzero(done):
                single = {k: v[i] for k, v in final_obs.items()}
                info = {
                    "action_mask": single["action_mask"].copy(),
                    "seat": int(seats[i]),
                    "player_scores": final_scores[i],
                }
                infos = self._add_info(infos, {"final_obs": single, "final_info": info}, i)
                self._take_next(i)
            self._seat = np.asarray(seat_dev)
        else:
            self._seat = seats
            self._needs_reset = done
            rewards = np.where(fresh, 0.0, rewards)
        self._mask = obs["action_mask"]
        infos.update(self._infos(scores))
        if illegal.size:
            infos["illegal_action"] = np.isin(np.arange(n), illegal)
            infos["_illegal_action"] = np.ones(n, bool)
        return obs, rewards.astype(np.float64), terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """`bool[num_envs, num_actions]` legal actions of every sub-env's learner now."""
        return self._mask.astype(bool)

    def _take_next(self, i: int) -> tuple[np.uint32, int]:
        """Sub-env `i`'s pre-drawn next episode; draws the one after it from the sub-env's RNG."""
        episode = self._next[i]
        self._next[i] = _draw_episode(self._rngs[i], self.seat_option, self.core.num_players)
        return episode

    def _infos(self, scores: np.ndarray) -> dict:
        ones = np.ones(self.num_envs, bool)
        return {
            "action_mask": self._mask.copy(),
            "_action_mask": ones,
            "seat": self._seat.astype(np.int64),
            "_seat": ones.copy(),
            "player_scores": scores,
            "_player_scores": ones.copy(),
        }


# ------------------------------------------------------------------------------------------------- registration
def register_envs() -> None:
    """Register every `Blokus<Variant>-v0` and `Blokus<Variant>Greedy-v0` id (idempotent; done on import)."""
    for stem, variant in GYM_IDS.items():
        for suffix, opponents in (("", "random"), ("Greedy", "greedy")):
            env_id = f"{stem}{suffix}-v0"
            if env_id in gymnasium.registry:
                continue
            gymnasium.register(
                env_id,
                entry_point=f"{__name__}:BlokusGymEnv",
                vector_entry_point=f"{__name__}:BlokusVectorEnv",
                kwargs={"variant": variant, "opponents": opponents},
                disable_env_checker=False,
            )


register_envs()

__all__ = ["BlokusGymEnv", "BlokusVectorEnv", "GYM_IDS", "ILLEGAL_ACTION_MODES", "RejectedActionError", "register_envs"]
