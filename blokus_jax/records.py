"""Game records: move lists, Pentobi ``.blksgf`` import/export, a compact JSON form, replay and batched recording.

A :class:`GameRecord` holds the env's action ids (placements *and* passes), the colour that took each action, the
final scores, the players' names and free-form metadata. Every way of building one (:meth:`GameRecord.from_actions`,
:func:`from_rollout`, :func:`from_blksgf`, :func:`from_json`) replays the moves through the environment on device
(one ``lax.scan``) and checks each one with ``Env.is_legal``; a corrupt or illegal record raises
:class:`~blokus_jax.errors.RecordError` naming the move number and the reason, and nothing is half-loaded.

``.blksgf`` is Pentobi's SGF dialect (``GM[Blokus]``, ``GM[Blokus Two-Player]``, ``GM[Blokus Three-Player]``,
``GM[Blokus Duo]``, ``GM[Blokus Junior]``): one node per placement, e.g. ``;B[f9,e10,f10,g10,f11]``, column letters
from ``a``, row numbers from 1 at the bottom. It has no passes: on import a colour that is skipped gets the env's
pass, and forced passes after the last placement are added until the game ends, so a finished game reads back as
the exact action list the env produced.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from blokus_jax.env import Env, State, make
from blokus_jax.errors import BlokusError, IllegalActionError, RecordError
from blokus_jax.pieces import Piece
from blokus_jax.render import cell_name, color_names, parse_cell_name
from blokus_jax.variants import VARIANTS, Variant, get_variant

#: ``GM`` value of each variant that Pentobi knows.
SGF_GAMES: dict[str, str] = {
    "classic": "Blokus", "classic_2p": "Blokus Two-Player", "classic_3p": "Blokus Three-Player",
    "duo": "Blokus Duo", "junior": "Blokus Junior",
}
#: Friendly metadata keys and the standard SGF root properties they are written as.
SGF_METADATA: dict[str, str] = {
    "game_name": "GN", "date": "DT", "event": "EV", "round": "RO", "place": "PC", "source": "SO",
    "annotator": "AN", "user": "US", "copyright": "CP", "comment": "C", "game_comment": "GC",
}
#: Private root property holding metadata without a standard SGF property (a JSON object).
SGF_EXTRA = "XBJ"
JSON_FORMAT = "blokus-jax/record"
JSON_VERSION = 1
_SETUP = {"AB", "AW", "AE", "A1", "A2", "A3", "A4", "PL"}
_FORMAT_PROPS = {"GM", "FF", "CA", "AP", "RE", SGF_EXTRA}


def _app() -> str:
    from blokus_jax import __version__
    return f"blokus-jax:{__version__}"


# ----------------------------------------------------------------------------------------------- replay on device
@functools.lru_cache(maxsize=None)
def _env(variant: Variant) -> Env:
    return make(variant)


@functools.lru_cache(maxsize=None)
def _trace_fn(variant: Variant) -> Callable:
    """Jitted replay of a chunk of games: ``(actions[B, T], colors[B, T], n[B], complete[B]) -> (state, ptr, ok,
    per-step outputs)``, with ``T = max_game_length(variant) + num_colors + 1`` so each variant compiles once.

    Entry ``k`` of a game is played when the colour to move is ``colors[k]`` (or ``colors[k] < 0``); otherwise the
    colour to move passes. With ``complete`` forced passes follow the last entry until the game ends. A step that
    ``Env.is_legal`` rejects stops the game there (``ok`` False), so ``state`` is the position before it.
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

        (state, ptr, ok), outs = jax.lax.scan(body, (env.init(), jnp.int32(0), jnp.bool_(True)), None,
                                              length=actions.shape[0])
        return state, ptr, ok, outs

    return jax.jit(jax.vmap(one))


_CHUNK = 8   # games replayed per device call (a fixed batch shape, so one compilation per variant)


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


def _trace(variant: Variant, rows: Sequence[Sequence[int]], colors: Sequence[Sequence[int]] | None,
           complete: bool) -> list[_Trace]:
    """Replay several games (see :func:`_trace_fn`), :data:`_CHUNK` per device call, and copy results to the host.

    Raises :class:`RecordError` for a game with more entries than any game of the variant can have.
    """
    width = max_game_length(variant) + variant.num_colors + 1
    for b, row in enumerate(rows):
        if len(row) > max_game_length(variant):
            raise RecordError(f"{'game ' + str(b) + ': ' if len(rows) > 1 else ''}the record has {len(row)} moves "
                              f"but no game of {variant.name!r} lasts more than {max_game_length(variant)} steps")
    result = []
    for start in range(0, len(rows), _CHUNK):
        chunk = rows[start:start + _CHUNK]
        acts = np.full((_CHUNK, width), -1, np.int32)
        cols = np.full((_CHUNK, width), -1, np.int32)
        n = np.zeros((_CHUNK,), np.int32)
        for b, row in enumerate(chunk):
            acts[b, : len(row)] = row
            n[b] = len(row)
            if colors is not None:
                cols[b, : len(row)] = colors[start + b]
        flags = np.full((_CHUNK,), complete)
        state, ptr, ok, outs = jax.device_get(_trace_fn(variant)(acts, cols, n, flags))
        act, action, color, player, legal, scores = outs
        for b in range(len(chunk)):
            bad = np.nonzero(act[b] & ~legal[b])[0]
            played = int(act[b].sum()) - len(bad)
            result.append(_Trace(jax.tree.map(lambda x: x[b], state), bool(ok[b]), int(ptr[b]), action[b, :played],
                                 color[b, :played], player[b, :played], scores[b, :played],
                                 int(bad[0]) if len(bad) else -1))
    return result


def _legal_count(state: State) -> int:
    return int(np.asarray(jax.lax.population_count(state.legal_bits)).sum())


def explain_illegal(variant: Variant, state: State, action: int) -> str:
    """Why ``action`` is not legal in ``state`` (host-side diagnosis for error messages; the legality decision
    itself is always ``Env.is_legal``). Returns one sentence."""
    env = _env(variant)
    names = color_names(variant)
    color = int(state.current_color)
    who = names[color]
    if bool(state.terminated) or bool(state.truncated):
        return "the game was already over"
    if not 0 <= action < env.num_actions:
        return f"action {action} is out of range [0, {env.num_actions})"
    if action == env.pass_action:
        return f"{who} is to move and still has {_legal_count(state)} legal placements, so it cannot pass"
    try:
        cells = env.action_cells(action)
    except BlokusError as exc:
        return str(exc)
    board = np.asarray(state.board)
    rows, cols = variant.board_shape
    index = int(env.tables.orientation_piece[action // (rows * cols)])
    piece = variant.pieces[index]
    where = _cells_text(variant, cells)
    if np.asarray(state.remaining)[color, index] == 0:
        return f"{who} has no piece {piece.name!r} left (cells {where})"
    taken = [tuple(rc) for rc in cells if board[rc[0], rc[1]] != 0]
    if taken:
        return f"{who}'s piece {piece.name!r} at {where} covers occupied squares {_cells_text(variant, taken)}"
    own = board == color + 1
    padded = np.pad(own, 1)
    edge = [tuple(rc) for rc in cells
            if padded[rc[0], rc[1] + 1] | padded[rc[0] + 2, rc[1] + 1] | padded[rc[0] + 1, rc[1]]
            | padded[rc[0] + 1, rc[1] + 2]]
    if edge:
        return f"{who}'s piece {piece.name!r} at {where} shares an edge with another {who} piece"
    if int(np.asarray(state.pieces_placed)[color]) == 0:
        starts = _cells_text(variant, variant.start_cells[color])
        return f"{who}'s first piece {piece.name!r} at {where} does not cover its start square {starts}"
    return f"{who}'s piece {piece.name!r} at {where} does not touch another {who} piece corner to corner"


# ------------------------------------------------------------------------------------------------- coordinates
def _cells_text(variant: Variant, cells: Iterable[Sequence[int]]) -> str:
    """Pentobi point list ``a1,b1,...`` of ``cells`` in its canonical order (bottom row first, then columns)."""
    ordered = sorted(((int(r), int(c)) for r, c in cells), key=lambda rc: (-rc[0], rc[1]))
    return ",".join(cell_name(variant, r, c) for r, c in ordered)


def _parse_point(variant: Variant, text: str, move: int) -> tuple[int, int]:
    try:
        return parse_cell_name(variant, text)
    except IllegalActionError as exc:
        raise RecordError(f"move {move}: bad coordinate: {exc}") from None


def _sgf_color_ids(variant: Variant) -> tuple[str, ...]:
    return ("B", "W") if variant.num_colors == 2 else tuple(str(c + 1) for c in range(variant.num_colors))


def _sgf_player_props(variant: Variant) -> tuple[str, ...]:
    return ("PB", "PW") if variant.num_players == 2 else tuple(f"P{p + 1}" for p in range(variant.num_players))


# -------------------------------------------------------------------------------------------------- the record
@dataclass(frozen=True)
class GameRecord:
    """One game: the env action ids (placements and passes) with the colour that took each, the final per-colour
    scores, whether the game had ended, the players' names and metadata (``str -> str``).

    Build it with :meth:`from_actions`, :func:`from_rollout`, :func:`from_blksgf`, :func:`from_json` or
    :func:`load`; they all check every move against the rules.
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
    def from_actions(cls, env: Env | Variant | str, actions: Sequence[int] | np.ndarray,
                     players: Sequence[str] | None = None, metadata: dict[str, str] | None = None) -> GameRecord:
        """The record of playing ``actions`` (env action ids, passes included) from the start in ``env``'s variant.

        Trailing ``-1`` entries (the padding :func:`rollout` writes after a game ends) are dropped. Raises
        :class:`RecordError` naming the first action that is not legal and why.
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
        """Per action, the ``int32[k, 2]`` ``(row, col)`` cells it covers (``[0, 2]`` for a pass)."""
        return [_env(self.variant).action_cells(a) for a in self.actions]

    @property
    def moves(self) -> list[tuple[int, np.ndarray]]:
        """The placements only, as ``(colour, cells)`` pairs in the order they were played."""
        return [(c, cells) for c, cells in zip(self.colors, self.cells) if len(cells)]

    @property
    def player_scores(self) -> tuple[int, ...]:
        """Final score of each player (sum of its colours; a shared colour counts for nobody)."""
        return tuple(sum(self.final_scores[c] for c in colors) for colors in self.variant.players_to_colors)

    @property
    def winners(self) -> tuple[int, ...]:
        """Players with the best score once the game has ended (several on a tie; empty while unfinished)."""
        if not self.terminated:
            return ()
        best = max(self.player_scores)
        return tuple(p for p, s in enumerate(self.player_scores) if s == best)

    @property
    def result(self) -> str:
        """Human-readable outcome, e.g. ``"Alice wins 60 to 55"``, ``"draw at 40"`` or ``"unfinished"``."""
        if not self.terminated:
            return "unfinished"
        scores = " to ".join(str(s) for s in sorted(self.player_scores, reverse=True))
        if len(self.winners) > 1:
            return f"draw between {', '.join(self.players[p] for p in self.winners)} ({scores})"
        return f"{self.players[self.winners[0]]} wins {scores}"

    def replay(self) -> State:
        """Replay the record through the environment and return the final :class:`State` (the same state as
        stepping ``blokus_jax.make(record.variant)`` by hand with :attr:`actions`)."""
        return self.state_at(len(self.actions))

    def state_at(self, step: int) -> State:
        """The :class:`State` after the first ``step`` actions (``0``: the start; negative counts from the end)."""
        total = len(self.actions)
        index = step + total if step < 0 else step
        if not 0 <= index <= total:
            raise RecordError(f"step {step} is outside this record's 0..{total} positions")
        return _trace(self.variant, [self.actions[:index]], None, complete=False)[0].state

    def score_history(self) -> np.ndarray:
        """``int32[len(actions) + 1, C]``: every colour's score at the start and after each action (for plots)."""
        trace = _trace(self.variant, [self.actions], None, complete=False)[0]
        start = np.asarray(_env(self.variant).init().scores)[None]
        return np.concatenate([start, trace.scores]).astype(np.int32)

    # -------------------------------------------------------------------------------------------------- export
    def to_blksgf(self) -> str:
        """The record as Pentobi ``.blksgf`` text: a root node with ``GM``, ``FF``, ``CA``, ``AP``, the players'
        names, ``RE`` (two-player games that ended: ``B+n``, ``W+n`` or ``0``) and the metadata, then one node per
        placement (passes are implied). Raises :class:`RecordError` for variants Pentobi does not have."""
        if SGF_GAMES.get(self.variant.name) is None or self.variant != get_variant(self.variant.name):
            raise RecordError(f"variant {self.variant.name!r} has no .blksgf game type (Pentobi knows "
                              f"{sorted(SGF_GAMES)} with their standard rules); save it with to_json() instead")
        root = [("GM", SGF_GAMES[self.variant.name]), ("FF", "4"), ("CA", "UTF-8"), ("AP", _app())]
        default = _default_players(self.variant)
        root += [(prop, name) for prop, name, d in zip(_sgf_player_props(self.variant), self.players, default)
                 if name != d]
        if self.terminated and self.variant.num_players == 2:
            diff = self.player_scores[0] - self.player_scores[1]
            root.append(("RE", "0" if diff == 0 else f"B+{diff}" if diff > 0 else f"W+{-diff}"))
        extra = {k: v for k, v in self.metadata.items() if k not in SGF_METADATA}
        root += [(SGF_METADATA[k], v) for k, v in self.metadata.items() if k in SGF_METADATA]
        if extra:
            root.append((SGF_EXTRA, json.dumps(extra, sort_keys=True)))
        ids = _sgf_color_ids(self.variant)
        lines = ["(", ";" + "".join(f"{p}[{_escape(v)}]" for p, v in root)]
        lines += [f";{ids[c]}[{_cells_text(self.variant, cells)}]" for c, cells in self.moves]
        return "\n".join(lines + [")"]) + "\n"

    def to_dict(self) -> dict[str, Any]:
        """The JSON form as plain Python data (see :meth:`to_json`)."""
        registered = self.variant.name in VARIANTS and self.variant == get_variant(self.variant.name)
        return {
            "format": JSON_FORMAT,
            "version": JSON_VERSION,
            "variant": self.variant.name if registered else _variant_to_dict(self.variant),
            "players": list(self.players),
            "metadata": dict(self.metadata),
            "actions": list(self.actions),
            "moves": [[c, _cells_text(self.variant, cells)] for c, cells in zip(self.colors, self.cells)],
            "scores": list(self.final_scores),
            "terminated": self.terminated,
        }

    def to_json(self, indent: int | None = None) -> str:
        """Compact JSON text: the variant (its name, or its full definition if it is custom), players, metadata,
        the action ids, the same moves as ``[colour, "pentobi cells"]`` pairs (``""`` for a pass), the final
        per-colour scores and whether the game ended. :func:`from_json` reads it back."""
        separators = (",", ":") if indent is None else None
        return json.dumps(self.to_dict(), indent=indent, separators=separators)

    def save(self, path: str | Path) -> Path:
        """Write the record to ``path``: ``.blksgf``/``.sgf`` as :meth:`to_blksgf`, ``.json`` as :meth:`to_json`.
        Returns the path."""
        path = Path(path)
        if path.suffix.lower() in (".blksgf", ".sgf"):
            path.write_text(self.to_blksgf(), encoding="utf-8")
        elif path.suffix.lower() == ".json":
            path.write_text(self.to_json(), encoding="utf-8")
        else:
            raise RecordError(f"cannot tell the record format from {path.name!r}; use a .blksgf or .json suffix")
        return path


def _default_players(variant: Variant) -> tuple[str, ...]:
    return tuple(f"Player {p + 1}" for p in range(variant.num_players))


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _variant_to_dict(variant: Variant) -> dict[str, Any]:
    data = dataclasses.asdict(variant)
    data["pieces"] = [[p.name, [list(c) for c in p.cells], p.copies] for p in variant.pieces]
    return data


def _variant_from_json(value: Any) -> Variant:
    try:
        if isinstance(value, str):
            return get_variant(value)
        data = dict(value)
        data["pieces"] = tuple(Piece(name, tuple(map(tuple, cells)), copies) for name, cells, copies in data["pieces"])
        return Variant(**data)
    except (BlokusError, TypeError, KeyError, ValueError) as exc:
        raise RecordError(f"bad variant in record: {value!r:.200} ({exc})") from exc


def _validate_actions(variant: Variant, actions: Sequence[int]) -> list[int]:
    env = _env(variant)
    row = [int(a) for a in np.asarray(actions, np.int64).reshape(-1)]
    while row and row[-1] == -1:
        row.pop()
    for k, a in enumerate(row):
        if not 0 <= a < env.num_actions:
            raise RecordError(f"action {k + 1}: id {a} is out of range [0, {env.num_actions}) for variant "
                              f"{variant.name!r}")
    return row


def _build(variant: Variant, trace: _Trace, players, metadata, describe: Callable[[_Trace], str]) -> GameRecord:
    if not trace.ok:
        raise RecordError(describe(trace))
    players = _default_players(variant) if players is None else tuple(str(p) for p in players)
    if len(players) != variant.num_players:
        raise RecordError(f"variant {variant.name!r} has {variant.num_players} players but {len(players)} names "
                          f"were given: {list(players)}")
    scores = trace.scores[-1] if len(trace.scores) else np.asarray(_env(variant).init().scores)
    return GameRecord(variant, tuple(int(a) for a in trace.actions), tuple(int(c) for c in trace.colors),
                      tuple(int(s) for s in scores), bool(trace.state.terminated), players,
                      {str(k): str(v) for k, v in (metadata or {}).items()})


def _describe_action_failure(variant: Variant, rows: Sequence[Sequence[int]], b: int) -> Callable[[_Trace], str]:
    def describe(trace: _Trace) -> str:
        action = rows[b][trace.failed_step]
        game = f"game {b}: " if len(rows) > 1 else ""
        return (f"{game}action {trace.failed_step + 1} (id {action}) is illegal: "
                f"{explain_illegal(variant, trace.state, action)}")
    return describe


# --------------------------------------------------------------------------------------------- batched record
@functools.lru_cache(maxsize=None)
def _rollout_fn(env: Env, policy: Callable, length: int) -> Callable:
    def one(key):
        def body(state, k):
            done = state.terminated | state.truncated
            action = jnp.asarray(policy(k, state), jnp.int32)
            nxt = jax.tree.map(lambda a, b: jnp.where(done, a, b), state, env.step(state, action))
            return nxt, jnp.where(done, -1, action)

        return jax.lax.scan(body, env.init(), jax.random.split(key, length))

    return jax.jit(jax.vmap(one))


def max_game_length(variant: Variant) -> int:
    """An upper bound on the steps of any game: every colour places all its pieces and passes once."""
    return variant.num_colors * (sum(p.copies for p in variant.pieces) + 1)


def rollout(env: Env, key: jax.Array, batch: int, policy: Callable | None = None,
            max_steps: int | None = None) -> tuple[State, jax.Array]:
    """Play ``batch`` games at once on device with ``policy(key, state) -> action`` (default: uniform random legal
    moves) for ``max_steps`` steps (default: :func:`max_game_length`, enough to finish any game), all in one
    jitted ``vmap`` of a ``lax.scan``: no Python per step.

    Returns the final states (leading axis ``batch``) and the ``int32[batch, max_steps]`` action history, ``-1``
    after a game has ended; pass the history to :func:`from_rollout`.
    """
    length = max_game_length(env.variant) if max_steps is None else int(max_steps)
    fn = _rollout_fn(env, env.sample_action if policy is None else policy, length)
    return fn(jax.random.split(key, batch))


def from_rollout(env: Env | Variant | str, actions: Sequence[Sequence[int]] | np.ndarray | jax.Array,
                 players: Sequence[str] | None = None, metadata: dict[str, str] | None = None) -> list[GameRecord]:
    """One :class:`GameRecord` per row of an action history (e.g. from :func:`rollout`; trailing ``-1`` ignored),
    all replayed and checked in one batched device call. Raises :class:`RecordError` naming the game, the first
    illegal action and why."""
    variant = env.variant if isinstance(env, Env) else get_variant(env)
    rows = [_validate_actions(variant, row) for row in (np.asarray(actions) if hasattr(actions, "shape") else actions)]
    traces = _trace(variant, rows, None, complete=False) if rows else []
    return [_build(variant, t, players, metadata, _describe_action_failure(variant, rows, b))
            for b, t in enumerate(traces)]


# ------------------------------------------------------------------------------------------------- .blksgf read
def _parse_sgf(text: str) -> list[list[tuple[str, list[str]]]]:
    """The main line of the first game tree in ``text``: a list of nodes, each a list of ``(property, values)``."""
    pos = 0
    length = len(text)

    def where(at: int) -> str:
        return f"line {text.count(chr(10), 0, at) + 1}"

    def skip() -> None:
        nonlocal pos
        while pos < length and text[pos].isspace():
            pos += 1

    def tree() -> list:
        nonlocal pos
        pos += 1                          # '('
        nodes: list = []
        first_child: list | None = None
        while True:
            skip()
            if pos >= length:
                raise RecordError(f"truncated file: a game tree is not closed with ')' ({where(pos)})")
            ch = text[pos]
            if ch == ";" and first_child is None:
                pos += 1
                nodes.append(node())
            elif ch == "(":
                child = tree()
                first_child = child if first_child is None else first_child
            elif ch == ")":
                pos += 1
                return nodes + (first_child or [])
            else:
                raise RecordError(f"malformed SGF: unexpected {ch!r} at {where(pos)}")

    def node() -> list:
        nonlocal pos
        props = []
        while True:
            skip()
            start = pos
            while pos < length and (text[pos].isupper() or text[pos].isdigit()):
                pos += 1
            if pos == start:
                return props
            ident = text[start:pos]
            values = []
            skip()
            while pos < length and text[pos] == "[":
                values.append(value())
                skip()
            if not values:
                raise RecordError(f"malformed SGF: property {ident} has no value at {where(start)}")
            props.append((ident, values))

    def value() -> str:
        nonlocal pos
        start = pos
        pos += 1
        out = []
        while pos < length and text[pos] != "]":
            if text[pos] == "\\" and pos + 1 < length:
                pos += 1
            out.append(text[pos])
            pos += 1
        if pos >= length:
            raise RecordError(f"truncated file: a property value opened at {where(start)} is not closed")
        pos += 1
        return "".join(out)

    skip()
    if pos >= length or text[pos] != "(":
        raise RecordError("not an SGF file: it must start with '(' (is the file empty or truncated?)")
    return tree()


def from_blksgf(text: str) -> GameRecord:
    """Read a Pentobi ``.blksgf`` record (the main line of the first game) and check it move by move.

    Raises :class:`RecordError` with the reason for a truncated or malformed file, an unknown ``GM``, setup
    properties (not supported), a bad coordinate, cells that are no piece, an illegal move (with its number), or a
    ``RE`` result that disagrees with the replayed score.
    """
    nodes = _parse_sgf(text)
    if not nodes:
        raise RecordError("the SGF file has no nodes; a record needs at least a root node with GM[...]")
    root = dict((k, v[0]) for k, v in nodes[0])
    game = root.get("GM")
    by_game = {gm: name for name, gm in SGF_GAMES.items()}
    if game not in by_game:
        raise RecordError(f"unsupported game GM[{game}]; blokus-jax reads {sorted(by_game)}"
                          if game is not None else "the root node has no GM[...] game type")
    variant = get_variant(by_game[game])
    env = _env(variant)
    ids = {cid: c for c, cid in enumerate(_sgf_color_ids(variant))}
    colors, actions = [], []
    for index, props in enumerate(nodes):
        for ident, values in props:
            if ident in _SETUP:
                raise RecordError(f"node {index + 1}: setup property {ident} is not supported; only games played "
                                  f"from the empty board can be replayed")
            if ident in ("B", "W") or (len(ident) == 1 and ident.isdigit()):
                move = len(actions) + 1
                if ident not in ids:
                    raise RecordError(f"move {move}: {ident}[...] is not a colour of {game} (colours: {list(ids)})")
                if len(values) != 1 or not values[0]:
                    raise RecordError(f"move {move}: {ident} needs exactly one non-empty list of points")
                cells = [_parse_point(variant, p, move) for p in values[0].split(",")]
                try:
                    actions.append(env.action_from_cells(cells))
                except BlokusError as exc:
                    raise RecordError(f"move {move} ({ident}[{values[0]}]): {exc}") from exc
                colors.append(ids[ident])
    trace = _trace(variant, [actions], [colors], complete=True)[0]

    def describe(t: _Trace) -> str:
        k = t.consumed
        points = _cells_text(variant, env.action_cells(actions[k]))
        move = f"move {k + 1} ({_sgf_color_ids(variant)[colors[k]]}[{points}])"
        mover = int(t.state.current_color)
        if mover != colors[k] and not bool(t.state.terminated):
            names = color_names(variant)
            return (f"{move} is out of turn: {names[mover]} is to move before {names[colors[k]]} and still has "
                    f"{_legal_count(t.state)} legal placements")
        return f"{move} is illegal: {explain_illegal(variant, t.state, actions[k])}"

    players = [root.get(p, d) for p, d in zip(_sgf_player_props(variant), _default_players(variant))]
    metadata = {k: root[p] for k, p in SGF_METADATA.items() if p in root}
    if SGF_EXTRA in root:
        try:
            metadata.update(json.loads(root[SGF_EXTRA]))
        except json.JSONDecodeError as exc:
            raise RecordError(f"root property {SGF_EXTRA} must hold a JSON object: {exc}") from exc
    record = _build(variant, trace, players, metadata, describe)
    if "RE" in root and record.terminated and variant.num_players == 2 and re.fullmatch(r"0|[BW]\+\d+", root["RE"]):
        diff = record.player_scores[0] - record.player_scores[1]
        expected = "0" if diff == 0 else f"B+{diff}" if diff > 0 else f"W+{-diff}"
        if root["RE"] != expected:
            raise RecordError(f"the file's result RE[{root['RE']}] disagrees with the replayed game ({expected})")
    return record


# ---------------------------------------------------------------------------------------------------- JSON read
def from_json(text: str | dict) -> GameRecord:
    """Read the JSON form written by :meth:`GameRecord.to_json` (text or the parsed dict), replay it and check the
    stored moves and scores against the replay; raises :class:`RecordError` on any mismatch or illegal action."""
    try:
        data = json.loads(text) if isinstance(text, str) else dict(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"record is not valid JSON ({exc}); is the file truncated?") from exc
    if data.get("format") != JSON_FORMAT or data.get("version") != JSON_VERSION:
        raise RecordError(f"not a blokus-jax record: expected format {JSON_FORMAT!r} version {JSON_VERSION}, got "
                          f"{data.get('format')!r} version {data.get('version')!r}")
    missing = [k for k in ("variant", "actions") if k not in data]
    if missing:
        raise RecordError(f"record lacks the fields {missing}")
    variant = _variant_from_json(data["variant"])
    record = GameRecord.from_actions(variant, data["actions"], players=data.get("players"),
                                     metadata=data.get("metadata"))
    stored = record.to_dict()
    for key in ("moves", "scores", "terminated"):
        if key in data and data[key] != stored[key]:
            diff = next((k for k, (a, b) in enumerate(zip(data[key], stored[key])) if a != b), None) \
                if isinstance(data[key], list) else None
            at = f" (first difference at entry {diff + 1})" if diff is not None else ""
            raise RecordError(f"record field {key!r} disagrees with the replayed actions{at}")
    return record


def load(path: str | Path) -> GameRecord:
    """Read a ``.blksgf`` or ``.json`` record from ``path`` (format chosen from the content), replaying and checking
    it; raises :class:`RecordError` for a missing, unreadable or corrupt file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"cannot read record {str(path)!r}: {exc}") from exc
    return from_json(text) if text.lstrip().startswith("{") else from_blksgf(text)


def save_records(records: Iterable[GameRecord], directory: str | Path, stem: str = "game",
                 fmt: str = "blksgf") -> list[Path]:
    """Write records as ``directory/{stem}_{k:04d}.{fmt}`` (``fmt`` ``"blksgf"`` or ``"json"``; variants without
    a ``.blksgf`` game type are written as JSON). Creates the directory; returns the paths written."""
    if fmt not in ("blksgf", "json"):
        raise RecordError(f"unknown record format {fmt!r}; use 'blksgf' or 'json'")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, record in enumerate(records):
        suffix = fmt if fmt == "json" or record.variant.name in SGF_GAMES else "json"
        paths.append(record.save(directory / f"{stem}_{k:04d}.{suffix}"))
    return paths
