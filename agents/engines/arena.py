"""Arena: batched matches between policies with exact seat rotation, win rates with confidence intervals, ratings.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import functools
import itertools
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from tqdm import TqdmWarning

from blokus_agents.core.policies import ParamPolicy, Policy
from blokus_jax import rules
from blokus_jax.env import Env, State

with warnings.catch_warnings():  # a notebook without ipywidgets falls back to text bars quietly
    warnings.simplefilter("ignore", TqdmWarning)
    from tqdm.auto import tqdm

Z95 = 1.959963984540054


def seat_patterns(num_players: int) -> np.ndarray:
    """The seat patterns of a two-policy match: the rotations of `A..AB..B` (`ceil(num_players / 2)` A's) and of
    its complement, without repeats. Every seat holds A in exactly half of the patterns.

    Args:
        num_players: Players in a game of the variant.

    Returns:
        `int32[n, num_players]`, 0 for policy A and 1 for policy B in each seat.
    """
    base = np.asarray([0] * ((num_players + 1) // 2) + [1] * (num_players // 2), np.int32)
    patterns = [np.roll(b, s) for b in (base, 1 - base) for s in range(num_players)]
    unique = sorted({tuple(p.tolist()) for p in patterns})
    return np.asarray(unique, np.int32)


@dataclass
class MatchResult:
    """Per-game outcome of a match between policies `names[0]` (A) and `names[1]` (B).

    Attributes:
        names: the two policies' names.
        seats: `int32[games, num_players]` policy (0 or 1) in each seat.
        scores: `int32[games, num_players]` final player scores.
        credit: `float64[games, 2]` win credit of A and B per game (sums to 1).
        forfeits: `int32[2]` games each policy lost by an illegal move.
        steps: `int32[games]` steps each game took.
    """

    names: tuple[str, str]
    seats: np.ndarray
    scores: np.ndarray
    credit: np.ndarray
    forfeits: np.ndarray
    steps: np.ndarray

    @property
    def games(self) -> int:
        """Games played."""
        return int(self.seats.shape[0])

    def policy_scores(self, index: int) -> np.ndarray:
        """The mean score of one policy's seats in each game.

        Args:
            index: 0 for policy A, 1 for policy B.

        Returns:
            `float64[games]`.
        """
        mine = self.seats == index
        return (self.scores * mine).sum(1) / mine.sum(1)

    def margins(self, index: int) -> np.ndarray:
        """The mean score of one policy's seats minus the mean of the other policy's seats, in each game.

        Args:
            index: 0 for policy A, 1 for policy B.

        Returns:
            `float64[games]`.
        """
        return self.policy_scores(index) - self.policy_scores(1 - index)


def _split(policy: Policy) -> tuple[Callable, Any]:
    """`(static fn(params, key, state), params)` of a policy; plain policies have no params."""
    if isinstance(policy, ParamPolicy):
        return policy.fn, policy.params
    return _without_params(policy), None


@functools.lru_cache(maxsize=64)
def _without_params(policy: Policy) -> Callable:
    return lambda params, key, state: policy(key, state)


def _capacity(games: int) -> int:
    """Games each policy searches in one round of `_match_runner`: half of them (rounded up), its share of the
    movers, as the seat patterns give each policy exactly half of all seats (`seat_patterns`)."""
    return max(1, -(-int(games) // 2))


@functools.lru_cache(maxsize=16)
def _match_runner(env: Env, fns: tuple[Callable, Callable], chunk: int):
    """A jitted `(states, key, seats, forfeited, params) -> (states, forfeited)` advancing the games `chunk`
    rounds, each move chosen by the policy in the seat of the player to move (`seats`: `int32[N, num_players]`).
    Cached per (env, policy functions, chunk): repeated matches between the same functions compile once.

    A round searches each policy only on the games where it is to move, not on all of them: policy `i` gets a
    fixed batch of `_capacity` games (static shapes), filled with its live games that have taken the fewest
    steps; a live game that does not fit waits for the next round, finished games are never searched. With two
    players this halves the cost of a match against computing both policies on every game."""
    batched = [jax.vmap(f, in_axes=(None, 0, 0)) for f in fns]
    step = jax.vmap(env.step)
    is_legal = jax.vmap(env.is_legal)
    players = jnp.arange(env.num_players)

    @jax.jit
    def run(states: State, key: jax.Array, seats: jax.Array, forfeited: jax.Array, params: tuple):
        total = seats.shape[0]
        capacity = _capacity(total)

        def one_step(carry, step_key):
            states, forfeited = carry
            keys = jax.random.split(step_key, total)
            mover = jnp.take_along_axis(seats, states.current_player[:, None], axis=1)[:, 0]
            live = ~(states.terminated | states.truncated)
            actions = jnp.full((total,), env.pass_action, jnp.int32)
            moved = jnp.zeros((total,), bool)
            for i, (f, p) in enumerate(zip(batched, params)):
                eligible = live & (mover == i)
                order = jnp.argsort(jnp.where(eligible, states.step_count, jnp.iinfo(jnp.int32).max))
                chosen = order[:capacity]
                picked = jax.tree_util.tree_map(lambda x: x[chosen], states)
                choice = f(p, keys[chosen], picked).astype(jnp.int32)
                take = eligible[chosen]
                actions = actions.at[chosen].set(jnp.where(take, choice, actions[chosen]))
                moved = moved.at[chosen].set(moved[chosen] | take)
            bad = moved & ~is_legal(states, actions)
            forfeited = forfeited | (bad[:, None] & (players == states.current_player[:, None]))
            stepped = step(states, actions)
            states = jax.tree_util.tree_map(
                lambda new, old: jnp.where(moved.reshape((-1,) + (1,) * (new.ndim - 1)), new, old), stepped, states
            )
            return (states, forfeited), None

        (states, forfeited), _ = jax.lax.scan(one_step, (states, forfeited), jax.random.split(key, chunk))
        return states, forfeited

    return run


@functools.lru_cache(maxsize=16)
def _opening_runner(env: Env, moves: int, group: int):
    """A jitted `(states, key) -> states` playing `moves` uniformly random legal moves in every game, the same
    moves in each run of `group` consecutive games (one seat rotation), so that every seat order starts from the
    same position."""
    step, sample = jax.vmap(env.step), jax.vmap(env.sample_action)

    @jax.jit
    def run(states: State, key: jax.Array) -> State:
        opening = jnp.arange(states.current_player.shape[0]) // group
        game_keys = jax.vmap(lambda i: jax.random.fold_in(key, i))(opening)

        def one(states, i):
            keys = jax.vmap(lambda k: jax.random.fold_in(k, i))(game_keys)
            return step(states, sample(keys, states)), None

        return jax.lax.scan(one, states, jnp.arange(moves))[0]

    return run


def max_game_moves(env: Env) -> int:
    """An upper bound on the moves (placements and passes) of a game: every colour places each of its pieces once
    and passes once (fewer under `max_steps`).

    Args:
        env: The environment.

    Returns:
        The bound, in moves.
    """
    bound = env.num_colors * (int(np.asarray(env.tables.piece_copies, np.int64).sum()) + 1)
    return bound if env.max_steps is None else min(bound, int(env.max_steps))


def check_opening(env: Env, opening: Any) -> int:
    """Check a number of random opening moves: a whole number that leaves a game unfinished.

    Args:
        env: The environment.
        opening: The number of moves.

    Returns:
        `opening` as an int.

    Raises:
        ValueError: `opening` is not an int, is negative, or is not below `max_game_moves` (the message says the
            limit).
    """
    if isinstance(opening, bool) or not isinstance(opening, (int, np.integer)) or int(opening) < 0:
        raise ValueError(f"opening must be a non-negative number of random moves, got {opening!r}")
    limit = max_game_moves(env)
    if int(opening) >= limit:
        raise ValueError(
            f"opening={int(opening)} random moves would end every game of {env.variant.name!r} before the agents "
            f"play (a game has at most {limit} moves); give fewer, e.g. {min(8, limit // 4)}"
        )
    return int(opening)


def _moves_left(states: State) -> int:
    """An upper bound on the moves still to come in the longest unfinished game of a batch (pieces left and one
    pass per colour that has not passed), from host copies of the states."""
    live = ~np.asarray(states.terminated | states.truncated)
    if not live.any():
        return 0
    passed = np.asarray(states.passed)
    pieces = np.asarray(states.remaining, np.int64).sum(-1)  # [N, C]
    bound = np.where(passed, 0, pieces + 1).sum(-1)
    return int(bound[live].max())


#: Compiled matches by (runner, argument shapes): a second match between the same functions and sizes reuses it.
_COMPILED: dict[Any, Any] = {}


def _compiled(run: Callable, args: tuple, label: str, log: Callable[[str], None] | None) -> Callable:
    """`run` compiled ahead of time for `args` (cached), announcing the compilation and its time through
    `log` (the first match of a search agent compiles for minutes; nothing else would say so)."""
    leaves, tree = jax.tree_util.tree_flatten(args)
    signature = (
        run,
        tree,
        tuple((np.shape(x), str(getattr(x, "dtype", type(x))), getattr(x, "sharding", None)) for x in leaves),
    )
    if signature not in _COMPILED:
        if log is not None:
            log(f"compiling the match {label}...")
        start = time.perf_counter()
        compiled = run.lower(*args).compile()
        if log is not None:
            log(f"compiled in {time.perf_counter() - start:.1f} s")
        if len(_COMPILED) >= 32:
            _COMPILED.pop(next(iter(_COMPILED)))
        _COMPILED[signature] = compiled
    return _COMPILED[signature]


def play_match(
    env: Env,
    policies: Sequence[Policy],
    names: Sequence[str],
    games: int,
    key: jax.Array,
    chunk: int = 8,
    progress: bool = True,
    opening: int = 0,
    log: Callable[[str], None] | None = None,
) -> MatchResult:
    """Play `games` games between `policies[0]` and `policies[1]` in one batch, with seat rotation.

    Deterministic for a given `key`. Games are advanced `chunk` steps per compiled call until all are over. An
    illegal action forfeits: that seat ranks below everyone in the game.

    Args:
        env: The environment.
        policies: Two policies, A and B (plain `(key, state) -> action` functions or `ParamPolicy`s; a
            `ParamPolicy`'s params are an argument of the compiled match, so new params do not recompile it).
        names: Their two names, for the result and the progress bar.
        games: Games to play, rounded up to a multiple of the seat patterns (`seat_patterns`).
        key: A JAX PRNG key.
        chunk: Steps per compiled call.
        progress: Show a tqdm bar counting the moves played against an upper bound of the moves left (so its
            ETA is a bound that tightens as games end) and the games finished.
        opening: Each game first plays that many uniformly random legal moves, the same ones for every seat
            order of a rotation, so that two deterministic agents play many different games and neither side
            gets the better openings; it must leave every game unfinished (see `check_opening`).
        log: `log(line)` is told when the match compiles and how long that took (the CLI prints it even
            without a bar).

    Returns:
        The per-game `MatchResult`.

    Raises:
        ValueError: Not exactly two policies and two names, `games` not a positive int, or an `opening` that is
            negative, not an int, or ends a game before the agents play.
    """
    opening = check_opening(env, opening)
    if len(policies) != 2 or len(names) != 2:
        raise ValueError(f"a match needs exactly two policies and two names, got {len(policies)} and {len(names)}")
    if isinstance(games, bool) or not isinstance(games, (int, np.integer)) or games < 1:
        raise ValueError(f"games must be a positive int, got {games!r}")
    patterns = seat_patterns(env.num_players)
    reps = -(-int(games) // len(patterns))
    seats = jnp.asarray(np.tile(patterns, (reps, 1)))
    total = int(seats.shape[0])
    init_key, play_key = jax.random.split(key)
    states = jax.vmap(env.init)(jax.random.split(init_key, total))
    if opening:
        states = _opening_runner(env, opening, len(patterns))(states, jax.random.fold_in(init_key, 1))
        ended = int(np.asarray(states.terminated | states.truncated).sum())
        if ended:
            raise ValueError(
                f"opening={opening}: {ended} of {total} games ended within the random opening moves, so the "
                f"agents never played them; give fewer opening moves"
            )
    forfeited = jnp.zeros((total, env.num_players), bool)
    (fn_a, params_a), (fn_b, params_b) = _split(policies[0]), _split(policies[1])
    params = (params_a, params_b)
    label = f"{names[0]} vs {names[1]} ({total} games, {chunk} moves per call)"
    run = _compiled(_match_runner(env, (fn_a, fn_b), chunk), (states, play_key, seats, forfeited, params), label, log)
    played = int(np.asarray(states.step_count).max())
    bar = tqdm(
        total=played + _moves_left(states),
        initial=played,
        desc=f"{names[0]} vs {names[1]}",
        unit="move",
        disable=not progress,
        leave=False,
    )
    call = 0
    while True:
        states, forfeited = run(states, jax.random.fold_in(play_key, call), seats, forfeited, params)
        call += 1
        done = np.asarray(states.terminated | states.truncated)
        played += chunk
        bar.total = played + _moves_left(states)
        bar.set_postfix_str(f"{int(done.sum())}/{total} games over", refresh=False)
        bar.update(min(played, bar.total) - bar.n)
        if done.all():
            break
    bar.close()
    scores = np.asarray(jax.vmap(env.player_scores)(states))
    return _result(tuple(names), np.asarray(seats), scores, np.asarray(forfeited), np.asarray(states.step_count))


def _result(
    names: tuple[str, str], seats: np.ndarray, scores: np.ndarray, forfeited: np.ndarray, steps: np.ndarray
) -> MatchResult:
    """Win credits from final scores: the best score shares the win; forfeiting seats rank below everyone."""
    ranked = np.where(forfeited, -np.inf, scores.astype(np.float64))
    share = np.asarray(rules.win_shares(ranked), np.float64)
    credit = np.stack([(share * (seats == i)).sum(1) for i in (0, 1)], axis=1)
    forfeits = np.asarray([int((forfeited & (seats == i)).any(1).sum()) for i in (0, 1)], np.int32)
    return MatchResult(names, seats, scores, credit, forfeits, steps.astype(np.int32))


# ----------------------------------------------------------------------------------------------------- statistics
def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion `successes / n`.

    Args:
        successes: Successes (ties may count as half).
        n: Trials; `(0, 1)` is returned when there are none.
        z: The normal quantile; the default gives a 95 % interval.

    Returns:
        `(lo, hi)`, within `[0, 1]` and around `successes / n`.
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / denom
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))  # clamp rounding at 0 and 1


def mean_interval(values: np.ndarray, z: float = Z95) -> tuple[float, float]:
    """The normal-approximation interval of a mean.

    Args:
        values: The samples; one sample gives an interval of width 0.
        z: The normal quantile; the default gives a 95 % interval.

    Returns:
        `(lo, hi)`.
    """
    values = np.asarray(values, np.float64)
    mean = float(values.mean())
    half = z * float(values.std(ddof=1)) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return (mean - half, mean + half)


def bradley_terry_elo(
    wins: np.ndarray, games: np.ndarray, prior_games: float = 1.0, iterations: int = 2000, anchor: int = 0
) -> np.ndarray:
    """Elo-scale ratings from pairwise results: a Bradley-Terry model fitted by minorisation-maximisation.

    Args:
        wins: `float[M, M]`, `wins[i, j]` the win credit of agent `i` against agent `j`.
        games: `float[M, M]`, the games `i` and `j` played.
        prior_games: Virtual drawn games added to every played pairing, which keeps ratings finite when an agent
            wins every game.
        iterations: Iterations of the fit.
        anchor: The agent rated 0.

    Returns:
        `float64[M]` ratings on the Elo scale (400 points for odds of 10 to 1).
    """
    played = games > 0
    w = wins + 0.5 * prior_games * played
    n = games + prior_games * played
    strength = np.ones(len(wins))
    for _ in range(iterations):
        denom = (n / (strength[:, None] + strength[None, :])).sum(1)
        strength = np.where(denom > 0, w.sum(1) / np.maximum(denom, 1e-300), strength)
        strength = strength / np.exp(np.log(strength).mean())
    ratings = 400 * np.log10(strength)
    return ratings - ratings[anchor]


# -------------------------------------------------------------------------------------------------------- reports
@dataclass
class AgentStats:
    """One agent's aggregate over all its games of a round robin.

    Attributes:
        name: The agent's name.
        games: Games it played.
        win_rate: Its win credit per game (a tie counts as a share).
        win_rate_ci: The 95 % Wilson interval of `win_rate`.
        mean_score: Its mean score (the mean over its seats in each game).
        mean_score_ci: The 95 % interval of `mean_score`.
        mean_margin: Its mean score minus its opponents' mean.
        mean_margin_ci: The 95 % interval of `mean_margin`.
        elo: Its Bradley-Terry rating on the Elo scale.
        forfeits: Games it lost by an illegal move.
    """

    name: str
    games: int
    win_rate: float
    win_rate_ci: tuple[float, float]
    mean_score: float
    mean_score_ci: tuple[float, float]
    mean_margin: float
    mean_margin_ci: tuple[float, float]
    elo: float
    forfeits: int


@dataclass
class ArenaReport:
    """Result of `round_robin`: per-agent stats, the matches played, and the settings that reproduce it.

    Attributes:
        variant: The variant's name.
        games_per_pairing: Games asked for per pairing.
        seed: The seed of the round robin.
        agents: One `AgentStats` an agent.
        matches: The `MatchResult` of every pairing.
    """

    variant: str
    games_per_pairing: int
    seed: int
    agents: list[AgentStats]
    matches: list[MatchResult] = field(repr=False)

    def to_dict(self) -> dict:
        """A JSON-ready summary: `{"variant", "games", "seed", "agents": [...], "pairings": [...]}`."""
        pairings = []
        for m in self.matches:
            credit = float(m.credit[:, 0].sum())
            pairings.append(
                {
                    "a": m.names[0],
                    "b": m.names[1],
                    "games": m.games,
                    "win_rate_a": credit / m.games,
                    "win_rate_a_ci": list(wilson_interval(credit, m.games)),
                    "mean_margin_a": float(m.margins(0).mean()),
                    "mean_steps": float(m.steps.mean()),
                }
            )
        agents = [
            {
                "name": a.name,
                "games": a.games,
                "win_rate": a.win_rate,
                "win_rate_ci": list(a.win_rate_ci),
                "mean_score": a.mean_score,
                "mean_score_ci": list(a.mean_score_ci),
                "mean_margin": a.mean_margin,
                "mean_margin_ci": list(a.mean_margin_ci),
                "elo": a.elo,
                "forfeits": a.forfeits,
            }
            for a in self.agents
        ]
        return {
            "variant": self.variant,
            "games": self.games_per_pairing,
            "seed": self.seed,
            "agents": agents,
            "pairings": pairings,
        }

    def rows(self) -> list[list[str]]:
        """Table rows (header first): agent, games, win rate with its interval, mean score, margin, Elo."""
        rows = [["agent", "games", "win rate", "95% CI", "mean score", "margin", "Elo"]]
        for a in sorted(self.agents, key=lambda a: -a.elo):
            rows.append(
                [
                    a.name,
                    str(a.games),
                    f"{a.win_rate:.3f}",
                    f"[{a.win_rate_ci[0]:.3f}, {a.win_rate_ci[1]:.3f}]",
                    f"{a.mean_score:.1f}",
                    f"{a.mean_margin:+.1f}",
                    f"{a.elo:.0f}",
                ]
            )
        return rows

    def markdown(self) -> str:
        """The agent table as GitHub markdown, followed by the head-to-head win rates (row agent vs column)."""
        rows = self.rows()
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        names = [a.name for a in self.agents]
        lines += ["", "| win rate (row vs column) | " + " | ".join(names) + " |", "|" + "---|" * (len(names) + 1)]
        matrix = self.head_to_head()
        for i, name in enumerate(names):
            cells = ["-" if i == j else f"{matrix[i, j]:.3f}" for j in range(len(names))]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    def head_to_head(self) -> np.ndarray:
        """`float64[M, M]`: win rate of agent `i` against agent `j` (NaN on the diagonal)."""
        names = [a.name for a in self.agents]
        out = np.full((len(names), len(names)), np.nan)
        for m in self.matches:
            i, j = names.index(m.names[0]), names.index(m.names[1])
            out[i, j] = m.credit[:, 0].mean()
            out[j, i] = m.credit[:, 1].mean()
        return out


def round_robin(
    env: Env,
    policies: dict[str, Policy],
    games: int,
    seed: int = 0,
    chunk: int = 8,
    progress: bool = True,
    opening: int = 0,
    log: Callable[[str], None] | None = None,
) -> ArenaReport:
    """Play every pair of `policies` against each other and rate them.

    Pairing `k` (in the order of `itertools.combinations`) uses key `fold_in(key(seed), k)`.

    Args:
        env: The environment.
        policies: Agent name -> policy, at least two.
        games: Games per pairing, rounded up to the seat rotation (see `play_match`).
        seed: Seed of the PRNG keys.
        chunk: Steps per compiled call (see `play_match`).
        progress: Show a progress bar per pairing.
        opening: Shared random opening moves of each game (see `play_match`).
        log: Told about compilations (see `play_match`).

    Returns:
        An `ArenaReport` with win rates (ties half), mean scores, margins, 95 % intervals and Bradley-Terry Elo
        ratings (`random` at 0, or the first agent when there is no `random`).

    Raises:
        ValueError: Fewer than two policies, or a bad `games` or `opening` (see `play_match`).
    """
    names = list(policies)
    if len(names) < 2:
        raise ValueError(f"a round robin needs at least two agents, got {names}")
    opening = check_opening(env, opening)
    key = jax.random.key(seed)
    matches = []
    for k, (a, b) in enumerate(itertools.combinations(names, 2)):
        matches.append(
            play_match(
                env,
                (policies[a], policies[b]),
                (a, b),
                games,
                jax.random.fold_in(key, k),
                chunk=chunk,
                progress=progress,
                opening=opening,
                log=log,
            )
        )
    return summarize(env.variant.name, games, seed, names, matches)


def summarize(variant: str, games: int, seed: int, names: Sequence[str], matches: Sequence[MatchResult]) -> ArenaReport:
    """Aggregate matches into an `ArenaReport`: per-agent stats over all its games and Elo ratings.

    Args:
        variant: The variant's name, for the report.
        games: Games asked for per pairing, for the report.
        seed: The seed of the round robin, for the report.
        names: The agents, in the report's order.
        matches: The matches played between them.

    Returns:
        The report, with Elo ratings that put `random` at 0, or the first agent when `random` is not among
        `names`.
    """
    index = {n: i for i, n in enumerate(names)}
    credit = {n: [] for n in names}
    scores = {n: [] for n in names}
    margins = {n: [] for n in names}
    forfeits = dict.fromkeys(names, 0)
    wins = np.zeros((len(names), len(names)))
    played = np.zeros_like(wins)
    for m in matches:
        for side, name in enumerate(m.names):
            credit[name].append(m.credit[:, side])
            scores[name].append(m.policy_scores(side))
            margins[name].append(m.margins(side))
            forfeits[name] += int(m.forfeits[side])
        i, j = index[m.names[0]], index[m.names[1]]
        wins[i, j] += m.credit[:, 0].sum()
        wins[j, i] += m.credit[:, 1].sum()
        played[i, j] += m.games
        played[j, i] += m.games
    elo = bradley_terry_elo(wins, played, anchor=index.get("random", 0))
    agents = []
    for n in names:
        c, s, g = np.concatenate(credit[n]), np.concatenate(scores[n]), np.concatenate(margins[n])
        agents.append(
            AgentStats(
                name=n,
                games=len(c),
                win_rate=float(c.mean()),
                win_rate_ci=wilson_interval(float(c.sum()), len(c)),
                mean_score=float(s.mean()),
                mean_score_ci=mean_interval(s),
                mean_margin=float(g.mean()),
                mean_margin_ci=mean_interval(g),
                elo=float(elo[index[n]]),
                forfeits=forfeits[n],
            )
        )
    return ArenaReport(variant, games, seed, agents, list(matches))
