"""Game records: the `GameRecord`, its compact JSON form, and checked replay on device.

A `GameRecord` holds the env's action ids (placements and passes), the colour that took each action, the final
scores, the players' names and metadata. Every way of building one (`GameRecord.from_actions`,
`from_rollout`, `from_blksgf`, `from_json`, `load`) replays the moves on device and checks
each with `Env.is_legal`; a corrupt, oversized or illegal record raises `RecordError`
naming the move or field, and nothing is half-loaded. Pentobi's `.blksgf` syntax is `blokus_jax.io.sgf`, a
variant's JSON form `blokus_jax.io.record_json`, the play loop `blokus_jax.rollout`.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax import rules
from blokus_jax.env import Env, State, make
from blokus_jax.errors import RecordError
from blokus_jax.io import fileio, sgf
from blokus_jax.io.record_json import (
    _kind,
    _list,
    _str,
    variant_from_json,
    variant_to_dict,
)
from blokus_jax.io.render import cell_name, cells_text, color_names
from blokus_jax.rollout import max_game_length
from blokus_jax.variants import GAMES, VARIANTS, Variant, get_variant

__all__ = [
    "JSON_FORMAT",
    "JSON_VERSION",
    "MAX_RECORD_BYTES",
    "GameRecord",
    "explain_illegal",
    "from_blksgf",
    "from_json",
    "from_rollout",
    "load",
    "save_records",
]

JSON_FORMAT = "blokus-jax/record"
JSON_VERSION = 1
#: Largest record file (or text) read; a classic game with comments is a few kilobytes.
MAX_RECORD_BYTES = 1 << 20


def _app() -> str:
    from blokus_jax import __version__

    return f"blokus-jax:{__version__}"


def explain_illegal(variant: Variant, state: State, action: int) -> str:
    """Why `action` is not legal in `state`, in one sentence with the variant's colour names and Pentobi cell
    names (`blokus_jax.rules.explain_illegal` with the display names of `blokus_jax.io.render`).

    Args:
        variant: The rules the state is played under.
        state: One unbatched position.
        action: The action index.

    Returns:
        The sentence; `"action N is legal here"` when the action is legal.
    """
    return rules.explain_illegal(
        _env(variant).tables,
        state,
        action,
        color_names=color_names(variant),
        cell_name=functools.partial(cell_name, variant),
    )


# ----------------------------------------------------------------------------------------------- replay on device
@functools.cache
def _env(variant: Variant) -> Env:
    return make(variant)


@functools.lru_cache(maxsize=32)
def _trace_fn(variant: Variant, width: int) -> Callable:
    """Jitted replay of a chunk of games: `(actions[B, T], colors[B, T], n[B], complete[B]) -> (state, ptr, ok,
    per-step outputs)` with `T = width` steps (see `_width`).

    Entry `k` of a game is played when the colour to move is `colors[k]` (or `colors[k] < 0`); otherwise the
    colour to move passes. With `complete` forced passes follow the last entry until the game ends. A step that
    `Env.is_legal` rejects stops the game there (`ok` False), so `state` is the position before it.
    """
    env = _env(variant)

    def one(actions, colors, n, complete):
        last = actions.shape[0] - 1

        def body(carry, _):
            state, ptr, ok = carry
            more = ptr < n
            want = colors[jnp.minimum(ptr, last)]
            mine = more & ((want < 0) | (want == state.current_color))
            action = jnp.where(mine, actions[jnp.minimum(ptr, last)], env.pass_action)
            stuck = ~(state.terminated | state.truncated) & ~jnp.any(state.legal_bits != 0)
            act = ok & (more | (complete & stuck))
            legal = env.is_legal(state, action)
            good = act & legal
            nxt = jax.tree.map(lambda a, b: jnp.where(good, a, b), env.step(state, action), state)
            out = (act, action, state.current_color, state.current_player, legal, nxt.scores)
            return (nxt, ptr + (good & mine).astype(jnp.int32), ok & ~(act & ~legal)), out

        (state, ptr, ok), outs = jax.lax.scan(
            body, (env.init(), jnp.int32(0), jnp.bool_(True)), None, length=actions.shape[0]
        )
        return state, ptr, ok, outs

    return jax.jit(jax.vmap(one))


_CHUNK = 8  # games replayed per device call (a fixed batch shape, so one compilation per variant)
_FIXED_WIDTH = 512


def _width(variant: Variant, entries: int) -> int:
    """Replay steps for records of up to `entries` entries: enough for every entry and the passes (each colour
    passes once). Ordinary variants always use `max_game_length + C + 1` (one compilation); a variant with very
    long games uses a power of two covering the record, so the work follows the record and not the variant."""
    full = max_game_length(variant) + variant.num_colors + 1
    if full <= _FIXED_WIDTH:
        return full
    need = max(entries + variant.num_colors + 1, _FIXED_WIDTH)
    return min(full, 1 << (need - 1).bit_length())


@dataclass(frozen=True)
class _Trace:
    """Host copy of one replay: final state, entries consumed and per-step outputs (trimmed to the steps taken)."""

    state: State
    ok: bool
    consumed: int
    actions: np.ndarray
    colors: np.ndarray
    players: np.ndarray
    scores: np.ndarray
    failed_step: int


def _trace(
    variant: Variant, rows: Sequence[Sequence[int]], colors: Sequence[Sequence[int]] | None, complete: bool
) -> list[_Trace]:
    """Replay several games (see `_trace_fn`), `_CHUNK` per device call, and copy results to the host.

    Raises `RecordError` for a game with more entries than any game of the variant can have.
    """
    for b, row in enumerate(rows):
        if len(row) > max_game_length(variant):
            raise RecordError(
                f"{'game ' + str(b) + ': ' if len(rows) > 1 else ''}the record has {len(row)} moves "
                f"but no game of {variant.name!r} lasts more than {max_game_length(variant)} steps"
            )
    width = _width(variant, max((len(row) for row in rows), default=0))
    result = []
    for start in range(0, len(rows), _CHUNK):
        chunk = rows[start : start + _CHUNK]
        acts = np.full((_CHUNK, width), -1, np.int32)
        cols = np.full((_CHUNK, width), -1, np.int32)
        n = np.zeros((_CHUNK,), np.int32)
        for b, row in enumerate(chunk):
            acts[b, : len(row)] = row
            n[b] = len(row)
            if colors is not None:
                cols[b, : len(row)] = colors[start + b]
        flags = np.full((_CHUNK,), complete)
        state, ptr, ok, outs = jax.device_get(_trace_fn(variant, width)(acts, cols, n, flags))
        act, action, color, player, legal, scores = outs
        for b in range(len(chunk)):
            bad = np.nonzero(act[b] & ~legal[b])[0]
            played = int(act[b].sum()) - len(bad)
            result.append(
                _Trace(
                    jax.tree.map(lambda x: x[b], state),
                    bool(ok[b]),
                    int(ptr[b]),
                    action[b, :played],
                    color[b, :played],
                    player[b, :played],
                    scores[b, :played],
                    int(bad[0]) if len(bad) else -1,
                )
            )
    return result


# -------------------------------------------------------------------------------------------------- the record
@dataclass(frozen=True)
class GameRecord:
    """One game: the env action ids (placements and passes) with the colour that took each, the final per-colour
    scores, whether the game had ended, the players' names and metadata (`str -> str`).

    Build it with `from_actions`, `from_rollout`, `from_blksgf`, `from_json` or
    `load`; they all check every move against the rules.
    """

    variant: Variant
    actions: tuple[int, ...]
    colors: tuple[int, ...]
    final_scores: tuple[int, ...]
    terminated: bool
    players: tuple[str, ...]
    metadata: dict[str, str] = field(default_factory=dict)

    # ------------------------------------------------------------------------------------------- construction
    @classmethod
    def from_actions(
        cls,
        env: Env | Variant | str,
        actions: Sequence[int] | np.ndarray,
        players: Sequence[str] | None = None,
        metadata: dict[str, str] | None = None,
    ) -> GameRecord:
        """The record of playing `actions` (env action ids, passes included) from the start in `env`'s variant.

        Trailing `-1` entries (the padding `rollout` writes after a game ends) are dropped.

        Args:
            env: An `Env`, a `Variant` or a registered variant name.
            actions: The action ids in the order played.
            players: The players' names, one a player (default: `Player 1`, `Player 2`, ...).
            metadata: Free `str -> str` data kept with the record (date, event, ...).

        Returns:
            The checked record.

        Raises:
            RecordError: An action is not an integer id, out of range, beyond the longest possible game, or not
                legal where it is played (the message names the first one and why), or `players` does not
                name every player.
            VariantError: `env` is an unknown variant name.
        """
        return from_rollout(env, [actions], players=players, metadata=metadata)[0]

    # ---------------------------------------------------------------------------------------------- derived
    @property
    def name(self) -> str:
        """The variant's name."""
        return self.variant.name

    @property
    def pass_action(self) -> int:
        """The pass's action id in this variant."""
        return _env(self.variant).pass_action

    @property
    def cells(self) -> list[np.ndarray]:
        """Per action, the `int32[k, 2]` `(row, col)` cells it covers (`[0, 2]` for a pass)."""
        return [_env(self.variant).action_cells(a) for a in self.actions]

    @property
    def moves(self) -> list[tuple[int, np.ndarray]]:
        """The placements only, as `(colour, cells)` pairs in the order they were played."""
        return [(c, cells) for c, cells in zip(self.colors, self.cells) if len(cells)]

    @property
    def player_scores(self) -> tuple[int, ...]:
        """Final score of each player (sum of its colours; a shared colour counts for nobody)."""
        scores = rules.player_scores(_env(self.variant).tables, np.asarray(self.final_scores, np.int32))
        return tuple(int(s) for s in np.asarray(scores))

    @property
    def winners(self) -> tuple[int, ...]:
        """Players with the best score once the game has ended (several on a tie; empty while unfinished)."""
        if not self.terminated:
            return ()
        shares = np.asarray(rules.win_shares(np.asarray(self.player_scores)))
        return tuple(int(p) for p in np.flatnonzero(shares))

    @property
    def result(self) -> str:
        """Human-readable outcome, e.g. `"Alice wins 60 to 55"`, `"draw at 40"` or `"unfinished"`."""
        if not self.terminated:
            return "unfinished"
        scores = " to ".join(str(s) for s in sorted(self.player_scores, reverse=True))
        if len(self.winners) > 1:
            return f"draw between {', '.join(self.players[p] for p in self.winners)} ({scores})"
        return f"{self.players[self.winners[0]]} wins {scores}"

    def replay(self) -> State:
        """Replay the record through the environment and return the final `State` (the same state as
        stepping `blokus_jax.make(record.variant)` by hand with `actions`)."""
        return self.state_at(len(self.actions))

    def state_at(self, step: int) -> State:
        """The position after the first `step` actions, replayed.

        Args:
            step: Actions played: `0` is the start, `len(actions)` the end; negative counts from the end.

        Returns:
            The `State`.

        Raises:
            RecordError: `step` is outside the record's positions.
        """
        total = len(self.actions)
        index = step + total if step < 0 else step
        if not 0 <= index <= total:
            raise RecordError(f"step {step} is outside this record's 0..{total} positions")
        return _trace(self.variant, [self.actions[:index]], None, complete=False)[0].state

    def movers(self) -> tuple[int, ...]:
        """The player who took each action (for a shared colour: the player whose turn it was to place it)."""
        trace = _trace(self.variant, [self.actions], None, complete=False)[0]
        return tuple(int(p) for p in trace.players)

    def score_history(self) -> np.ndarray:
        """`int32[len(actions) + 1, C]`: every colour's score at the start and after each action (for plots)."""
        trace = _trace(self.variant, [self.actions], None, complete=False)[0]
        start = np.asarray(_env(self.variant).init().scores)[None]
        return np.concatenate([start, trace.scores]).astype(np.int32)

    # -------------------------------------------------------------------------------------------------- export
    def to_blksgf(self) -> str:
        """The record as Pentobi `.blksgf` text (`blokus_jax.io.sgf.write`): a root node with `GM`, `FF`,
        `CA`, `AP`, the players' names, `RE` (two-player games that ended: `B+n`, `W+n` or `0`) and
        the metadata, then one node per placement (passes are implied). Raises `RecordError` for variants
        Pentobi does not have."""
        result = sgf.result_value(self.player_scores) if self.terminated and self.variant.num_players == 2 else None
        return sgf.write(self.variant, self.players, self.metadata, self.moves, result, _app())

    def to_dict(self) -> dict[str, Any]:
        """The JSON form as plain Python data (see `to_json`)."""
        registered = self.variant.name in VARIANTS and self.variant == get_variant(self.variant.name)
        return {
            "format": JSON_FORMAT,
            "version": JSON_VERSION,
            "variant": self.variant.name if registered else variant_to_dict(self.variant),
            "players": list(self.players),
            "metadata": dict(self.metadata),
            "actions": list(self.actions),
            "moves": [[c, cells_text(self.variant, cells)] for c, cells in zip(self.colors, self.cells)],
            "scores": list(self.final_scores),
            "terminated": self.terminated,
        }

    def to_json(self, indent: int | None = None) -> str:
        """The record as JSON text, which `from_json` reads back.

        Args:
            indent: Indent nested values by this many spaces; `None` for compact text on one line.

        Returns:
            The variant (its name, or its full definition if it is custom), players, metadata, the action ids,
            the same moves as `[colour, "pentobi cells"]` pairs (`""` for a pass), the final per-colour scores
            and whether the game ended.
        """
        separators = (",", ":") if indent is None else None
        return json.dumps(self.to_dict(), indent=indent, separators=separators)

    def save(self, path: str | Path, overwrite: bool = True) -> Path:
        """Write the record to `path`: `.blksgf`/`.sgf` as `to_blksgf`, `.json` as `to_json`.
        The write is atomic (`blokus_jax.io.fileio.write_atomic`: a failure half-way leaves an old file intact)
        and never goes through a symbolic link; `overwrite=False` refuses an existing file. Returns the path;
        raises `RecordError` for an unknown suffix or a file that cannot be written."""
        path = Path(path)
        if path.suffix.lower() in (".blksgf", ".sgf"):
            text = self.to_blksgf()
        elif path.suffix.lower() == ".json":
            text = self.to_json()
        else:
            raise RecordError(f"cannot tell the record format from {path.name!r}; use a .blksgf or .json suffix")
        return fileio.write_atomic(path, text, overwrite=overwrite, what="record", error=RecordError)


def _validate_actions(variant: Variant, actions: Sequence[int] | np.ndarray) -> list[int]:
    """Action ids as Python ints, trailing `-1` padding dropped; `RecordError` for a non-integer, an id
    out of range or more actions than a game can have (checked before anything is converted)."""
    env = _env(variant)
    if isinstance(actions, (str, bytes, dict)) or not hasattr(actions, "__len__"):
        raise RecordError(f"actions must be a list of integer action ids, got {_kind(actions)}")
    if isinstance(actions, np.ndarray) or hasattr(actions, "dtype"):
        array = np.asarray(actions)
        if array.ndim != 1 or not np.issubdtype(array.dtype, np.integer):
            raise RecordError(f"actions must be a 1-d array of integer ids, got {array.dtype} of shape {array.shape}")
        actions = array.tolist()
    row = list(actions)
    while row and isinstance(row[-1], (int, np.integer)) and not isinstance(row[-1], bool) and row[-1] == -1:
        row.pop()
    limit = max_game_length(variant)
    if len(row) > limit:
        raise RecordError(
            f"the record has {len(row)} actions but no game of {variant.name!r} lasts more than {limit} steps"
        )
    for k, a in enumerate(row):
        if not isinstance(a, (int, np.integer)) or isinstance(a, bool):
            raise RecordError(f"action {k + 1}: {_kind(a)} {str(a)[:40]!r} is not an integer action id")
        if not 0 <= a < env.num_actions:
            shown = str(a) if abs(a) < 10**12 else f"a {len(str(abs(a)))}-digit number"
            raise RecordError(
                f"action {k + 1}: id {shown} is out of range [0, {env.num_actions}) for variant {variant.name!r}"
            )
    return [int(a) for a in row]


def _build(variant: Variant, trace: _Trace, players, metadata, describe: Callable[[_Trace], str]) -> GameRecord:
    if not trace.ok:
        raise RecordError(describe(trace))
    players = sgf.default_players(variant) if players is None else tuple(str(p) for p in players)
    if len(players) != variant.num_players:
        raise RecordError(
            f"variant {variant.name!r} has {variant.num_players} players but {len(players)} names "
            f"were given: {list(players)}"
        )
    scores = trace.scores[-1] if len(trace.scores) else np.asarray(_env(variant).init().scores)
    return GameRecord(
        variant,
        tuple(int(a) for a in trace.actions),
        tuple(int(c) for c in trace.colors),
        tuple(int(s) for s in scores),
        bool(trace.state.terminated),
        players,
        {str(k): str(v) for k, v in (metadata or {}).items()},
    )


def _describe_action_failure(variant: Variant, rows: Sequence[Sequence[int]], b: int) -> Callable[[_Trace], str]:
    def describe(trace: _Trace) -> str:
        action = rows[b][trace.failed_step]
        game = f"game {b}: " if len(rows) > 1 else ""
        return (
            f"{game}action {trace.failed_step + 1} (id {action}) is illegal: "
            f"{explain_illegal(variant, trace.state, action)}"
        )

    return describe


# --------------------------------------------------------------------------------------------- batched record
def from_rollout(
    env: Env | Variant | str,
    actions: Sequence[Sequence[int]] | np.ndarray | jax.Array,
    players: Sequence[str] | None = None,
    metadata: dict[str, str] | None = None,
) -> list[GameRecord]:
    """One `GameRecord` per row of an action history (e.g. from `blokus_jax.rollout.rollout`), all replayed
    and checked in one batched device call.

    Args:
        env: An `Env`, a `Variant` or a registered variant name.
        actions: One row of action ids a game; trailing `-1` padding is ignored.
        players: The players' names, one a player, the same for every game (default: `Player 1`, ...).
        metadata: Free `str -> str` data, the same for every game.

    Returns:
        The records, in the order of the rows.

    Raises:
        RecordError: A row holds a non-integer or out-of-range id or too many actions, or an illegal action (the
            message names the game, the first illegal action and why).
        VariantError: `env` is an unknown variant name.
    """
    variant = env.variant if isinstance(env, Env) else get_variant(env)
    rows = [_validate_actions(variant, row) for row in (np.asarray(actions) if hasattr(actions, "shape") else actions)]
    traces = _trace(variant, rows, None, complete=False) if rows else []
    return [
        _build(variant, t, players, metadata, _describe_action_failure(variant, rows, b)) for b, t in enumerate(traces)
    ]


# ------------------------------------------------------------------------------------------------- .blksgf read
def _check_size(text: str) -> str:
    """`text` without a leading UTF-8 byte order mark; `RecordError` if it is over the size limit."""
    if not isinstance(text, str):
        raise RecordError(f"a record must be given as text, got {_kind(text)}")
    if len(text) > MAX_RECORD_BYTES:
        raise RecordError(
            f"the record is {len(text):,} characters long; records are at most {MAX_RECORD_BYTES:,} "
            f"(a whole game takes a few kilobytes)"
        )
    return text.removeprefix("\ufeff")


def from_blksgf(text: str) -> GameRecord:
    """Read a Pentobi `.blksgf` record (the main line of the first game, `blokus_jax.io.sgf.read`) and check
    it move by move.

    Args:
        text: The file's text (at most `MAX_RECORD_BYTES` characters; a leading byte order mark is skipped).

    Returns:
        The checked record.

    Raises:
        RecordError: Text that is too long, a truncated or malformed file, an unknown `GM`, setup properties (not
            supported), a bad coordinate, cells that are no piece, an illegal or out-of-turn move (with its
            number), or an `RE` result that disagrees with the replayed score.
    """
    game = sgf.read(_check_size(text))
    variant, actions, colors = game.variant, game.actions, game.colors
    trace = _trace(variant, [actions], [colors], complete=True)[0]
    ids = sgf.color_ids(variant)

    def describe(t: _Trace) -> str:
        k = t.consumed
        move = f"move {k + 1} ({ids[colors[k]]}[{cells_text(variant, _env(variant).action_cells(actions[k]))}])"
        mover = int(t.state.current_color)
        if mover != colors[k] and not bool(t.state.terminated):
            names = color_names(variant)
            count = int(np.asarray(rules.popcount(jnp.asarray(t.state.legal_bits))).sum())
            return (
                f"{move} is out of turn: {names[mover]} is to move before {names[colors[k]]} and still has "
                f"{count} legal placements"
            )
        return f"{move} is illegal: {explain_illegal(variant, t.state, actions[k])}"

    record = _build(variant, trace, game.players, game.metadata, describe)
    result = game.result
    if result is not None and record.terminated and variant.num_players == 2 and _RESULT.fullmatch(result):
        expected = sgf.result_value(record.player_scores)
        if result != expected:
            raise RecordError(f"the file's result RE[{result}] disagrees with the replayed game ({expected})")
    return record


_RESULT = re.compile(r"0|[BW]\+[0-9]{1,6}")


# ---------------------------------------------------------------------------------------------------- JSON read
def from_json(text: str | dict) -> GameRecord:
    """Read the JSON form written by `GameRecord.to_json` (text or the parsed dict), replay it and check the
    stored moves and scores against the replay.

    Every field is type-checked before use and a custom variant is checked against the `MAX_RECORD_*` limits
    before anything is built from it.

    Args:
        text: The JSON text, or the dict it parses to.

    Returns:
        The checked record.

    Raises:
        RecordError: Text that is too long or not JSON, another format or version, a missing or mistyped field
            (named), an illegal action, or stored moves or scores that disagree with the replay.
    """
    if isinstance(text, dict):
        data = text
    else:
        text = _check_size(text)
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise RecordError(f"record is not valid JSON ({str(exc)[:200]}); is the file truncated?") from None
    if not isinstance(data, dict):
        raise RecordError(f"a record must be a JSON object, got {_kind(data)}")
    if data.get("format") != JSON_FORMAT or type(data.get("version")) is not int or data["version"] != JSON_VERSION:
        raise RecordError(
            f"not a blokus-jax record: expected format {JSON_FORMAT!r} version {JSON_VERSION}, got "
            f"{str(data.get('format'))[:60]!r} version {str(data.get('version'))[:20]!r}"
        )
    missing = [k for k in ("variant", "actions") if k not in data]
    if missing:
        raise RecordError(f"record lacks the fields {missing}")
    variant = variant_from_json(data["variant"])
    actions = _list(data["actions"], "'actions'", 0, max_game_length(variant))
    players = data.get("players")
    if players is not None:
        players = [
            _str(p, f"'players'[{k}]", MAX_RECORD_BYTES)
            for k, p in enumerate(_list(players, "'players'", variant.num_players, variant.num_players))
        ]
    metadata = data.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise RecordError(f"record field 'metadata' must be an object of strings, got {_kind(metadata)}")
        for key, value in metadata.items():
            if not isinstance(value, (str, int, float)):
                raise RecordError(f"record field 'metadata'[{str(key)[:40]!r}] must be a string, got {_kind(value)}")
    record = GameRecord.from_actions(variant, actions, players=players, metadata=metadata)
    stored = record.to_dict()
    for key in ("moves", "scores", "terminated"):
        if key in data and data[key] != stored[key]:
            diff = (
                next((k for k, (a, b) in enumerate(zip(data[key], stored[key])) if a != b), None)
                if isinstance(data[key], list) and isinstance(stored[key], list)
                else None
            )
            at = f" (first difference at entry {diff + 1})" if diff is not None else ""
            raise RecordError(f"record field {key!r} disagrees with the replayed actions{at}")
    return record


def load(path: str | Path) -> GameRecord:
    """Read a `.blksgf` or `.json` record from `path` (format chosen from the content; a UTF-8 byte order
    mark is skipped), replaying and checking it.

    Args:
        path: The record file.

    Returns:
        The checked record.

    Raises:
        RecordError: A missing, unreadable, oversized (over `MAX_RECORD_BYTES`; no more is ever read), non-UTF-8
            or corrupt file, an HTML page, or one that is not a regular file (a FIFO or device is refused
            without reading it); and what `from_blksgf` and `from_json` raise.
    """
    path = Path(path)
    raw = fileio.read_bytes(path, MAX_RECORD_BYTES, what="record", error=RecordError)  # regular files only
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise RecordError(f"cannot read record {str(path)!r}: it is not UTF-8 text ({exc})") from None
    start = text.lstrip()
    if start.startswith("<"):
        raise RecordError(
            f"{str(path)!r} is an HTML or XML file, not a game record; give the .blksgf or .json "
            f"record (a viewer page is made from one with 'blokus-jax view')"
        )
    return from_json(text) if start.startswith(("{", "[")) else from_blksgf(text)


def save_records(
    records: Iterable[GameRecord],
    directory: str | Path,
    stem: str = "game",
    fmt: str = "blksgf",
    overwrite: bool = False,
) -> list[Path]:
    """Write records as `directory/{stem}_{k:04d}.{fmt}`, creating the directory. An existing file is never
    replaced unless `overwrite`: every name is checked before the first is written, so a refused call writes
    nothing.

    Args:
        records: The records to write.
        directory: The folder.
        stem: A plain file name stem (letters, digits, `_`, `-`, `.`; no path parts).
        fmt: `"blksgf"` or `"json"`; variants without a `.blksgf` game type are written as JSON.
        overwrite: Replace existing files.

    Returns:
        The paths written, in the order of `records`.

    Raises:
        RecordError: An unknown `fmt`, a bad `stem`, a folder that cannot be created, existing files without
            `overwrite`, or a file that cannot be written.
    """
    if fmt not in ("blksgf", "json"):
        raise RecordError(f"unknown record format {fmt!r}; use 'blksgf' or 'json'")
    if not isinstance(stem, str) or not _STEM.fullmatch(stem):
        raise RecordError(
            f"record file stem {str(stem)[:60]!r} must be a plain name of letters, digits, '_', '-' or '.' "
            f"(no path parts, not starting with '.'); give the folder as the directory"
        )
    directory = Path(directory)
    records = list(records)
    paths = [
        directory / f"{stem}_{k:04d}.{fmt if fmt == 'json' or record.variant.name in GAMES else 'json'}"
        for k, record in enumerate(records)
    ]
    fileio.make_dir(directory, what="folder for the records", error=RecordError)  # a symbolic link is refused
    taken = [p for p in paths if fileio.check_target(p, what="record", error=RecordError)]
    if taken and not overwrite:
        raise RecordError(
            f"{len(taken)} of the {len(paths)} record files exist already (e.g. {str(taken[0])!r}); refusing to "
            f"replace them: choose another folder or remove them"
        )
    return [record.save(path, overwrite=overwrite) for record, path in zip(records, paths)]


_STEM = re.compile(r"[\w-][\w.-]{0,99}")
