"""Matches between a project agent and any GTP Blokus engine, and the ladder of Pentobi's levels with an Elo estimate.

`play_match` plays one game at a time (the way engines are compared), alternating seats, from the start
position or after `opening` random moves (both seatings of a pair play the same opening). At every move it checks
that the engine's legal moves equal the project's (`all_legal`, where the engine knows it), times both sides, and
saves each game as `.blksgf`. Each finished game is one JSON line in the results file, so an interrupted match
resumes where it stopped. A dead or misbehaving engine (a crash, a timeout, an illegal move, a garbage reply or a
disagreement on the legal moves) ends that game with a message; such games are counted apart, never as a win.

With more than two players (four-player `classic`), the engine plays every seat but the agent's and the agent's seat
rotates game by game. A game's result is then the agent's share of first place (ties split), its rank (ties share
the ranks they span) and its margin over the best opponent; an equal player takes `1 / players` of the first places.

`ladder_elo` turns win rates against engine levels of known Elo (Pentobi's own rating table, `PENTOBI_ELO`) into a
maximum-likelihood Elo estimate with a likelihood-ratio 95 % interval (`blokus_agents.engines.rating`);
first-place shares of more players are rated as Pentobi rates its multi-player games (one player against opponents
of one rating; docs/strength.md).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import jax
import numpy as np
from tqdm.auto import tqdm

from blokus_agents.core.policies import one_game, resolve_agent
from blokus_agents.engines.arena import wilson_interval
from blokus_agents.engines.gtp import GtpError, color_text, move_text, parse_move
from blokus_agents.engines.gtp_client import EngineError, GtpClient, MatchError
from blokus_agents.engines.rating import BOARD_OF, ladder_elo, level_elo
from blokus_jax import rules
from blokus_jax.env import Env, State, make
from blokus_jax.errors import BlokusError
from blokus_jax.io import fileio
from blokus_jax.io.sgf import result_value, write
from blokus_jax.variants import GAMES, get_variant


# ------------------------------------------------------------------------------------------- results
@dataclass
class GameResult:
    """One finished game of a match (one JSON line of the results file)."""

    game: int
    level: int | None
    seat: int
    share: float | None  # the agent's share of the win (1, 0.5, 0); None for an error game
    scores: list[int]  # players' scores
    margin: int | None  # agent's score minus the best other player's
    moves: int
    agent_seconds: float  # mean seconds a move of the agent
    engine_seconds: float  # mean seconds a move of the engine
    error: str | None = None  # "kind: message" of a failed game
    record: str | None = None  # the saved .blksgf file
    resigned: bool = False

    @property
    def failed(self) -> bool:
        return self.error is not None

    @property
    def rank(self) -> float | None:
        """The agent's place (1 = first): one plus the players who scored more, plus half the others who scored the
        same (tied players share the places they span: two tied for first are both 1.5). 1 when the engine
        resigned; None for an error game."""
        if self.failed or not self.scores:
            return None
        if self.resigned:
            return 1.0
        mine = self.scores[self.seat]
        others = [s for p, s in enumerate(self.scores) if p != self.seat]
        return 1.0 + sum(s > mine for s in others) + 0.5 * sum(s == mine for s in others)


@dataclass
class LevelSummary:
    """One level's games: the agent's share of first places (ties split; with two players, its win rate with ties
    counted half) with a Wilson 95 % interval, its mean rank, its mean margin over the best opponent, the seconds a
    move of each side, and the games that ended in an engine failure, counted apart.

    `games` counts the finished games only; `errors` the failed ones (`error_kinds`: how many of each kind).
    `equal_share` is what a player as strong as the engine's seats takes: `1 / players`.
    """

    level: int | None
    games: int
    win_rate: float
    interval: tuple[float, float]
    margin: float
    agent_seconds: float
    engine_seconds: float
    errors: int
    error_kinds: dict[str, int] = field(default_factory=dict)
    players: int = 2
    mean_rank: float = float("nan")

    @property
    def first_place_share(self) -> float:
        """The agent's share of first places, ties split (the win rate, with two players)."""
        return self.win_rate

    @property
    def equal_share(self) -> float:
        """The first-place share of a player as strong as each of the engine's seats: `1 / players`."""
        return 1.0 / self.players

    @staticmethod
    def of(level: int | None, results: Sequence[GameResult], players: int = 2) -> LevelSummary:
        """The summary of `results`, the games of one level.

        Args:
            level: The engine level played (None without levels).
            results: The level's games, failed ones included (they are counted apart).
            players: Players in the variant (2 for Duo and `classic_2p`, 4 for `classic`).

        Returns:
            The summary; its rates, rank and margin are NaN when no game finished.
        """
        good = [r for r in results if not r.failed]
        wins = sum(r.share or 0.0 for r in good)
        kinds: dict[str, int] = {}
        for r in results:
            if r.failed:
                kind = (r.error or "").split(":", 1)[0]
                kinds[kind] = kinds.get(kind, 0) + 1
        n = len(good)
        margins = [r.margin for r in good if r.margin is not None]  # a resigned game has none
        return LevelSummary(
            level,
            n,
            wins / n if n else float("nan"),
            wilson_interval(wins, n) if n else (0.0, 1.0),
            float(np.mean(margins)) if margins else float("nan"),
            _weighted([(r.agent_seconds, r.moves) for r in good]),
            _weighted([(r.engine_seconds, r.moves) for r in good]),
            len(results) - n,
            kinds,
            players,
            float(np.mean([r.rank for r in good])) if n else float("nan"),
        )

    def to_dict(self) -> dict[str, Any]:
        """The summary as plain JSON values (NaN as None): `level`, `players`, `games`, `first_place_share` (also
        `win_rate` with two players), `interval`, `equal_share`, `mean_rank`, `mean_margin` (over the best
        opponent), `agent_seconds`, `engine_seconds`, `errors` and `error_kinds`."""

        def number(x: float) -> float | None:
            return None if math.isnan(x) else round(float(x), 6)

        row: dict[str, Any] = {
            "level": self.level,
            "players": self.players,
            "games": self.games,
            "first_place_share": number(self.win_rate),
            "interval": [round(float(x), 6) for x in self.interval],
            "equal_share": self.equal_share,
            "mean_rank": number(self.mean_rank),
            "mean_margin": number(self.margin),
            "agent_seconds": number(self.agent_seconds),
            "engine_seconds": number(self.engine_seconds),
            "errors": self.errors,
            "error_kinds": dict(self.error_kinds),
        }
        if self.players == 2:
            row["win_rate"] = row["first_place_share"]
        return row


def _weighted(pairs: list[tuple[float, int]]) -> float:
    total = sum(m for _, m in pairs)
    return sum(s * m for s, m in pairs) / total if total else float("nan")


# ------------------------------------------------------------------------------------------- one game
@dataclass
class MatchSettings:
    """What a results file is a record of; a resumed match must have the same settings."""

    agent: str
    engine: str
    variant: str
    games: int
    opening: int
    seed: int
    levels: list[int] | None = None


class _Game:
    """One game between the agent (in `seat`) and the engine over GTP, on the env's exact rules."""

    def __init__(self, runner: MatchRunner, engine: GtpClient, seat: int, opening: list[int]):
        self.r, self.engine, self.seat, self.opening = runner, engine, seat, opening
        self.env = runner.env
        self.moves: list[tuple[int, np.ndarray]] = []
        self.agent_times: list[float] = []
        self.engine_times: list[float] = []

    def play(self, key: jax.Array) -> tuple[State, bool]:
        """Play to the end; returns the final state and whether the engine resigned. Raises EngineError."""
        env, variant = self.env, self.env.variant
        self.engine.send("clear_board")
        state = env.init()
        owner = lambda s: int(s.current_player)  # noqa: E731
        for action in self.opening:
            state = self._skip(state)
            self._tell(state, action)
            self.moves.append((int(state.current_color), env.action_cells(action)))
            state = self.r.step(state, action)
        while not bool(state.terminated):
            state = self._skip(state)
            if bool(state.terminated):
                break
            color = int(state.current_color)
            mask = np.asarray(state.legal_action_mask)
            if self.r.check_legal:
                self._check_legal(color, mask)
            if owner(state) == self.seat:
                key, sub = jax.random.split(key)
                start = time.perf_counter()
                action = int(self.r.policy(sub, state))
                self.agent_times.append(time.perf_counter() - start)
                self._tell(state, action)
            else:
                start = time.perf_counter()
                reply = self.engine.send(f"genmove {color_text(variant, color)}")
                self.engine_times.append(time.perf_counter() - start)
                if reply.strip().lower() == "resign":
                    return state, True
                try:
                    action = parse_move(env, reply)
                except GtpError as exc:
                    raise EngineError("garbage", f"engine move {reply[:80]!r}: {exc}") from None
                if not mask[action]:
                    raise EngineError("illegal", f"the engine played {reply[:80]!r}, which is illegal here")
            self.moves.append((color, env.action_cells(action)))
            state = self.r.step(state, action)
        return state, False

    def _skip(self, state: State) -> State:
        """Pass for colours without a placement (Pentobi's skipped colours; nothing is sent)."""
        while not bool(state.terminated) and not bool(np.asarray(state.legal_bits).any()):
            state = self.r.step(state, self.env.pass_action)
        return state

    def _tell(self, state: State, action: int) -> None:
        """Play our `action` on the engine's board."""
        color = int(state.current_color)
        text = move_text(self.env, action)
        try:
            self.engine.send(f"play {color_text(self.env.variant, color)} {text}")
        except EngineError as exc:
            if exc.kind == "refused":
                raise EngineError("disagreement", f"the engine refused the legal move {text}: {exc}") from None
            raise

    def _check_legal(self, color: int, mask: np.ndarray) -> None:
        """The engine's `all_legal` for `color` must be our legal placements (compared as sets of points)."""
        if not self.r.engine_has_all_legal:
            return
        reply = self.engine.send(f"all_legal {color_text(self.env.variant, color)}")
        theirs = {_point_set(line) for line in reply.splitlines() if line.strip()}
        ours = {self.r.point_set(int(a)) for a in np.flatnonzero(mask[:-1])}
        if theirs != ours:
            extra, missing = sorted(theirs - ours), sorted(ours - theirs)
            example = f"; e.g. {extra[0]!r} is not legal here" if extra else f"; e.g. {missing[0]!r} is missing"
            raise EngineError(
                "disagreement",
                f"legal moves differ at move {len(self.moves) + 1}: the engine lists {len(extra)} move(s) that are "
                f"illegal here and misses {len(missing)} legal one(s){example}",
            )


#: Longest engine name kept for the saved games (characters).
MAX_ENGINE_NAME = 80


def _engine_name(engine: GtpClient, command: str) -> str:
    """The engine's GTP `name` and `version` ("Pentobi 31.0-dev"), printable ASCII on one line and at most
    `MAX_ENGINE_NAME` characters; the program's file name when the engine answers neither."""
    words = []
    for query in ("name", "version"):
        try:
            words.append(engine.send(query))
        except EngineError as exc:
            if exc.kind != "refused":
                raise
    text = " ".join("".join(c if c.isascii() and c.isprintable() else " " for c in " ".join(words)).split())
    if not text:
        text = Path(command.split()[0]).name if command.split() else "engine"
    return text[:MAX_ENGINE_NAME]


def _point_set(text: str) -> str:
    """A move text in a canonical form (its points sorted), so that moves compare whatever order lists them."""
    return ",".join(sorted(p.strip().lower() for p in text.split(",")))


# ------------------------------------------------------------------------------------------- matches
class MatchRunner:
    """Plays an agent spec against GTP engine commands and writes results; see `play_match`."""

    def __init__(
        self,
        agent: str,
        variant: str = "duo",
        timeout: float = 60.0,
        check_legal: bool = True,
        engine_stderr: Any = subprocess.DEVNULL,
        log: Callable[[str], None] | None = None,
    ):
        self.env: Env = make(variant)
        if self.env.variant.name not in GAMES:
            raise MatchError(f"variant {variant!r} has no Pentobi game; matches play {sorted(GAMES)}")
        self.agent = agent
        self.timeout = timeout
        self.check_legal = check_legal
        self.engine_stderr = engine_stderr
        self.log = log or (lambda text: None)
        self.policy = jax.jit(one_game(resolve_agent(agent, self.env)))  # a time budget runs on the clock
        self.step = jax.jit(self.env.step)
        self.engine_has_all_legal = False
        self.engine_name = "engine"
        self._point_sets: dict[int, str] = {}
        self._warm_up()

    def point_set(self, action: int) -> str:
        """The canonical point list of placement `action` (see `_point_set`), cached."""
        text = self._point_sets.get(action)
        if text is None:
            text = self._point_sets[action] = _point_set(move_text(self.env, action))
        return text

    def _warm_up(self) -> None:
        """Compile the agent's move and the step before the first game, so move times exclude compilation."""
        start = time.perf_counter()
        state = self.env.init()
        jax.block_until_ready(self.policy(jax.random.key(0), state))
        jax.block_until_ready(self.step(state, 0))
        self.log(f"compiled {self.agent!r} in {time.perf_counter() - start:.1f} s")

    def start_engine(self, command: str) -> GtpClient:
        """Start an engine, learn its name (`engine_name`, for the saved games), set its game and learn whether it
        lists legal moves. Raises EngineError/MatchError."""
        engine = GtpClient(command, self.timeout, self.engine_stderr)
        try:
            self.engine_name = _engine_name(engine, command)
            if engine.known("set_game"):
                engine.send(f"set_game {GAMES[self.env.variant.name]}")
            self.engine_has_all_legal = self.check_legal and engine.known("all_legal")
        except EngineError:
            engine.close()
            raise
        return engine

    def opening(self, key: jax.Array, moves: int) -> list[int]:
        """`moves` uniformly random legal placements from the start (fewer if the game ends first)."""
        state, actions = self.env.init(), []
        for _ in range(moves):
            while not bool(state.terminated) and not bool(np.asarray(state.legal_bits).any()):
                state = self.step(state, self.env.pass_action)
            if bool(state.terminated):
                break
            key, sub = jax.random.split(key)
            action = int(self.env.sample_action(sub, state))
            actions.append(action)
            state = self.step(state, action)
        return actions

    def game(self, engine: GtpClient, index: int, level: int | None, settings: MatchSettings, games_dir: Path | None):
        """Play game `index` of a match, the agent in seat `index % players`.

        Args:
            engine: The running engine.
            index: The game's number in the match; with `level` and `settings.seed` it fixes the game's keys.
            level: The engine's level, or `None` without levels.
            settings: The match's settings (its `seed` and `opening` moves).
            games_dir: The folder to save the game's record in, or `None`.

        Returns:
            Its `GameResult` (an error game when the engine fails).
        """
        players = self.env.num_players
        seat = index % players
        key = jax.random.fold_in(jax.random.key(settings.seed), (level or 0) * 1_000_003 + index // players)
        opening = self.opening(jax.random.fold_in(key, 1), settings.opening)
        game = _Game(self, engine, seat, opening)
        error, resigned, state = None, False, None
        try:
            state, resigned = game.play(jax.random.fold_in(key, 2))
        except EngineError as exc:
            error = f"{exc.kind}: {exc}"
        n_moves = len(game.moves) - len(opening)  # placements made in the game (the opening's left out)
        agent_s = float(np.mean(game.agent_times)) if game.agent_times else 0.0
        engine_s = float(np.mean(game.engine_times)) if game.engine_times else 0.0
        if error is not None or state is None:
            return GameResult(index, level, seat, None, [], None, n_moves, agent_s, engine_s, error)
        scores = [int(s) for s in np.asarray(self.env.player_scores(state))]
        if resigned:
            share = 1.0
        else:
            share = float(np.asarray(rules.win_shares(np.asarray(scores)))[seat])
        others = [s for p, s in enumerate(scores) if p != seat]
        # A resignation ends the game before its scores are final: no margin, and the record says who won and how.
        margin = None if resigned else scores[seat] - max(others)
        record = self._save(game, index, level, seat, scores, games_dir, settings, resigned)
        return GameResult(
            index, level, seat, share, scores, margin, n_moves, agent_s, engine_s, None, record, resigned,
        )  # fmt: skip

    def _save(self, game: _Game, index, level, seat, scores, games_dir: Path | None, settings, resigned) -> str | None:
        if games_dir is None:
            return None
        names = [self.engine_name] * self.env.num_players
        names[seat] = f"blokus-jax {self.agent}"
        by_resignation = "B+R" if seat == 0 else "W+R"  # SGF's RE of the agent's win by the engine's resignation
        result = (by_resignation if resigned else result_value(scores)) if self.env.num_players == 2 else None
        metadata = {"event": f"blokus-jax match{'' if level is None else f' level {level}'}", "round": str(index)}
        text = write(self.env.variant, names, metadata, game.moves, result, "blokus-jax")
        path = games_dir / f"{'' if level is None else f'level{level}_'}game{index:04d}.blksgf"
        try:  # never through a link planted in the folder; a record that cannot be written loses only itself
            fileio.write_atomic(path, text, what="game record", error=MatchError)
        except BlokusError as exc:
            self.log(f"warning: game {index}'s record was not saved ({exc}); its result is kept, the match goes on")
            return None
        return str(path)


#: Longest line of a results file (bytes) and most lines read from one.
MAX_RESULTS_LINE = 100_000
MAX_RESULTS_LINES = 1_000_000
#: Most games a match plays per level; longest engine timeout (seconds); seeds are below 2**32.
MAX_GAMES = 100_000
MAX_TIMEOUT = 86_400.0
MAX_SEED = 2**32


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) and math.isfinite(value)


#: Each field of a results line: (check, what it must be).
_RESULT_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "game": (lambda v: _is_int(v) and 0 <= v < MAX_GAMES, f"a game index from 0 to {MAX_GAMES - 1}"),
    "level": (lambda v: v is None or (_is_int(v) and 1 <= v <= 9), "null or a level from 1 to 9"),
    "seat": (lambda v: _is_int(v) and 0 <= v < 4, "a seat from 0 to 3"),
    "share": (lambda v: v is None or (_is_number(v) and 0 <= v <= 1), "null or a finite number from 0 to 1"),
    "scores": (
        lambda v: isinstance(v, list) and len(v) <= 4 and all(_is_int(x) and abs(x) <= 1000 for x in v),
        "a list of at most 4 whole-number scores",
    ),
    "margin": (lambda v: v is None or (_is_int(v) and abs(v) <= 1000), "null or a whole-number margin"),
    "moves": (lambda v: _is_int(v) and 0 <= v <= 10_000, "a non-negative whole number of moves"),
    "agent_seconds": (lambda v: _is_number(v) and v >= 0, "a finite number of seconds from 0 up"),
    "engine_seconds": (lambda v: _is_number(v) and v >= 0, "a finite number of seconds from 0 up"),
    "error": (lambda v: v is None or (isinstance(v, str) and len(v) <= 10_000), "null or a text"),
    "record": (lambda v: v is None or (isinstance(v, str) and len(v) <= 10_000), "null or a file name"),
    "resigned": (lambda v: isinstance(v, bool), "true or false"),
}
_REQUIRED = ("game", "level", "seat", "share", "scores", "margin", "moves", "agent_seconds", "engine_seconds")


def _result_of(row: Any, where: str) -> GameResult:
    """The `GameResult` of results line `row` after checking every field; `MatchError` naming
    `where` (file and line) and the field otherwise."""
    if not isinstance(row, dict):
        raise MatchError(f"{where}: not a results line of blokus-jax match (a JSON object is expected)")
    row = dict(row)
    row.pop("type", None)
    unknown = sorted(str(k)[:40] for k in row if k not in _RESULT_FIELDS)
    if unknown:
        raise MatchError(f"{where}: not a results line of blokus-jax match (unknown field {unknown[0]!r})")
    missing = [k for k in _REQUIRED if k not in row]
    if missing:
        raise MatchError(f"{where}: not a results line of blokus-jax match (field {missing[0]!r} is missing)")
    for name, value in row.items():
        check, wanted = _RESULT_FIELDS[name]
        if not check(value):
            raise MatchError(f"{where}: field {name!r} is {str(value)[:60]!r}; it must be {wanted}")
    if (row["share"] is None) != (row.get("error") is not None):
        raise MatchError(f"{where}: field 'share' must be null exactly when the game has an 'error'")
    return GameResult(**row)


def _read_results(path: Path, settings: MatchSettings) -> list[GameResult]:
    """The games already in results file `path` (empty if it does not exist). Every line is checked (JSON, UTF-8,
    each field's type and range); raises `MatchError` naming the file, line and field for a file of
    another match or any malformed line (such a file is refused, never partly trusted), and for a symbolic link,
    a FIFO or anything but a regular file (at once, without reading it)."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise MatchError(f"cannot read results file {str(path)!r}: {exc.strerror or exc}") from None
    results: list[GameResult] = []
    lines = fileio.iter_lines(path, MAX_RESULTS_LINE, what="results file", error=MatchError, follow=False)
    for number, raw, _ in lines:
        where = f"results file {str(path)!r}, line {number}"
        if number > MAX_RESULTS_LINES:
            raise MatchError(f"results file {str(path)!r} has more than {MAX_RESULTS_LINES:,} lines; it is not one")
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise MatchError(f"{where}: not UTF-8 text (byte {exc.start}); this is not a results file") from None
        if not line.strip():
            continue
        try:
            row = fileio.load_json(line, max_depth=4, what="it", error=MatchError)
        except MatchError as exc:
            raise MatchError(f"{where}: not a results line of blokus-jax match ({exc})") from None
        if isinstance(row, dict) and row.get("type") == "settings":  # the game count may grow
            wanted = {k: v for k, v in asdict(settings).items() if k != "games"}
            diff = [k for k in wanted if row.get(k) != wanted[k]]
            if diff:
                raise MatchError(
                    f"{str(path)!r} holds a match with other settings ({', '.join(diff)}); give another "
                    f"--results file, or the same settings to resume it"
                )
            continue
        results.append(_result_of(row, where))
    return results


def play_match(
    agent: str,
    engine: str,
    games: int,
    variant: str = "duo",
    levels: Sequence[int] | None = None,
    opening: int = 0,
    seed: int = 0,
    results: str | os.PathLike | None = None,
    games_dir: str | os.PathLike | None = None,
    timeout: float = 60.0,
    check_legal: bool = True,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    engine_stderr: Any = subprocess.DEVNULL,
) -> dict[int | None, list[GameResult]]:
    """Play `games` games of `agent` against the GTP engine started by `engine`, per level when `levels` is
    given (`{level}` in `engine` is replaced by each level). Results are appended to `results` (JSON lines;
    games already there are kept and skipped, so an interrupted match resumes) and games saved under `games_dir`.

    Args:
        agent: The agent spec that plays.
        engine: The command that starts the GTP engine, with `{level}` where the level goes when `levels` is given.
        games: Games per level, 1 to `MAX_GAMES`; the agent's seat rotates.
        variant: The variant's name (one Pentobi plays).
        levels: The engine's levels to play, or `None`.
        opening: Uniformly random legal placements that start each game (both seatings of a pair play the same).
        seed: The match's seed, from 0 to `MAX_SEED - 1`.
        results: The JSON-lines results file, or `None`.
        games_dir: The folder to save each game's record in, or `None`.
        timeout: The seconds every engine reply must come within, above 0 and at most `MAX_TIMEOUT`.
        check_legal: Compare the engine's legal moves with the env's at every move (where the engine lists them).
        progress: Show a progress bar.
        log: Told when finished games of the results file are reused, and where results and games went.
        engine_stderr: Where the engine's stderr goes (a file object; default discarded).

    Returns:
        The games of each level (key `None` without levels).

    Raises:
        MatchError: Bad settings, before any game is played.
        AgentSpecError: A bad spec, before any game is played.
        KeyboardInterrupt: Interrupted (Ctrl-C); the message says how many finished games were kept, where, and
            how to continue.
    """
    if not _is_int(games) or not 1 <= games <= MAX_GAMES:
        raise MatchError(f"games must be a positive number of at most {MAX_GAMES:,}, got {games!r}")
    if not _is_int(seed) or not 0 <= seed < MAX_SEED:
        raise MatchError(f"seed must be a whole number from 0 to {MAX_SEED - 1}, got {seed!r}")
    if not _is_int(opening) or opening < 0:
        raise MatchError(f"opening must be a whole number of random moves, 0 or more, got {opening!r}")
    if not _is_number(timeout) or not 0 < timeout <= MAX_TIMEOUT:
        raise MatchError(f"timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:.0f}, got {timeout!r}")
    if levels is not None and "{level}" not in engine:
        raise MatchError("--levels needs '{level}' in the engine command, e.g. 'pentobi-gtp --level {level} ...'")
    if levels is None and "{level}" in engine:
        raise MatchError("the engine command contains '{level}'; give --levels (e.g. --levels 1-5) to fill it")
    settings = MatchSettings(agent, engine, variant, games, opening, seed, list(levels) if levels else None)
    results_path = Path(results) if results is not None else None
    done = _read_results(results_path, settings) if results_path is not None else []
    say = log or (lambda text: None)
    runner = MatchRunner(agent, variant, timeout, check_legal, engine_stderr, log=say)
    if opening > runner.env.num_colors * runner.env.num_pieces:  # its upper bound needs the variant's env
        raise MatchError(f"opening must be 0-{runner.env.num_colors * runner.env.num_pieces} random moves")
    if games_dir is not None:
        fileio.make_dir(games_dir, what="--save-games folder", error=MatchError)
    if results_path is not None and not done:
        if not os.path.lexists(results_path.absolute().parent):
            fileio.make_dir(results_path.absolute().parent, what="folder of the results file", error=MatchError)
        _append_result(results_path, {"type": "settings", **asdict(settings)})
    by_level: dict[int | None, list[GameResult]] = {}
    todo_of: dict[int | None, list[int]] = {}
    for level in levels or [None]:
        have = {r.game: r for r in done if r.level == level}
        by_level[level] = [have[i] for i in sorted(have) if i < games]
        todo_of[level] = [i for i in range(games) if i not in have]
    reused = sum(len(rows) for rows in by_level.values())
    planned = games * len(by_level)
    if reused:
        say(
            f"reusing {reused} finished game(s) of this match from {str(results_path)!r}; "
            f"{planned - reused} left to play"
        )
    try:
        for level, todo in todo_of.items():
            if todo:
                command = engine if level is None else engine.replace("{level}", str(level))
                _play_level(
                    runner, command, level, todo, settings, results_path, games_dir, progress, say, by_level[level]
                )
    except KeyboardInterrupt:
        played = sum(len(rows) for rows in by_level.values()) - reused
        raise KeyboardInterrupt(_interrupted(reused, played, planned, results_path, games_dir)) from None
    played = sum(len(rows) for rows in by_level.values()) - reused
    if played:
        written = [f"results in {str(results_path)!r}" if results_path is not None else "", _games_in(games_dir)]
        if any(written):
            say(f"played {played} game(s); " + ", ".join(w for w in written if w))
    return by_level


def _games_in(games_dir: str | os.PathLike | None) -> str:
    return "" if games_dir is None else f"games in {str(games_dir)!r}"


def _interrupted(reused: int, played: int, planned: int, results_path: Path | None, games_dir) -> str:
    """What an interrupted match says: how many games were kept, where, and how to continue."""
    games = f"; {_games_in(games_dir)}" if games_dir is not None else ""
    if results_path is None:
        return (
            f"interrupted after {played} finished game(s) of {planned}, which are not kept (no --results file){games}; "
            "give --results FILE to make a match resumable"
        )
    kept = reused + played
    return (
        f"interrupted: {kept} finished game(s) of {planned} are kept in {str(results_path)!r} ({played} played now, "
        f"{reused} reused; the game in progress is dropped){games}; run the same command again to play the "
        f"{planned - kept} left (finished games are reused, never replayed)"
    )


def _play_level(
    runner, command, level, todo, settings, results_path, games_dir, progress, say, played: list[GameResult]
) -> None:
    """Play games `todo` of one level, appending each result to `played` (and to the results file) as it
    finishes."""
    label = "match" if level is None else f"level {level}"
    engine: GtpClient | None = None
    bar = tqdm(todo, desc=label, unit="game", disable=not progress, dynamic_ncols=True)
    try:
        for index in bar:
            if engine is None or not engine.alive:
                try:
                    engine = runner.start_engine(command)
                except EngineError as exc:
                    result = GameResult(index, level, index % runner.env.num_players, None, [], None, 0, 0, 0,
                                        f"{exc.kind}: engine start failed: {exc}")  # fmt: skip
                    engine = None
                else:
                    result = runner.game(engine, index, level, settings, Path(games_dir) if games_dir else None)
            else:
                result = runner.game(engine, index, level, settings, Path(games_dir) if games_dir else None)
            if result.failed:
                say(f"{label}, game {index}: {result.error} (counted apart, not as a result)")
            played.append(result)
            if results_path is not None:
                _append_result(results_path, asdict(result))
            summary = LevelSummary.of(level, played, runner.env.num_players)
            bar.set_postfix_str(
                f"{'win' if summary.players == 2 else 'first'} {summary.win_rate:.2f} "
                f"agent {summary.agent_seconds:.2f}s/move" + (f" errors {summary.errors}" if summary.errors else "")
            )
    finally:
        bar.close()
        if engine is not None:
            engine.close()


def _append_result(path: Path, row: dict) -> None:
    """Append one JSON line to results file `path`, never through a symbolic link (`MatchError` then)."""
    fileio.append_text(path, json.dumps(row, allow_nan=False) + "\n", what="results file", error=MatchError)


def summarize(variant: str, by_level: dict[int | None, list[GameResult]]) -> tuple[list[LevelSummary], tuple | None]:
    """Per-level summaries and, when levels were played on a board Pentobi rates, the Elo estimate
    `(elo, low, high)` on Pentobi's scale.

    With more than two players the agent played one seat against the engine's level in all the others, and the
    estimate rates its first-place shares the way Pentobi rates a multi-player game (`ladder_elo` with
    `opponents = players - 1`). Pentobi measured its ratings in two-player games and uses them for the other
    variants of the same board, so such an estimate carries that assumption (docs/strength.md).

    Args:
        variant: The variant played.
        by_level: The games of each level, as `play_match` returns them.

    Returns:
        `(summaries, elo)`; `elo` is None without levels and for a variant Pentobi does not rate.
    """
    players = get_variant(variant).num_players
    summaries = [LevelSummary.of(level, rows, players) for level, rows in by_level.items()]
    rated = [s for s in summaries if s.level is not None and s.games]
    if not rated or variant not in BOARD_OF:
        return summaries, None
    points = [(level_elo(variant, s.level), s.win_rate * s.games, s.games) for s in rated]
    return summaries, ladder_elo(points, opponents=players - 1)
