"""Positions labelled by the moves of a stronger player: `.blksgf` games (Pentobi's `twogtp` writes many to a file)
replayed and checked, each position with a choice kept with the move played and the mover's final result. The
move model's fit (`benchmarks/fit_move_model.py`), its recall (`benchmarks/prior_recall.py`) and the networks'
supervised start-up (`blokus_agents.training.pretrain`) read them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jax
import numpy as np

from blokus_jax.env import Env, State


@dataclass(frozen=True)
class Positions:
    """Positions labelled by the move a player chose, stacked as one batched `State`.

    Attributes:
        states: the positions (a `State` with a leading axis `N`), each with at least two legal actions.
        chosen: `int32[N]` the action chosen in each.
        game: `int32[N]` the index of the game each comes from (for splits by game).
        move: `int32[N]` the move number within its game (0 first).
        outcome: `f32[N]` the final result of the player to move: 1 when its score alone is the best at the end,
            0 when it shares the best, -1 otherwise.
    """

    states: State
    chosen: np.ndarray
    game: np.ndarray
    move: np.ndarray
    outcome: np.ndarray

    def __len__(self) -> int:
        return len(self.chosen)

    def take(self, index: np.ndarray) -> Positions:
        """The positions at `index` (a NumPy index array or mask)."""
        return Positions(
            jax.tree.map(lambda x: x[index], self.states),
            self.chosen[index],
            self.game[index],
            self.move[index],
            self.outcome[index],
        )


def split_games(text: str) -> list[str]:
    """The games of a multi-game `.blksgf` text (Pentobi's `twogtp` writes one file of many games)."""
    import re

    return [g for g in re.split(r"(?=\(;)", text) if g.strip()]


def labelled_positions(env: Env, paths: Sequence[str | os.PathLike], first_game: int = 0) -> Positions:
    """Every position with a choice (two or more legal actions) of the games in `paths` (`.blksgf` files, one or
    many games each), replayed and checked by `blokus_jax.records.from_blksgf`, labelled by the move played.

    Args:
        env: the environment of the games' variant.
        paths: the record files.
        first_game: the game index given to the first game read.

    Returns:
        The positions, in file and game order.

    Raises:
        RecordError: a game is malformed or not of `env`'s variant.
    """
    from blokus_jax.errors import RecordError
    from blokus_jax.io import records

    step = jax.jit(env.step)
    states, chosen, games, moves, outcomes = [], [], [], [], []
    game = first_game
    for path in paths:
        for text in split_games(Path(path).read_text(encoding="utf-8")):
            record = records.from_blksgf(text)
            if record.variant.name != env.variant.name:
                raise RecordError(f"{path}: a game of {record.variant.name!r}, expected {env.variant.name!r}")
            state = env.init()
            movers = []
            for number, action in enumerate(record.actions):
                if int(state.legal_action_mask.sum()) > 1:
                    states.append(state)
                    chosen.append(action)
                    games.append(game)
                    moves.append(number)
                    movers.append(int(state.current_player))
                state = step(state, action)
            scores = np.asarray(env.player_scores(state))
            best = scores.max()
            result = np.where(scores < best, -1.0, np.where(np.sum(scores == best) > 1, 0.0, 1.0))
            outcomes.extend(result[movers])
            game += 1
    if not states:
        raise RecordError(f"no positions with a choice in {list(map(str, paths))}")
    stacked = jax.tree.map(lambda *xs: np.stack(xs), *states)
    return Positions(
        stacked,
        np.asarray(chosen, np.int32),
        np.asarray(games, np.int32),
        np.asarray(moves, np.int32),
        np.asarray(outcomes, np.float32),
    )


__all__ = ["Positions", "labelled_positions", "split_games"]
