"""Pentobi's Elo scale: the rating of each of its levels, and the maximum-likelihood Elo of results against rated
opponents (two players, or one player against several of one rating, as Pentobi rates multi-player games).
`blokus_agents.engines.ladder` rates its matches with these."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from blokus_agents.engines.gtp_client import MatchError

#: Pentobi's rating of its levels 1-9 per board (`libpentobi_mcts/Player.cpp`, `get_rating`): the Duo board
#: (Duo, Junior) and the Classic board (measured on `classic_2`, used for every Classic variant).
PENTOBI_ELO: dict[str, tuple[int, ...]] = {
    "duo": (1000, 1189, 1378, 1567, 1755, 1945, 2134, 2185, 2209),
    "classic": (1000, 1142, 1283, 1425, 1567, 1708, 1850, 1951, 2030),
}
#: The board whose ratings each variant takes.
BOARD_OF = {"duo": "duo", "junior": "duo", "classic": "classic", "classic_2p": "classic", "classic_3p": "classic"}


def level_elo(variant: str, level: int) -> float:
    """Pentobi's Elo rating of one of its levels.

    Args:
        variant: A variant Pentobi rates (its board's ratings are used).
        level: The level, 1-9.

    Returns:
        The rating on Pentobi's scale.

    Raises:
        MatchError: A variant Pentobi rates no levels for, or a level out of range.
    """
    board = BOARD_OF.get(variant)
    if board is None:
        raise MatchError(f"Pentobi rates no levels for variant {variant!r}; rated variants: {sorted(BOARD_OF)}")
    if not 1 <= level <= len(PENTOBI_ELO[board]):
        raise MatchError(f"Pentobi has levels 1-{len(PENTOBI_ELO[board])}, not {level}")
    return float(PENTOBI_ELO[board][level - 1])


def ladder_elo(points: Iterable[tuple[float, float, int]], opponents: int = 1) -> tuple[float, float, float]:
    """The maximum-likelihood Elo rating of results against rated opponents, under the logistic Elo model.

    With `opponents` > 1 each game is one player against that many opponents of one rating `E`, and a player rated
    `R` is expected to take `1 / (1 + opponents * 10 ** ((E - R) / 400))` of the first places: the model Pentobi
    itself rates multi-player games with (`libboardgame_base/Rating.cpp`, `get_expected_result`), under which an
    equal player takes `1 / (opponents + 1)`.

    Args:
        points: `(opponent_elo, wins, games)` triples, ties counted as half wins (a first place shared by `k`
            players as `1 / k`); triples without games are skipped.
        opponents: Opponents in each game, all of the triple's rating (3 for a four-player game).

    Returns:
        `(estimate, low, high)`, with a likelihood-ratio 95 % interval; a bound is infinite where the results
        never lose (or never win) against the strongest (weakest) opponent.

    Raises:
        MatchError: No games at all.
    """
    if isinstance(opponents, bool) or not isinstance(opponents, int) or not 1 <= opponents <= 3:
        raise MatchError(f"opponents must be 1, 2 or 3 (players in a game minus one), got {opponents!r}")
    data = [(float(e), float(w), int(n)) for e, w, n in points if n > 0]
    if not data:
        raise MatchError("no finished games to estimate an Elo rating from")
    grid = np.arange(-1000.0, 4500.0, 1.0)
    log_lik = np.zeros_like(grid)
    for elo, wins, games in data:
        p = 1.0 / (1.0 + opponents * 10.0 ** ((elo - grid) / 400.0))
        p = np.clip(p, 1e-12, 1 - 1e-12)
        log_lik += wins * np.log(p) + (games - wins) * np.log(1 - p)
    best = int(np.argmax(log_lik))
    inside = np.flatnonzero(2.0 * (log_lik[best] - log_lik) <= 3.841)
    low = -math.inf if inside[0] == 0 else grid[inside[0]]
    high = math.inf if inside[-1] == len(grid) - 1 else grid[inside[-1]]
    estimate = grid[best] if 0 < best < len(grid) - 1 else (math.inf if best else -math.inf)
    return float(estimate), float(low), float(high)


def parse_levels(text: str) -> list[int]:
    """The levels a `--levels` argument names.

    Args:
        text: A range, a list or one level: `"1-5"`, `"2,4"`, `"3"` (each 1-9).

    Returns:
        The levels in the order given, repeats dropped.

    Raises:
        MatchError: A part that is not a level or an upward range of levels 1-9.
    """
    levels: list[int] = []
    for part in str(text).split(","):
        first, dash, last = part.strip().partition("-")
        try:
            low, high = int(first), int(last if dash else first)
        except ValueError:
            raise MatchError(f"levels {text!r}: write a range or list of levels 1-9, e.g. 1-5 or 2,4") from None
        if not 1 <= low <= high <= 9:
            raise MatchError(f"levels {text!r}: each level is 1-9 and a range runs upwards (e.g. 1-5)")
        levels += [lv for lv in range(low, high + 1) if lv not in levels]
    return levels


__all__ = ["BOARD_OF", "PENTOBI_ELO", "ladder_elo", "level_elo", "parse_levels"]
