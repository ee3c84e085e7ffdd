"""OpenSpiel adapter: every Blokus variant as an OpenSpiel Python game (`blokus_duo`, `blokus_classic`, ...), for
MCTS, AlphaZero, CFR, Elo evaluation and the rest of OpenSpiel's algorithms.

`import blokus_jax.adapters.openspiel` registers the games with `pyspiel`; then `pyspiel.load_game("blokus_duo")`
works as for any other game (extra `[openspiel]`). States are loaded from their move list, never unpickled;
`ProjectBot` plays any agent spec as a `pyspiel.Bot`. The games, the observation layout, serialisation,
caches and players are described in `docs/adapters.md` ("OpenSpiel: the details").
"""

from __future__ import annotations

import base64
import collections
import functools
import json
import numbers
import re
from typing import Any

import jax
import numpy as np

from blokus_jax import _extras
from blokus_jax.adapters._boundary import check_agent_spec
from blokus_jax.env import Env, make
from blokus_jax.errors import ConfigError, IllegalActionError, RecordError, VariantError
from blokus_jax.io import render
from blokus_jax.rollout import max_game_length
from blokus_jax.variants import Variant, get_variant

_extras.require("openspiel", "blokus_jax.adapters.openspiel (the OpenSpiel adapter)")
import pyspiel  # noqa: E402 (after the check that names the extra)

#: OpenSpiel game name -> registered variant name.
GAMES: dict[str, str] = {
    "blokus_classic": "classic",
    "blokus_classic_2p": "classic_2p",
    "blokus_classic_3p": "classic_3p",
    "blokus_duo": "duo",
    "blokus_junior": "junior",
    "blokus_simple": "simple",
}

#: Game parameters and their defaults: `variant` is a custom variant from `variant_parameter` ("" = the
#: game's own variant).
PARAMETERS = {"variant": ""}

#: The most rule sets kept at once (one per canonical variant; the least recently used is dropped).
RULES_CACHE_SIZE = 8


# --------------------------------------------------------------------------------------------------- the rules
class _Position:
    """One host-side position: the core state as NumPy arrays, the legal action ids of the player to move, the
    player to move (-4, OpenSpiel's TERMINAL, once over), the returns and the moves that led here. Immutable, so
    `clone` shares it (`copy.deepcopy` returns it as is); pickled as its move list (see the module doc)."""

    __slots__ = ("rules", "core", "legal", "player", "returns", "actions")

    def __init__(self, rules: _Rules, core: Any, legal: np.ndarray, actions: tuple[int, ...]):
        for array in (*jax.tree.leaves(core), legal):
            array.flags.writeable = False  # shared by clones: nobody may change it in place
        self.rules = rules
        self.core = core
        self.legal = legal
        self.actions = actions
        terminal = bool(core.terminated) or bool(core.truncated)
        self.player = int(pyspiel.PlayerId.TERMINAL) if terminal else int(core.current_player)
        self.returns = tuple(float(r) for r in core.rewards) if terminal else (0.0,) * len(core.rewards)

    def __deepcopy__(self, memo: dict) -> _Position:
        return self

    def __copy__(self) -> _Position:
        return self

    @property
    def rules_key(self) -> str:
        """The canonical variant key of the rules this position follows."""
        return self.rules.key

    def __reduce__(self):
        return (_replayed, (self.rules.key, self.actions))


class _Rules:
    """One variant's core env and the cached, jitted functions the games and states call (shared by every game
    of that variant and every state of those games)."""

    def __init__(self, key: str, variant: Variant):
        self.key = key
        self.env = env = make(variant)
        self._step = jax.jit(lambda s, a: self._with_mask(env.step(s, a)))
        self._features = jax.jit(lambda s, p: env.observe(s, p))
        core, mask = jax.device_get(jax.jit(lambda: self._with_mask(env.init()))())
        self.initial = _Position(self, core, np.flatnonzero(mask), ())

    @staticmethod
    def _with_mask(state):
        return state, state.legal_action_mask

    def play(self, position: _Position, action: int) -> _Position:
        """The position after the legal `action` (the caller checks legality against `position.legal`)."""
        core, mask = jax.device_get(self._step(position.core, np.int32(action)))
        return _Position(self, core, np.flatnonzero(mask), (*position.actions, int(action)))

    def features(self, position: _Position, player: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """`(planes [2C, H, W], pieces [C, P], to_move [C])` float32 for `player`."""
        obs = jax.device_get(self._features(position.core, np.int32(player)))
        return np.moveaxis(obs.planes, -1, 0), obs.pieces, obs.to_move

    def action_string(self, action: int) -> str:
        """`"pass"` or the Pentobi point list of the cells `action` covers."""
        if action == self.env.pass_action:
            return "pass"
        return render.cells_text(self.env.variant, self.env.action_cells(action))

    def text(self, position: _Position) -> str:
        return render.to_text(position.core, self.env.variant)


#: Canonical variant key -> rule set, least recently used first (at most `RULES_CACHE_SIZE`).
_RULES: collections.OrderedDict[str, _Rules] = collections.OrderedDict()
#: Parameter text -> (canonical key, variant), least recently used first (small: a key and a Variant each).
_SPELLINGS: collections.OrderedDict[str, tuple[str, Variant]] = collections.OrderedDict()
_SPELLINGS_SIZE = 256


def _decode_variant(text: str) -> Variant:
    """The custom variant of a `variant` game parameter (base64 records-format JSON, checked field by field)."""
    from blokus_jax.io.record_json import variant_from_json
    from blokus_jax.io.records import MAX_RECORD_BYTES

    fix = "pass variant_parameter(variant) from blokus_jax.adapters.openspiel"
    if len(text) > MAX_RECORD_BYTES:
        raise VariantError(f"game parameter variant is {len(text)} characters, over {MAX_RECORD_BYTES}; {fix}")
    try:
        value = json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise VariantError(f"game parameter variant is not base64 JSON ({exc}); {fix}") from exc
    try:
        return variant_from_json(value)
    except RecordError as exc:
        raise VariantError(f"game parameter variant: {exc}") from exc


def _canonical(text: str) -> tuple[str, Variant]:
    """`(key, variant)` of a variant key or parameter: a registered name stays itself; a custom variant's
    parameter, however spelled (padding, key order, spaces), becomes the registered name when its rules are that
    variant's, else `variant_parameter` of the decoded variant. Remembered for a bounded number of spellings."""
    if text in _SPELLINGS:
        _SPELLINGS.move_to_end(text)
        return _SPELLINGS[text]
    if text in GAMES.values():
        found = (text, get_variant(text))
    else:
        variant = _decode_variant(text)
        registered = variant.name in GAMES.values() and variant == get_variant(variant.name)
        found = (variant.name if registered else variant_parameter(variant), variant)
    _SPELLINGS[text] = found
    while len(_SPELLINGS) > _SPELLINGS_SIZE:
        _SPELLINGS.popitem(last=False)
    return found


def _rules(text: str) -> _Rules:
    """The `_Rules` of a variant key or `variant` parameter (any spelling of one variant gives the same
    rule set), built once and kept while among the `RULES_CACHE_SIZE` most recently used."""
    key, variant = _canonical(text)
    if key in _RULES:
        _RULES.move_to_end(key)
        return _RULES[key]
    rules = _RULES[key] = _Rules(key, variant)
    while len(_RULES) > RULES_CACHE_SIZE:
        _RULES.popitem(last=False)
    return rules


def _replayed(rules_key: str, actions: Any) -> _Position:
    """A position rebuilt from its move list, every move checked against the rules (the unpickling of
    `_Position`); raises `RecordError` naming the first bad move."""
    if not isinstance(rules_key, str) or not isinstance(actions, tuple):
        raise RecordError("a serialised Blokus state holds a variant key and a tuple of actions; the string is corrupt")
    try:
        rules = _rules(rules_key)
    except VariantError as exc:
        raise RecordError(f"serialised Blokus state: {exc}") from exc
    position = rules.initial
    for i, action in enumerate(actions):
        if type(action) is not int or action not in position.legal:
            raise RecordError(f"serialised Blokus state: move {i} ({action!r}) is not legal in that position")
        position = rules.play(position, action)
    return position


def variant_parameter(variant: Variant) -> str:
    """The game parameter `variant` that plays `variant`: its records-format JSON in URL-safe base64 without
    padding (letters, digits, `-` and `_` only, which OpenSpiel's game strings carry unchanged)."""
    from blokus_jax.io.record_json import variant_to_dict

    text = json.dumps(variant_to_dict(variant), separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


# --------------------------------------------------------------------------------------------------- the game
def _game_type(name: str, players: int | None = None) -> pyspiel.GameType:
    """The OpenSpiel game type of registered game `name`, for `players` players (default: its variant's; a
    custom variant given as a game parameter may have another number)."""
    players = get_variant(GAMES[name]).num_players if players is None else players
    return pyspiel.GameType(
        short_name=name,
        long_name=f"Blokus ({GAMES[name]}, blokus-jax)",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=players,
        min_num_players=players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=dict(PARAMETERS),
    )


class BlokusGame(pyspiel.Game):
    """A Blokus variant as an OpenSpiel game (see the module doc); built by `pyspiel.load_game(name, params)`.

    `core` is the `blokus_jax.Env` it plays (`reward="winloss"`) and `variant` its variant.

    Args:
        params: OpenSpiel game parameters: only `variant`, a custom variant as `variant_parameter` writes it
            (base64 JSON; empty for the registered game's own).

    Raises:
        ConfigError: The class is not one of the registered games, a parameter is unknown, or `variant` is not
            a string.
        VariantError: The `variant` parameter is too long, not base64 JSON, or not a valid variant.
    """

    #: The OpenSpiel name, set on the subclass registered for each name (see `register_games`).
    game_name = ""

    def __init__(self, params: dict | None = None):
        name = self.game_name
        if name not in GAMES:
            raise ConfigError(f"load Blokus games with pyspiel.load_game(name), name one of {sorted(GAMES)}")
        params = dict(params or {})
        unknown = sorted(set(params) - set(PARAMETERS))
        if unknown:
            raise ConfigError(f"{name}: unknown game parameters {unknown}; the parameters are {sorted(PARAMETERS)}")
        custom = params.get("variant", "")
        if not isinstance(custom, str):
            raise ConfigError(f"{name}: game parameter variant must be a JSON string, got {type(custom).__name__}")
        self._rules = rules = _rules(custom or GAMES[name])
        self._rules_key = rules.key
        self.core: Env = rules.env
        self.variant: Variant = rules.env.variant
        game_type = _game_type(name, self.variant.num_players)
        info = pyspiel.GameInfo(
            num_distinct_actions=self.core.num_actions,
            max_chance_outcomes=0,
            num_players=self.variant.num_players,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=None,
            max_game_length=max_game_length(self.variant),
        )
        super().__init__(game_type, info, {"variant": custom})

    def new_initial_state(self) -> BlokusState:
        """The starting position."""
        return BlokusState(self)

    def deserialize_state(self, text: str) -> BlokusState:
        """The state that the state part of `pyspiel.serialize_game_and_state`'s text describes (the lines
        `history=...`, `move_number=...` and `__dict__=...`), rebuilt from its move list alone: the pickled
        `__dict__` line is never decoded, but must be the one OpenSpiel writes for the replayed moves (nothing
        else may follow them), and the text is bounded by the game's longest game. Every move is replayed through
        the rules and must be legal and made by the player to move; raises
        `RecordError` naming the first bad line or move."""
        return _state_from_moves(self, text)

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> Any:
        """The observer behind `observation_tensor` / `observation_string` (and, for the information state of
        this perfect-information game, OpenSpiel's public-information observer)."""
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return _Observer(self._rules, params)
        from open_spiel.python.observation import IIGObserverForPublicInfoGame

        return IIGObserverForPublicInfoGame(iig_obs_type, params)


class BlokusState(pyspiel.State):
    """A Blokus position as an OpenSpiel state (host-side; see the module doc). `core_state` is the core
    `blokus_jax.State` (NumPy arrays)."""

    def __init__(self, game: BlokusGame):
        super().__init__(game)
        self.__dict__["_position"] = game._rules.initial

    @property
    def _position(self) -> _Position:
        """The position (kept in the instance `__dict__`, the attributes OpenSpiel copies and serialises)."""
        return self.__dict__["_position"]

    @_position.setter
    def _position(self, position: Any) -> None:
        """Set by OpenSpiel's `clone` and its C++ loader: only a position of this state's own game is taken."""
        game = self.get_game()
        if not isinstance(position, _Position):
            raise RecordError(f"a {game} state holds a Blokus position, not {type(position).__name__}")
        if position.rules_key != game._rules_key:
            raise RecordError(
                f"a position of variant {position.rules.env.variant.name!r} "
                f"({'x'.join(map(str, position.rules.env.board_shape))}, {position.rules.env.num_players} players) "
                f"cannot be a state of {game} (variant {game.variant.name!r}); load the string with the game "
                f"it was written for"
            )
        self.__dict__["_position"] = position

    def legal_actions(self, player: int | None = None) -> list[int]:
        """The legal actions of the player to move, sorted (of `player`: the same when it is to move, `[]` for
        another player of the game). Raises `ConfigError` for a `player` outside
        `[0, num_players)`."""
        if player is None:
            return super().legal_actions()
        return super().legal_actions(self._checked_player(player, "legal_actions"))

    def legal_actions_mask(self, player: int | None = None) -> list[int]:
        """OpenSpiel's 0/1 mask over `num_distinct_actions`; `player` as in `legal_actions`."""
        if player is None:
            return super().legal_actions_mask()
        return super().legal_actions_mask(self._checked_player(player, "legal_actions_mask"))

    def _checked_player(self, player: Any, method: str) -> int:
        """`player` as an int after checking it is a player of the game (or the pseudo-player to move, which is
        OpenSpiel's `TERMINAL` at the end)."""
        n = self.num_players()
        if isinstance(player, bool) or not isinstance(player, numbers.Integral):
            raise ConfigError(f"{method}({player!r}): a player is an int in [0, {n})")
        player = int(player)
        if not 0 <= player < n and player != self.current_player():
            raise ConfigError(
                f"{method}({player}): this game has players 0 to {n - 1}; pass one of them, or no argument for the "
                f"player to move"
            )
        return player

    @property
    def core_state(self) -> Any:
        """The core `blokus_jax.State` of this position (NumPy arrays; do not modify them)."""
        return self._position.core

    def current_player(self) -> int:
        return self._position.player

    def _legal_actions(self, player: int) -> list[int]:
        if player != self._position.player:
            return []
        return self._position.legal.tolist()

    def _apply_action(self, action: int) -> None:
        position = self._position
        if position.player < 0:
            raise IllegalActionError(f"action {action}: the game is over")
        if action not in position.legal:
            raise IllegalActionError(f"action {action} is not legal here; pick one of state.legal_actions()")
        self.__dict__["_position"] = position.rules.play(position, int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        return self._position.rules.action_string(int(action))

    def is_terminal(self) -> bool:
        return self._position.player < 0

    def returns(self) -> list[float]:
        return list(self._position.returns)

    def __str__(self) -> str:
        return self._position.rules.text(self._position)


# ------------------------------------------------------------------------------------------------ serialisation
_HISTORY_ITEM = re.compile(r"(-?[0-9]{1,10}):([0-9]{1,10})", re.ASCII)


def _state_from_moves(game: BlokusGame, text: Any) -> BlokusState:
    """`BlokusGame.deserialize_state`: the state from the `history=` and `move_number=` lines of
    OpenSpiel's state text, every move replayed and checked; the `__dict__=` line (a pickle) is never read."""
    fix = "load a string written by pyspiel.serialize_game_and_state for this game"
    if not isinstance(text, str):
        raise RecordError(f"a serialised {game} state is text, got {type(text).__name__}; {fix}")
    limit = game.max_game_length()
    if len(text) > _MAX_STATE_CHARS_PER_MOVE * (limit + 1) + _MAX_STATE_EXTRA:
        raise RecordError(
            f"serialised {game} state: {len(text):,} characters, more than a {game} state of at most {limit} moves "
            f"takes; {fix}"
        )
    lines = text.split("\n", 2)
    if len(lines) < 2 or not lines[0].startswith("history=") or not lines[1].startswith("move_number="):
        raise RecordError(f"a serialised {game} state starts with lines 'history=...' and 'move_number=...'; {fix}")
    if len(lines[0]) > 24 * (limit + 1):
        raise RecordError(f"serialised {game} state: the history is longer than the game's {limit} moves; {fix}")
    items = lines[0][len("history=") :].split(",") if lines[0] != "history=" else []
    moves = []
    for i, item in enumerate(items):
        match = _HISTORY_ITEM.fullmatch(item)
        if match is None:
            raise RecordError(f"serialised {game} state: move {i} is {item[:40]!r}, not 'player:action'; {fix}")
        moves.append((int(match[1]), int(match[2])))
    number = lines[1][len("move_number=") :]
    if not number.isascii() or not number.isdigit() or int(number) != len(moves):
        raise RecordError(
            f"serialised {game} state: move_number={number[:20]!r} does not match its {len(moves)} moves; {fix}"
        )
    state = game.new_initial_state()
    for i, (player, action) in enumerate(moves):
        if state.is_terminal():
            raise RecordError(f"serialised {game} state: move {i} ({player}:{action}) comes after the end of the game")
        if player != state.current_player():
            raise RecordError(
                f"serialised {game} state: move {i} is made by player {player}, but player "
                f"{state.current_player()} is to move; {fix}"
            )
        if action not in state._position.legal:
            raise RecordError(f"serialised {game} state: move {i} (action {action}) is not legal in that position")
        state.apply_action(action)
    rest = lines[2].rstrip("\n") if len(lines) > 2 else ""
    expected = state.serialize().split("\n", 2)
    if rest != (expected[2].rstrip("\n") if len(expected) > 2 else ""):
        # What follows the moves can only be the __dict__ line that OpenSpiel writes for them (the same moves, as a
        # pickle that is never decoded, so it is compared with the one written for the replayed state instead).
        raise RecordError(
            f"serialised {game} state: after the moves comes {rest[:40]!r}, not the '__dict__=' line that "
            f"OpenSpiel writes for these {len(moves)} moves (a corrupt or edited line, or extra lines); {fix}"
        )
    return state


#: Bounds on a serialised state text (characters a move, and a fixed allowance): a huge text is refused unsplit.
_MAX_STATE_CHARS_PER_MOVE, _MAX_STATE_EXTRA = 64, 4096


def deserialize_game_and_state(text: str) -> tuple[Any, Any]:
    """`(game, state)` from the text of `pyspiel.serialize_game_and_state`, without unpickling anything for the
    games of this module: the game is loaded from the `[Game]` line and the state rebuilt from its move list by
    `BlokusGame.deserialize_state`. The text of any other game goes to OpenSpiel's own loader. Importing this
    module installs it as `pyspiel.deserialize_game_and_state`. Raises `RecordError`
    for a bad Blokus state and `VariantError` for a bad `variant` parameter."""
    game_string, state_text = _split_serialised(text)
    if game_string is None or game_string.partition("(")[0].strip() not in GAMES:
        return _OPENSPIEL_DESERIALIZE(text)
    if state_text is None:
        raise RecordError("a serialised Blokus game and state has a [Game] and a [State] section; the text is cut")
    game = pyspiel.load_game(game_string)
    return game, game.deserialize_state(state_text)


def _split_serialised(text: Any) -> tuple[str | None, str | None]:
    """`(game string, state text)` of OpenSpiel's serialised form (`None` for a part that is missing)."""
    if not isinstance(text, str):
        return None, None
    lines = text.split("\n")
    try:
        game_at = lines.index("[Game]")
    except ValueError:
        return None, None
    state_at = lines.index("[State]") if "[State]" in lines[game_at:] else None
    game_lines = lines[game_at + 1 : state_at]
    game_string = "\n".join(line for line in game_lines if line).strip() or None
    state_text = None if state_at is None else "\n".join(lines[state_at + 1 :])
    return game_string, state_text


#: OpenSpiel's own loader, used for the strings of other games.
_OPENSPIEL_DESERIALIZE = getattr(
    pyspiel.deserialize_game_and_state, "openspiel_loader", pyspiel.deserialize_game_and_state
)
deserialize_game_and_state.openspiel_loader = _OPENSPIEL_DESERIALIZE


class _Observer:
    """The observation of `BlokusState` (see the module doc): `dict` holds `planes`, `pieces` and
    `to_move`, views into the flat `tensor`."""

    def __init__(self, rules: _Rules, params: Any):
        if params:
            raise ConfigError(f"the Blokus observation takes no parameters, got {params}")
        self._rules = rules
        env = rules.env
        rows, cols = env.board_shape
        c, p = env.num_colors, env.num_pieces
        shapes = {"planes": (2 * c, rows, cols), "pieces": (c, p), "to_move": (c,)}
        self.tensor = np.zeros(sum(int(np.prod(s)) for s in shapes.values()), np.float32)
        self.dict, start = {}, 0
        for name, shape in shapes.items():
            size = int(np.prod(shape))
            self.dict[name] = self.tensor[start : start + size].reshape(shape)
            start += size

    def set_from(self, state: BlokusState, player: int) -> None:
        for name, values in zip(("planes", "pieces", "to_move"), self._rules.features(state._position, player)):
            self.dict[name][...] = values

    def string_from(self, state: BlokusState, player: int) -> str:
        del player  # perfect information: everyone sees the same board
        return self._rules.text(state._position)


# ----------------------------------------------------------------------------------------------------- the bot
class ProjectBot(pyspiel.Bot):
    """Any agent of the project as an OpenSpiel bot: `ProjectBot("mcts:sims=64")`, `ProjectBot("greedy")`, a
    run directory, ... (the agent specs of `blokus_agents.core.policies.resolve_agent`). It plays the states of the
    games of this module; the policy is resolved and jitted once per variant, on the first move of that variant.

    The spec is checked when the bot is made: its type, an agent name and its options (typed and range-checked,
    bounds that depend on the board taken on the largest registered board, `classic`), and that a run directory
    it names exists. What depends on the game (a run directory's checkpoint and variant, a shipped baseline, the
    memory estimate) is checked then too when `game` is given, else on the bot's first move in a game.

    Args:
        spec: the agent spec (or a pure JAX policy `(key, core_state) -> action`).
        seed: seeds the key split for every move, so a game replays exactly (an int).
        game: a game of this module to resolve the spec for now (optional).

    Raises:
        ConfigError: A spec that is neither a string nor a callable, an empty spec, a bad seed or a game of
            another module.
        AgentSpecError: An unknown agent, a bad option or a missing run directory (from `blokus_agents`).
    """

    def __init__(self, spec: Any, seed: int = 0, *, game: BlokusGame | None = None):
        super().__init__()
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= seed < 2**63:
            raise ConfigError(f"ProjectBot seed must be a non-negative int, got {seed!r}")
        if game is not None and not isinstance(game, BlokusGame):
            raise ConfigError(f"ProjectBot game= takes a Blokus game of {__name__}, got {game!r}")
        check_agent_spec(spec, "ProjectBot")
        self.spec = spec
        self._key = jax.random.key(int(seed))
        self._policies: dict[str, Any] = {}
        if game is not None:
            self._policies[game._rules_key] = _policy(spec, game.core)

    def step(self, state: BlokusState) -> int:
        """The agent's action in `state` (raises `ConfigError` for a state of another game)."""
        position = getattr(state, "_position", None)
        if not isinstance(position, _Position):
            raise ConfigError(f"ProjectBot plays the Blokus games of {__name__}, not {state.get_game()}")
        if position.player < 0:
            raise IllegalActionError("ProjectBot.step on a finished game")
        if position.rules_key not in self._policies:
            self._policies[position.rules_key] = _policy(self.spec, position.rules.env)
        self._key, key = jax.random.split(self._key)
        action = int(self._policies[position.rules_key](key, position.core))
        if action not in position.legal:
            raise IllegalActionError(f"agent {self.spec!r} chose the illegal action {action}")
        return action

    def restart_at(self, state: BlokusState) -> None:
        """Nothing to reset: the agent reads the whole position at every move."""

    def inform_action(self, state: BlokusState, player_id: int, action: int) -> None:
        """Ignored (the agent reads the whole position at every move).

        Args:
            state: The state the action was played in.
            player_id: The player who played it.
            action: The action played.
        """

    def provides_policy(self) -> bool:
        return False


def _policy(spec: Any, env: Env) -> Any:
    """The jitted policy of `spec` for `env`."""
    from blokus_jax.adapters._boundary import resolve_policy

    return jax.jit(resolve_policy(spec, env))


@functools.cache
def register_games() -> tuple[str, ...]:
    """Register every game of `GAMES` with `pyspiel` (done on import; registering twice is a no-op).
    Returns the names."""
    # one subclass per name, registered as the creator: OpenSpiel keeps the creator until the process exits, and a
    # class (unlike a closure or partial) is still alive then, so its release at exit needs no interpreter
    for name in GAMES:
        if name not in pyspiel.registered_names():
            creator = type(f"BlokusGame_{GAMES[name]}", (BlokusGame,), {"game_name": name, "__module__": __name__})
            _CREATORS.append(creator)
            pyspiel.register_game(_game_type(name), creator)
    return tuple(GAMES)


_CREATORS: list[type] = []


register_games()
pyspiel.deserialize_game_and_state = deserialize_game_and_state

__all__ = [
    "BlokusGame",
    "BlokusState",
    "GAMES",
    "PARAMETERS",
    "RULES_CACHE_SIZE",
    "ProjectBot",
    "deserialize_game_and_state",
    "register_games",
    "variant_parameter",
]
