"""PettingZoo adapter: every player of a Blokus variant as an agent of an `AECEnv`.

Agents are `player_0`, `player_1`, ... (a player may own several colours: in `classic_2p` `player_0` acts
for colours 0 and 2; in `classic_3p` the shared colour is placed by whichever player's turn it is). Following
PettingZoo's classic games, `observe(agent)` returns `{"observation": float32[H, W, 2C], "action_mask":
int8[num_actions]}`: the board planes of `blokus_jax.observe` from that agent's point of view (occupancy of
each colour, then each colour's corner cells, own colours first; the pieces left are recoverable from the board
since a colour's pieces never share an edge) and the legal actions, set only for the agent to act. A colour that
cannot place is offered the pass alone, so the acting agent's mask is never all zero. Rewards are zero until the
game ends, then every agent gets its entry of the core's rewards and all agents are terminated together (truncated
together when `max_steps` is reached).

`raw_env(...)` is `BlokusAECEnv`: it raises `RejectedActionError` for a
malformed or illegal action and stays unchanged. `env(...)` adds PettingZoo's usual wrappers: an action check
that raises the same error for a value that is not an integer index in range, `TerminateIllegalWrapper` (an
illegal action ends the game with `illegal_action_penalty` for the agent that made it, as in PettingZoo's
classic games) and `OrderEnforcingWrapper`. `env.unwrapped.state` is the core state.

For example:

```python
from blokus_jax.adapters.pettingzoo import env as blokus_env
game = blokus_env("duo")
game.reset(seed=0)
for agent in game.agent_iter():
    obs, reward, terminated, truncated, info = game.last()
    action = None if terminated or truncated else game.action_space(agent).sample(obs["action_mask"])
    game.step(action)
```
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax import _extras

try:
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import wrappers
except ImportError:  # one line naming the extra instead of a bare ModuleNotFoundError
    _extras.require("pettingzoo", "blokus_jax.adapters.pettingzoo (the PettingZoo adapter)")
    raise

from blokus_jax.adapters._boundary import RejectedActionError, action_index, rejection, render_state
from blokus_jax.env import Env, State, make
from blokus_jax.errors import ConfigError
from blokus_jax.pieces import is_int
from blokus_jax.variants import Variant, get_variant


class BlokusAECEnv(AECEnv):
    """All players of a Blokus variant as PettingZoo AEC agents (see the module doc).

    Args:
        variant: a registered variant name, a `Variant` or a ready `Env`.
        reward: `"winloss"` or `"score"` (see `blokus_jax.make`).
        max_steps: truncate the game after this many moves (placements and passes).
        render_mode: `"ansi"`, `"rgb_array"`, `"human"` (prints the text board) or `None`.
        **overrides: fields of the variant to replace (e.g. `board_shape`).

    Raises:
        ConfigError: `render_mode` is not a known mode, or `overrides` are given with a ready `Env`.
        VariantError: An unknown variant name or field, or a bad `reward` or `max_steps`.
    """

    metadata = {
        "render_modes": ["ansi", "rgb_array", "human"],
        "name": "blokus_v0",
        "is_parallelizable": False,
        "render_fps": 2,
    }

    def __init__(
        self,
        variant: str | Variant | Env = "duo",
        *,
        reward: str = "winloss",
        max_steps: int | None = None,
        render_mode: str | None = None,
        **overrides,
    ):
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}")
        if isinstance(variant, Env):
            if overrides:
                raise ConfigError(
                    f"variant overrides {sorted(overrides)} cannot apply to a ready Env; pass a "
                    f"variant name or Variant instead"
                )
            self._fns = _compiled(variant)
        else:
            self._fns = _compiled_for(get_variant(variant, **overrides), reward, max_steps)
        self.core = core = self._fns.core
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(core.num_players)]
        self._agent_index = {a: i for i, a in enumerate(self.possible_agents)}
        rows, cols = core.board_shape
        self._observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, 1.0, (rows, cols, 2 * core.num_colors), np.float32),
                    "action_mask": spaces.Box(0, 1, (core.num_actions,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self._action_spaces = {a: spaces.Discrete(core.num_actions) for a in self.possible_agents}

    # -------------------------------------------------------------------------------------------- pettingzoo API
    def observation_space(self, agent: str) -> spaces.Dict:
        """The observation space of an agent (`{"observation", "action_mask"}`)."""
        return self._observation_spaces[self._check_agent(agent)]

    def action_space(self, agent: str) -> spaces.Discrete:
        """The action space of an agent: `Discrete(num_actions)`."""
        return self._action_spaces[self._check_agent(agent)]

    @property
    def state(self) -> State:
        """The current core `State` (a device pytree)."""
        return self._state

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start a new game.

        Args:
            seed: Accepted for the API (an int or `None`); Blokus has no chance, so it changes nothing.
            options: Accepted for the API (a dict or `None`) and ignored.

        Raises:
            ConfigError: A seed that is not an int or options that are not a dict; the env is as it was.
        """
        if seed is not None and not is_int(seed):
            raise ConfigError(f"seed {seed!r} is not an int; pass an int or None")
        if options is not None and not isinstance(options, dict):
            raise ConfigError(f"reset options {options!r} must be a dict or None")
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._state, view = self._fns.reset()
        self._absorb(view)

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """What one agent sees now.

        Args:
            agent: One of `possible_agents`.

        Returns:
            `{"observation", "action_mask"}`; the mask is all zero unless `agent` is to act.

        Raises:
            ConfigError: An unknown agent, or a call before `reset`.
        """
        self._check_agent(agent)
        if not hasattr(self, "_state"):
            raise ConfigError("observe() before reset(); call reset() first")
        acting = agent == self.agent_selection and agent in self.terminations and not self._is_done(agent)
        if self._player(agent) == self._planes_player:
            planes = self._planes.copy()
        else:
            planes = np.array(self._fns.planes(self._state, np.int32(self._player(agent))))
        mask = self._mask.copy() if acting else np.zeros_like(self._mask)
        return {"observation": planes, "action_mask": mask}

    def step(self, action: Any) -> None:
        """Play an action for `agent_selection`.

        Args:
            action: One integer action index; `None` for an agent that is already done.

        Raises:
            RejectedActionError: A malformed or illegal action, or a call before `reset` or after every agent has
                left the finished game; the env is unchanged.
        """
        self._check_reset(action)
        agent = self.agent_selection
        if self._is_done(agent):
            self._was_dead_step(action)
            return
        index = action_index(action, self.core.num_actions)
        if not self._mask[index]:
            raise rejection(self.core, jax.device_get(self._state), index, prefix=f"{agent}: ")
        self._state, view = self._fns.step(self._state, np.int32(index))
        self._cumulative_rewards[agent] = 0.0
        rewards, terminated, truncated = self._absorb(view)
        self.rewards = {a: float(rewards[self._player(a)]) for a in self.agents}
        if terminated or truncated:
            self.terminations = {a: terminated for a in self.agents}
            self.truncations = {a: truncated and not terminated for a in self.agents}
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def act(self, agent: str, action: Any) -> None:
        """`step` for a caller that names who is acting.

        Args:
            agent: The agent acting.
            action: Its action, as for `step`.

        Raises:
            RejectedActionError: `agent` is not `agent_selection` (reason `"not_your_turn"`), or as for `step`;
                the env is unchanged.
            ConfigError: An unknown agent.
        """
        self._check_agent(agent)
        self._check_reset(action)
        if agent != self.agent_selection:
            raise RejectedActionError(
                f"{agent} tried action {action!r} but it is {self.agent_selection}'s turn; act for env.agent_selection",
                action,
                "not_your_turn",
            )
        self.step(action)

    def render(self) -> str | np.ndarray | None:
        """The position as text (`"ansi"`), an RGB array (`"rgb_array"`), printed text (`"human"`) or
        `None` without a render mode."""
        return render_state(self._state, self.core, self.render_mode)

    def close(self) -> None:
        """Nothing to release (the env holds only device arrays)."""

    # ------------------------------------------------------------------------------------------------- internals
    def _was_dead_step(self, action: Any) -> None:
        """PettingZoo's removal of a done agent, which accepts only `None`: any other action is refused with
        `RejectedActionError` (reason `"game_over"`) and the env is left unchanged."""
        if action is not None:
            raise RejectedActionError(
                f"{self.agent_selection} is done (the game is over) and can only step with "
                f"None; call reset() to start a new game",
                action,
                "game_over",
            )
        super()._was_dead_step(action)

    def _check_agent(self, agent: Any) -> str:
        """`agent` if it is one of `possible_agents`; raises `ConfigError` naming the valid ones."""
        if not isinstance(agent, str) or agent not in self._agent_index:
            raise ConfigError(
                f"unknown agent {agent!r}; the agents of {self.core.variant.name!r} are {self.possible_agents}"
            )
        return agent

    def _check_reset(self, action: Any) -> None:
        """Refuse a call before `reset()` or after every agent has left the finished game."""
        if not hasattr(self, "_state"):
            raise RejectedActionError("the env has not been reset; call reset() first", action, "game_over")
        if self.agent_selection not in self.terminations:
            raise RejectedActionError(
                "the game is over and every agent is done; call reset() to start a new one", action, "game_over"
            )

    def _is_done(self, agent: str) -> bool:
        return self.terminations[agent] or self.truncations[agent]

    def _absorb(self, view: tuple) -> tuple[np.ndarray, bool, bool]:
        planes, mask, player, rewards, terminated, truncated = jax.device_get(view)  # one transfer
        self._planes, self._mask, self._planes_player = planes, mask, int(player)
        self.agent_selection = self.possible_agents[int(player)]
        self.infos = {a: {} for a in self.agents}
        return rewards, bool(terminated), bool(truncated)

    def _player(self, agent: str) -> int:
        return self._agent_index[agent]


def _view(core: Env, state: State) -> tuple:
    """Everything the host needs after a move, fetched in one transfer: the planes of the player to move, the
    mask, the player to move, the rewards and the end flags."""
    planes = core.observe(state, state.current_player).planes
    return (
        planes,
        state.legal_action_mask.astype(jnp.int8),
        state.current_player,
        state.rewards,
        state.terminated,
        state.truncated,
    )


class _Compiled(NamedTuple):
    """The core env and its jitted functions: `reset() -> (state, view)`, `step(state, action) -> (state,
    view)` and `planes(state, player) -> float32[H, W, 2C]`."""

    core: Env
    reset: Callable
    step: Callable
    planes: Callable


def _compiled(core: Env) -> _Compiled:
    """Jit the functions the AEC env calls for `core`."""

    def reset() -> tuple[State, tuple]:
        state = core.init()
        return state, _view(core, state)

    def step(state: State, action: jax.Array) -> tuple[State, tuple]:
        state = core.step(state, action)
        return state, _view(core, state)

    def planes(state: State, player: jax.Array) -> jax.Array:
        return core.observe(state, player).planes

    return _Compiled(core, jax.jit(reset), jax.jit(step), jax.jit(planes))


@functools.cache
def _compiled_for(variant: Variant, reward: str, max_steps: int | None) -> _Compiled:
    """`_compiled` shared by every env of one configuration (compiled once, not per instance)."""
    return _compiled(make(variant, reward=reward, max_steps=max_steps))


class _ActionCheckWrapper(wrappers.BaseWrapper):
    """Raises `RejectedActionError` for an action that is not one integer index in range, before the
    wrappers below look it up in the mask (PettingZoo's `AssertOutOfBoundsWrapper`, with the package's error)."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            action_index(action, self.action_space(agent).n)
        super().step(action)


def raw_env(variant: str | Variant | Env = "duo", **kwargs) -> BlokusAECEnv:
    """The unwrapped `BlokusAECEnv`, which raises on an illegal action.

    Args:
        variant: A registered variant name, a `Variant` or a ready `Env`.
        **kwargs: The other arguments of `BlokusAECEnv`.

    Returns:
        The environment.

    Raises:
        ConfigError: See `BlokusAECEnv`.
        VariantError: See `BlokusAECEnv`.
    """
    return BlokusAECEnv(variant, **kwargs)


def env(variant: str | Variant | Env = "duo", *, illegal_action_penalty: float = -1.0, **kwargs) -> AECEnv:
    """`BlokusAECEnv` with PettingZoo's usual wrappers: a range/dtype check, `TerminateIllegalWrapper`
    (an illegal action ends the game with `illegal_action_penalty` for its author) and `OrderEnforcingWrapper`.

    Args:
        variant: A registered variant name, a `Variant` or a ready `Env`.
        illegal_action_penalty: The reward of the agent whose illegal action ends the game.
        **kwargs: The other arguments of `BlokusAECEnv`.

    Returns:
        The wrapped AEC environment.

    Raises:
        ConfigError: See `BlokusAECEnv`.
        VariantError: See `BlokusAECEnv`.
    """
    game = wrappers.TerminateIllegalWrapper(raw_env(variant, **kwargs), illegal_reward=illegal_action_penalty)
    return wrappers.OrderEnforcingWrapper(_ActionCheckWrapper(game))


__all__ = ["BlokusAECEnv", "env", "raw_env"]
