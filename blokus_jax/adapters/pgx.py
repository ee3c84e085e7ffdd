"""Pgx adapter: a Blokus variant as a `pgx.Env`, for JAX code written against Pgx's API (its AlphaZero example,
PPO for board games, `pgx.api_test`).

`PgxEnv("duo")` subclasses `pgx.Env` (`_init`, `_step`, `_observe`, `id`, `version`,
`num_players`), so `init` / `step` / `observe` are Pgx's own and pure, and work under `jax.jit` and
`jax.vmap`. Its `State` is a `pgx.State`:

* `current_player` `int32`: the player to move (the core's `current_player`; in `classic_2p` a player
  moves two colours, in `classic_3p` the shared colour is placed in turn).
* `observation` `bool[H, W, 2C]`: the egocentric board planes of `blokus_jax.observe` for the player to
  move (occupancy of each colour, then each colour's corner cells; the colour to move first), the same planes as the
  PettingZoo adapter's `observation` (as bool rather than float32, a quarter of the bytes; the pieces left are
  recoverable from the board, a colour's pieces never share an edge).
* `legal_action_mask` `bool[num_actions]`: stored (Pgx reads it as a field), in the core's dense action layout
  (the last index is the pass, legal exactly when nothing can be placed); all True once the game has ended, as Pgx
  requires (so a policy can normalise over it; any action then leaves the state unchanged).
* `rewards` `float32[num_players]`, zero until the end, then the core's (`reward="winloss"`: the best share
  +1, the others -1; `"score"`: the score margin). `terminated`, `truncated` (`max_steps`), `_step_count`.
* `_core`: the core `blokus_jax.State` (read it for scores, the board, records); `_variant` (static).

**Illegal actions** follow Pgx's rule (`pgx.core.Env._step_with_illegal_action`): the game terminates, the
offender gets the penalty (`illegal_action_penalty`, default -1) and every other player `(n - 1)` times its
magnitude (+1 with two players, +3 with four); the board is left as it was. This
differs from the core, which gives the others 0: `state._core.rewards` keeps the core's rule.

**Cost.** The core keeps its mask packed and computes observations on demand; a Pgx state stores both, as Pgx's
API demands: a Pgx state is the core state plus `num_actions` mask bytes, `H * W * 2C` observation bytes and
`10 + 4 * num_players` bytes of small fields (`tests/adapters/test_pgx.py` checks the sum). Per unbatched state:
`simple` 897 core vs 2,484 Pgx, `duo` 5,380 vs 24,019, `classic` 7,838 vs 47,465 (`state_bytes`).

**Ids.** `env.id` is `"blokus_<variant>"` (`blokus_duo`, ...); a custom variant that reuses a registered name
with other rules (a 10x10 board named `duo`) gets `"blokus_<name>_custom_<8 hex digits>"` instead, the digits a
digest of its rules, so that no two different games share an id (`env_id`).

**Pgx's own check.** `pgx.api_test(PgxEnv("duo"))` stops at once with a bare `AssertionError`: it checks
`state.env_id` against its closed list `pgx.EnvId`, which names Pgx's own games only. Run it as
`blokus_jax.adapters.pgx.api_test(PgxEnv("duo"))`: Pgx's same `api_test`, with the env's id added to that list and
the harness's random mover sampling over the mask's last axis (its `axis=1` fails on one state's mask under
current JAX, for Pgx's own games too), both only while it runs.

**What the adapter accepts** (Pgx's conventions, checked with the project's errors, when the step or observation
is traced where the fact is static under `jit`):

* `step(state, action)`: one unbatched `State` of this env's variant (a batch is stepped with
  `jax.vmap(env.step)`; a batched state raises `ConfigError`, a state of another
  variant `VariantError`) and one integer action of shape `()`; a bool, a float or an
  array of several values raises `ActionTypeError`. An integer outside
  `[0, num_actions)`, however large (`2**40`), is an illegal action and gets Pgx's rule below (under
  `jax.jit` JAX itself converts a Python int argument to int32 first and raises `OverflowError` outside that
  range: pass actions as `int32` arrays there, as Pgx does).
* `observe(state, player_id)`: `player_id` an integer in `[0, num_players)`; anything else (`5`, `-1`,
  `1.5`, `True`) raises `ConfigError`. A traced id (inside `jit`) is checked for
  dtype and shape only, as its value is unknown then.
* `illegal_action_penalty` at most 0 (Pgx's rule pays the other players its magnitude; a positive penalty would
  reward the offender): `ConfigError` otherwise.
* `to_svg` / `save_svg`: `scale` a finite positive number, `color_theme` `None`, `"light"` or
  `"dark"`.

For example:

```python
import jax
from blokus_jax.adapters.pgx import PgxEnv

env = PgxEnv("duo")
state = jax.jit(env.init)(jax.random.key(0))
state = jax.jit(env.step)(state, jax.numpy.argmax(state.legal_action_mask))
state.save_svg("duo.svg")
```
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import numbers
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, get_args

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from blokus_jax import _extras
from blokus_jax import env as core_env
from blokus_jax.env import Env, action_id, make
from blokus_jax.errors import ConfigError, VariantError
from blokus_jax.io import fileio
from blokus_jax.variants import Variant, get_variant, variant_names

_extras.require("pgx", "blokus_jax.adapters.pgx (the Pgx adapter)")
import pgx  # noqa: E402 (after the check that names the extra)

#: Version of this adapter's behaviour (bumped when the observation, rewards or ids change).
VERSION = "v0"


@struct.dataclass
class State(pgx.State):
    """A Blokus position as a `pgx.State` (see the module doc for every field). `_core` is the core
    `blokus_jax.State`; `_variant` the `Variant` (static, not a pytree leaf)."""

    current_player: jax.Array
    observation: jax.Array
    rewards: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    legal_action_mask: jax.Array
    _step_count: jax.Array
    _core: core_env.State
    _variant: Variant = struct.field(pytree_node=False)

    @property
    def env_id(self) -> str:
        """`"blokus_<variant name>"`, the same as `PgxEnv.id`."""
        return env_id(self._variant)

    def to_svg(self, *, color_theme: str | None = None, scale: float | None = None) -> str:
        """The position drawn by `blokus_jax.io.render.to_svg` (a batch of states is drawn as a grid, as Pgx's
        visualiser does). `scale` (a finite positive number) multiplies the picture's size; `color_theme`
        (`None`, `"light"` or `"dark"`) is accepted for Pgx's signature (the project's palette is colour-blind
        safe and has one theme). Returns the SVG document; raises `ConfigError` for
        another scale or theme."""
        from blokus_jax.io import render

        _check_picture_options(color_theme, scale)
        cell = max(4, round(24 * (1.0 if scale is None else float(scale))))
        core = jax.device_get(self._core)
        if core.board.ndim == 2:
            return render.to_svg(core, self._variant, cell=cell)
        flat = jax.tree.map(lambda x: x.reshape((-1, *x.shape[core.board.ndim - 2 :])), core)
        pictures = [
            render.to_svg(jax.tree.map(lambda x: x[i], flat), self._variant, cell=cell) for i in range(len(flat.board))
        ]
        return _grid(pictures)

    def save_svg(self, filename: str | Path, *, color_theme: str | None = None, scale: float | None = None) -> None:
        """Write `to_svg` to `filename`, which must end in `.svg` (as in Pgx).

        The file is written atomically and never through a symbolic link (`blokus_jax.io.fileio.write_atomic`).

        Args:
            filename: The path to write, ending in `.svg`.
            color_theme: `None`, `"light"` or `"dark"`, as for `to_svg`.
            scale: A finite positive size factor, as for `to_svg`.

        Raises:
            ConfigError: `filename` does not end in `.svg`, or another scale or theme than `to_svg` takes.
        """
        if not str(filename).endswith(".svg"):
            raise ConfigError(f"save_svg writes SVG: {str(filename)!r} must end with '.svg'")
        _check_picture_options(color_theme, scale)
        # atomic, never through a symbolic link
        fileio.write_atomic(filename, self.to_svg(color_theme=color_theme, scale=scale), what="SVG picture")


def _check_picture_options(color_theme: Any, scale: Any) -> None:
    """Refuse what Pgx's visualiser does not take: a `scale` that is not a finite positive number, a
    `color_theme` other than `None`, `"light"` or `"dark"`."""
    if color_theme not in (None, "light", "dark"):
        raise ConfigError(f"color_theme must be None, 'light' or 'dark' (Pgx's themes), got {color_theme!r}")
    if scale is None:
        return
    if isinstance(scale, bool) or not isinstance(scale, numbers.Real) or not math.isfinite(scale) or scale <= 0:
        raise ConfigError(f"scale must be a finite positive number (1.0 = the default size), got {scale!r}")


def _grid(pictures: list[str], columns: int = 4) -> str:
    """SVG documents laid out in a grid of `columns` inside one SVG document."""
    header = re.compile(r'<svg[^>]* width="([\d.]+)" height="([\d.]+)"')
    sizes = [tuple(float(v) for v in header.match(p).groups()) for p in pictures]
    width, height = max(w for w, _ in sizes), max(h for _, h in sizes)
    rows = -(-len(pictures) // columns)
    cols = min(columns, len(pictures))
    placed = [
        p.replace("<svg ", f'<svg x="{(i % columns) * width:g}" y="{(i // columns) * height:g}" ', 1)
        for i, p in enumerate(pictures)
    ]
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{cols * width:g}" height="{rows * height:g}">\n'
        + "".join(placed)
        + "</svg>\n"
    )


def env_id(variant: Variant) -> str:
    """The Pgx id of a variant: `"blokus_" + variant.name`, except for a custom variant that reuses a registered
    name with other rules (a 10x10 `duo`): `"blokus_<name>_custom_<digest>"`, where the 8 hex digits are a digest
    of its rules (its records-format JSON), so that a custom game never passes for the registered one."""
    if variant.name in variant_names() and variant != get_variant(variant.name):
        from blokus_jax.io.record_json import variant_to_dict

        text = json.dumps(variant_to_dict(variant), sort_keys=True, separators=(",", ":"))
        return f"blokus_{variant.name}_custom_{hashlib.sha256(text.encode()).hexdigest()[:8]}"
    return f"blokus_{variant.name}"


class PgxEnv(pgx.Env):
    """A Blokus variant as a `pgx.Env` (see the module doc for the state, observation, rewards and costs).

    Args:
        variant_or_name: a registered variant name (`"duo"`, ...), a `Variant` or a ready
            `Env` (whose reward mode, penalty and `max_steps` are then used).
        reward: `"winloss"` or `"score"` (see `blokus_jax.make`).
        illegal_action_penalty: the offender's reward for an illegal action, at most 0 (Pgx's rule gives the others
            `-(n - 1)` times it).
        max_steps: truncate after this many steps (`truncated` is set; Pgx's step then leaves the state alone).
        **overrides: variant fields to replace (e.g. `board_shape`).

    Raises:
        ConfigError: A positive penalty (also that of a ready `Env`), or `overrides` given with a ready `Env`.
        VariantError: An unknown variant or field, a bad override, or a bad `reward` or `max_steps`.
    """

    def __init__(
        self,
        variant_or_name: str | Variant | Env = "duo",
        *,
        reward: str = "winloss",
        illegal_action_penalty: float = -1.0,
        max_steps: int | None = None,
        **overrides,
    ):
        super().__init__()
        if isinstance(variant_or_name, Env):
            if overrides:
                raise ConfigError(
                    f"variant overrides {sorted(overrides)} cannot apply to a ready Env; pass a variant name or "
                    f"Variant instead"
                )
            self.core = variant_or_name
        else:
            self.core = make(
                get_variant(variant_or_name, **overrides),
                reward=reward,
                illegal_action_penalty=illegal_action_penalty,
                max_steps=max_steps,
            )
        if self.core.illegal_action_penalty > 0:
            raise ConfigError(
                f"illegal_action_penalty must be at most 0, got {self.core.illegal_action_penalty!r}: Pgx's rule gives "
                f"the offender the penalty and every other player its magnitude, so a positive value would reward "
                f"an illegal action; pass a value <= 0 (default -1)"
            )

    def __repr__(self) -> str:
        return f"PgxEnv({self.core.variant.name!r}, reward={self.core.reward!r})"

    @property
    def variant(self) -> Variant:
        """The `Variant` played."""
        return self.core.variant

    # ------------------------------------------------------------------------------------------------ pgx.Env
    def step(self, state: State, action: Any, key: jax.Array | None = None) -> State:
        """Pgx's step (its illegal-action rule, the stored mask, the observation) after checking, when it is
        called or traced, that `state` is one unbatched state of this variant and `action` one integer (see
        the module doc).

        Args:
            state: One unbatched state of this variant (`jax.vmap` the step for a batch).
            action: One integer action index.
            key: Accepted for Pgx's API; Blokus has no chance.

        Returns:
            The next `State`.

        Raises:
            ConfigError: `state` is not one unbatched state of this env.
            VariantError: `state` is of another variant.
            ActionTypeError: `action` is not one integer.
        """
        self._check_state(state, "step")
        return super().step(state, action_id(action), key)

    def observe(self, state: State, player_id: Any = None) -> jax.Array:
        """Pgx's observe.

        Args:
            state: One unbatched state of this variant.
            player_id: Whose view; default the player to move (Pgx deprecates the argument and warns).

        Returns:
            `bool[H, W, 2C]` planes.

        Raises:
            ConfigError: A player id that is not an integer in `[0, num_players)`, or a state that is not one
                unbatched state of this env.
            VariantError: `state` is of another variant.
        """
        self._check_state(state, "observe")
        if player_id is not None:
            player_id = self._check_player(player_id)
        return super().observe(state, player_id)

    def _init(self, key: jax.Array) -> State:
        """The starting position (`key` is unused: Blokus has no chance); `observation` is filled by
        `pgx.Env.init`."""
        del key
        return self._wrap(self.core.init(), jnp.int32(0))

    def _step(self, state: State, action: jax.Array, key: jax.Array | None) -> State:
        """One core step. Pgx's `step` calls this only for a game in progress, with `_step_count` already
        advanced, and then applies its own illegal-action rule for actions its stored mask forbids; an action
        outside `[0, num_actions)` (which Pgx's mask lookup clamps) gets the same rule here."""
        del key
        legal = self.core.is_legal(state._core, action)
        core = self.core.step(state._core, action)
        moved = self._wrap(core, state._step_count, state.observation)
        penalised = self._step_with_illegal_action(moved, state.current_player)
        return jax.tree.map(lambda a, b: jnp.where(legal, a, b), moved, penalised)

    def _observe(self, state: State, player_id: jax.Array) -> jax.Array:
        """`bool[H, W, 2C]`: the egocentric board planes of `blokus_jax.observe` for `player_id`."""
        return self.core.observe(state._core, player_id).planes.astype(jnp.bool_)

    @property
    def id(self) -> str:
        """`"blokus_<variant name>"`."""
        return env_id(self.core.variant)

    @property
    def version(self) -> str:
        return VERSION

    @property
    def num_players(self) -> int:
        return self.core.num_players

    @property
    def num_actions(self) -> int:
        """Size of the action space (the core's: placements, then the pass)."""
        return self.core.num_actions

    @property
    def observation_shape(self) -> tuple[int, int, int]:
        """`(H, W, 2C)`."""
        rows, cols = self.core.board_shape
        return (rows, cols, 2 * self.core.num_colors)

    @property
    def _illegal_action_penalty(self) -> float:
        return self.core.illegal_action_penalty

    # ------------------------------------------------------------------------------------------------ internals
    def _check_state(self, state: Any, method: str) -> None:
        """Refuse anything but one unbatched `State` of this env's variant (static facts, checked when
        traced)."""
        if not isinstance(state, State):
            raise ConfigError(
                f"PgxEnv.{method} takes a State of this adapter (from env.init / env.step), got {type(state).__name__}"
            )
        if state._variant != self.variant:
            other = state._variant
            raise VariantError(
                f"PgxEnv.{method}: the state is of variant {other.name!r} ({other.board_shape[0]}x"
                f"{other.board_shape[1]}, {other.num_players} players, id {env_id(other)!r}), but this env plays "
                f"{self.variant.name!r} (id {self.id!r}); use the PgxEnv that made the state"
            )
        shape = jnp.shape(state.current_player)
        if shape != ():
            raise ConfigError(
                f"PgxEnv.{method} takes one state, got a batch of shape {shape}; map it over the batch: "
                f"jax.vmap(env.{method})(states, ...)"
            )

    def _check_player(self, player_id: Any) -> jax.Array:
        """`player_id` as an `int32` scalar after checking that it is one integer in `[0, num_players)` (the
        value only when it is concrete)."""
        n = self.num_players
        fix = f"pass a player index in [0, {n}) (the player to move is state.current_player)"
        if isinstance(player_id, (bool, np.bool_)):
            raise ConfigError(f"player_id {player_id!r} is a bool; {fix}")
        if isinstance(player_id, numbers.Integral):
            value = int(player_id)
        else:
            dtype = getattr(player_id, "dtype", None)
            if dtype is None or not jnp.issubdtype(dtype, jnp.integer):
                kind = type(player_id).__name__ if dtype is None else f"an array of dtype {dtype}"
                raise ConfigError(f"player_id {player_id!r} is {kind}, not an integer; {fix}")
            if jnp.shape(player_id) != ():
                raise ConfigError(f"player_id has shape {jnp.shape(player_id)}, not (); {fix}")
            if isinstance(player_id, jax.core.Tracer):  # traced: its value is not known here
                return jnp.asarray(player_id, jnp.int32)
            value = int(player_id)
        if not 0 <= value < n:
            raise ConfigError(f"player_id {value} is not a player of {self.variant.name!r}; {fix}")
        return jnp.int32(value)

    def _wrap(self, core: core_env.State, step_count: jax.Array, observation: jax.Array | None = None) -> State:
        """The Pgx state around a core state (the stored mask all True once the game is over)."""
        done = core.terminated | core.truncated
        if observation is None:
            observation = jnp.zeros(self.observation_shape, jnp.bool_)
        return State(
            current_player=core.current_player,
            observation=observation,
            rewards=core.rewards,
            terminated=core.terminated,
            truncated=core.truncated,
            legal_action_mask=core.legal_action_mask | done,
            _step_count=jnp.asarray(step_count, jnp.int32),
            _core=core,
            _variant=self.core.variant,
        )


def state_bytes(env: PgxEnv) -> tuple[int, int]:
    """`(core, pgx)`: bytes of one unbatched core state and of one Pgx state of `env` (all leaves)."""
    state = jax.jit(env.init)(jax.random.key(0))
    pgx_total = sum(leaf.nbytes for leaf in jax.tree.leaves(state))
    core_total = sum(leaf.nbytes for leaf in jax.tree.leaves(state._core))
    return core_total, pgx_total


@functools.cache
def api_test_env_ids() -> tuple[str, ...]:
    """The ids of every registered variant through this adapter (`blokus_classic`, ...), the names a test adds
    to `pgx.EnvId` before calling `pgx.api_test`."""
    return tuple(env_id(get_variant(name)) for name in variant_names())


def _act_randomly(key: jax.Array, legal_action_mask: jax.Array) -> jax.Array:
    """Pgx's `act_randomly` (a uniform legal action) over the mask's last axis, for one state or a batch."""
    return jax.random.categorical(key, jnp.log(legal_action_mask.astype(jnp.float32)), axis=-1)


@contextmanager
def api_test_harness(ids: tuple[str, ...]) -> Iterator[Any]:
    """Pgx's `api_test` module with `ids` added to the env ids it accepts and a random mover that samples over the
    mask's last axis, inside the `with` block only (both are put back after it, however it ends).

    Args:
        ids: The env ids to accept besides Pgx's own (`api_test_env_ids()`, or one env's `id`).

    Yields:
        The harness module, whose `api_test` is `pgx.api_test`.
    """
    import pgx._src.api_test as harness  # Pgx's own check; the module it reads its closed list from

    saved = harness.EnvId, harness.act_randomly
    harness.EnvId = Literal[get_args(pgx.EnvId) + tuple(ids)]
    harness.act_randomly = jax.jit(_act_randomly)
    try:
        yield harness
    finally:
        harness.EnvId, harness.act_randomly = saved


def api_test(env: pgx.Env, num: int = 100, use_key: bool = True) -> None:
    """Pgx's own check, `pgx.api_test`, on `env` (a `PgxEnv`, or any `pgx.Env`), inside `api_test_harness` with
    the env's id: `num` random games one by one and `num` batches of games, checking each state's fields, shapes
    and dtypes against Pgx's API.

    Args:
        env: The environment to check.
        num: Games of each kind (a full board compiles slowly: 1 is a quick check).
        use_key: Pgx's flag: whether `step` is given a key.

    Raises:
        AssertionError: `env` breaks Pgx's API (Pgx's harness raises it).
    """
    with api_test_harness((env.id,)) as harness:
        harness.api_test(env, num=num, use_key=use_key)


__all__ = [
    "PgxEnv",
    "State",
    "VERSION",
    "api_test",
    "api_test_env_ids",
    "api_test_harness",
    "env_id",
    "state_bytes",
]
