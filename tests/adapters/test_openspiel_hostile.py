"""The OpenSpiel adapter against hostile input: states and move lists of another game, players outside the game,
many spellings of one custom variant, bad bot specs, and serialised strings carrying a pickle payload (which must
never run)."""

from __future__ import annotations

import base64
import json
import pickle

import pyspiel
import pytest

import blokus_jax as bj
from blokus_jax.adapters import openspiel as bos

TINY = bj.get_variant("simple", name="tiny", board_shape=(6, 6), start_cells=(((0, 0),), ((5, 5),)))


@pytest.fixture(scope="module")
def simple():
    return pyspiel.load_game("blokus_simple")


@pytest.fixture(scope="module")
def two_moves(simple):
    state = simple.new_initial_state()
    state.apply_action(state.legal_actions()[0])
    state.apply_action(state.legal_actions()[3])
    return state


def _with_dict(text: str, payload: bytes) -> str:
    """``text`` with its pickled ``__dict__`` line replaced by ``payload`` (base64)."""
    head, _, _ = text.rpartition("__dict__=")
    return head + "__dict__=" + base64.b64encode(payload).decode() + "\n"


class _Touch:
    """Unpickling this creates ``path`` (what a crafted string could do with any code)."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_the_loader_in_place_of_pyspiel_rebuilds_from_the_move_list(simple, two_moves):
    assert pyspiel.deserialize_game_and_state is bos.deserialize_game_and_state
    text = pyspiel.serialize_game_and_state(simple, two_moves)
    game, state = pyspiel.deserialize_game_and_state(text)
    assert isinstance(game, bos.BlokusGame) and state.history() == two_moves.history()
    assert str(state) == str(two_moves) and state.legal_actions() == two_moves.legal_actions()
    other = pyspiel.load_game("tic_tac_toe")  # other games still go to OpenSpiel's own loader
    ttt = other.new_initial_state()
    ttt.apply_action(4)
    assert pyspiel.deserialize_game_and_state(pyspiel.serialize_game_and_state(other, ttt))[1].history() == [4]


def test_a_pickle_payload_in_a_serialised_state_never_runs(simple, two_moves, tmp_path):
    marker = tmp_path / "pwned"
    text = _with_dict(pyspiel.serialize_game_and_state(simple, two_moves), pickle.dumps({"_position": _Touch(marker)}))
    with pytest.raises(bj.RecordError, match="not the '__dict__=' line"):  # refused, never decoded
        pyspiel.deserialize_game_and_state(text)
    state_part = text.partition("[State]\n")[2]
    with pytest.raises(bj.RecordError, match="not the '__dict__=' line"):
        simple.deserialize_state(state_part)
    assert not marker.exists()
    # the payload is live: OpenSpiel's own loader runs it (then refuses what it made)
    with pytest.raises(bj.RecordError, match="not TextIOWrapper"):
        bos._OPENSPIEL_DESERIALIZE(text)
    assert marker.exists()


def test_a_state_of_another_game_is_refused(simple, two_moves):
    text = pyspiel.serialize_game_and_state(simple, two_moves)
    for other in ("blokus_duo()", "blokus_classic()"):
        with pytest.raises(bj.RecordError, match="not legal"):
            pyspiel.deserialize_game_and_state(text.replace("blokus_simple(variant=)", other))
    # even through OpenSpiel's C++ loader (pickle), a simple position is not taken as a duo state
    with pytest.raises(bj.RecordError, match="cannot be a state of blokus_duo"):
        bos._OPENSPIEL_DESERIALIZE(text.replace("blokus_simple(variant=)", "blokus_duo()"))


def test_a_move_list_keyed_for_another_variant_is_refused(simple):
    duo_moves = pickle.dumps({"_position": bos._replayed("duo", ())})
    text = _with_dict(pyspiel.serialize_game_and_state(simple, simple.new_initial_state()), duo_moves)
    with pytest.raises(bj.RecordError, match="variant 'duo'"):
        bos._OPENSPIEL_DESERIALIZE(text)
    state = simple.new_initial_state()
    with pytest.raises(bj.RecordError):
        state._position = bos._replayed("duo", ())
    with pytest.raises(bj.RecordError):
        state._position = "not a position"
    assert state.history() == [] and state._position.rules_key == "simple"  # unchanged


@pytest.mark.parametrize(
    "history",
    [
        "history=1:0",  # the wrong player
        "history=0:999999",  # not a legal action
        "history=0:0,0:1",  # the same player twice
        "history=0:x",
        "history=0:\u0661",  # a non-ASCII digit
        "history=0:" + "9" * 5000,
    ],
)
def test_corrupt_move_lists_are_refused(simple, history):
    moves = history.count(",") + 1
    with pytest.raises(bj.RecordError, match="serialised blokus_simple"):
        simple.deserialize_state(f"{history}\nmove_number={moves}\n__dict__=\n")


@pytest.mark.parametrize("text", ["", "history=\n", "history=\nmove_number=3\n", 5, "move_number=0\nhistory=\n"])
def test_malformed_state_texts_are_refused(simple, text):
    with pytest.raises(bj.RecordError):
        simple.deserialize_state(text)


def test_a_cut_serialised_string_is_refused(simple):
    text = pyspiel.serialize_game_and_state(simple, simple.new_initial_state())
    with pytest.raises(bj.RecordError, match="cut"):
        pyspiel.deserialize_game_and_state(text.partition("[State]")[0])


@pytest.mark.parametrize("player", [5, 2, -1, True, 1.0])
def test_legal_actions_of_a_player_outside_the_game_raise(two_moves, player):
    with pytest.raises(bj.ConfigError, match="player"):
        two_moves.legal_actions(player)
    with pytest.raises(bj.ConfigError):
        two_moves.legal_actions_mask(player)


def test_legal_actions_of_players_in_the_game_follow_openspiel(two_moves):
    mover = two_moves.current_player()
    assert two_moves.legal_actions(mover) == two_moves.legal_actions() != []
    assert two_moves.legal_actions(1 - mover) == []
    assert sum(two_moves.legal_actions_mask(mover)) == len(two_moves.legal_actions())


def _spellings(variant: bj.Variant) -> list[str]:
    """Six texts of one variant parameter: canonical, over-padded, standard alphabet, indented, keys reversed and
    sorted."""
    from blokus_jax.io.record_json import variant_to_dict

    value = variant_to_dict(variant)

    def b64(text: str, alphabet=base64.urlsafe_b64encode) -> str:
        return alphabet(text.encode()).decode()

    return [
        bos.variant_parameter(variant),
        b64(json.dumps(value, separators=(",", ": "))) + "=" * 4,
        b64(json.dumps(value), base64.b64encode),
        b64(json.dumps(value, indent=2)),
        b64(json.dumps(dict(reversed(list(value.items()))))).rstrip("="),
        b64(json.dumps(value, sort_keys=True)),
    ]


def test_six_spellings_of_one_custom_variant_build_one_rule_set():
    spellings = _spellings(TINY)
    assert len(set(spellings)) == 6
    games = [pyspiel.load_game("blokus_simple", {"variant": text}) for text in spellings]
    assert len({id(game._rules) for game in games}) == 1 and all(game.variant == TINY for game in games)
    # a state written under one spelling loads under another
    text = pyspiel.serialize_game_and_state(games[0], games[0].new_initial_state())
    assert pyspiel.deserialize_game_and_state(text)[0]._rules is games[3]._rules


def test_a_registered_variant_spelled_as_a_parameter_shares_its_rule_set():
    game = pyspiel.load_game("blokus_simple", {"variant": bos.variant_parameter(bj.get_variant("simple"))})
    assert game._rules is pyspiel.load_game("blokus_simple")._rules and game._rules_key == "simple"


def test_the_rules_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(bos, "RULES_CACHE_SIZE", 2)
    for size in (5, 6, 8):
        corner = size - 1
        variant = bj.get_variant(
            "simple", name=f"tiny{size}", board_shape=(size, size), start_cells=(((0, 0),), ((corner, corner),))
        )
        game = pyspiel.load_game("blokus_simple", {"variant": bos.variant_parameter(variant)})
        assert len(bos._RULES) <= 2
    state = game.new_initial_state()  # a game keeps its rules alive
    state.apply_action(state.legal_actions()[0])
    assert state.history() != []


@pytest.mark.parametrize(
    "spec, error",
    [
        ("nosuch", "AgentSpecError"),
        (5, "ConfigError"),
        ("", "ConfigError"),
        ("   ", "ConfigError"),
        ("mcts:sims=0", "AgentSpecError"),
        ("mcts:sims=abc", "AgentSpecError"),
        ("mcts:nosuch=1", "AgentSpecError"),
        ("./no/such/run", "AgentSpecError"),
        ("az:no/such/run", "AgentSpecError"),
        (["greedy"], "ConfigError"),
    ],
)
def test_bad_bot_specs_are_refused_when_the_bot_is_made(spec, error):
    with pytest.raises(bj.BlokusError) as caught:
        bos.ProjectBot(spec)
    assert type(caught.value).__name__ == error


@pytest.mark.parametrize("seed", [-1, 1.5, True, "0"])
def test_bad_bot_seeds_are_refused(seed):
    with pytest.raises(bj.ConfigError, match="seed"):
        bos.ProjectBot("greedy", seed)


def test_good_bot_specs_are_accepted_and_game_checks_now(simple):
    for spec in ("greedy", "random", "mcts:sims=8,k=4", None, lambda key, state: state.legal_action_mask.argmax()):
        bos.ProjectBot(spec)
    bot = bos.ProjectBot("greedy", game=simple)
    assert bot.step(simple.new_initial_state()) in simple.new_initial_state().legal_actions()
    with pytest.raises(bj.ConfigError, match="game="):
        bos.ProjectBot("greedy", game=pyspiel.load_game("tic_tac_toe"))


@pytest.mark.parametrize(
    "tail",
    [
        "__dict__=" + "A" * 40 + "\n",  # a corrupt __dict__ line
        "__dict__=" + "A" * 10_000_000 + "\n",  # 10 MB of junk
        None,  # the right line, then a line nobody understands
    ],
)
def test_lines_the_loader_does_not_understand_are_refused(simple, two_moves, tail):
    text = pyspiel.serialize_game_and_state(simple, two_moves)
    if tail is None:
        text = text + "junk=1\n"
    else:
        text = text.rpartition("__dict__=")[0] + tail
    with pytest.raises(bj.RecordError, match="not the '__dict__=' line|more than a"):
        pyspiel.deserialize_game_and_state(text)
    # the state exactly as OpenSpiel wrote it (with or without its final newline) still loads
    good = pyspiel.serialize_game_and_state(simple, two_moves)
    for variant in (good, good.rstrip("\n")):
        assert pyspiel.deserialize_game_and_state(variant)[1].history() == two_moves.history()
    assert simple.deserialize_state(simple.new_initial_state().serialize()).history() == []
