"""Hostile JSON records: every type or size problem is a RecordError naming the field, found before anything big is
allocated (a 274-byte record asking for 10**9 copies of a piece is refused at once). Fuzzed with hypothesis: any
JSON value in any field gives a GameRecord or a RecordError, nothing else."""

from __future__ import annotations

import json
import resource

import jax
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import blokus_jax
from blokus_jax.errors import RecordError
from blokus_jax.io import records
from blokus_jax.io.record_json import variant_to_dict
from blokus_jax.rollout import rollout

SIMPLE = variant_to_dict(blokus_jax.get_variant("simple"))


def _record(**fields) -> dict:
    return {"format": "blokus-jax/record", "version": 1, "variant": "simple", "actions": [], **fields}


def _variant(**fields) -> dict:
    return {**SIMPLE, **fields}


@pytest.fixture(scope="module")
def simple_game():
    env = blokus_jax.make("simple")
    _, actions = rollout(env, jax.random.key(0), batch=1)
    return records.from_rollout(env, actions, players=["a", "b"], metadata={"k": "v"})[0]


def test_a_tiny_record_asking_for_a_billion_pieces_is_refused_before_allocating():
    text = json.dumps(_record(variant=_variant(name="big", pieces=[["1", [[0, 0]], 10**9]])))
    assert len(text) < 400
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for copies in (10**9, 10**7, 128):
        with pytest.raises(RecordError, match=r"variant.pieces\[0\]\[2\] \(copies\) is \d+; it must be in"):
            records.from_json(text.replace(str(10**9), str(copies)))
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB


@pytest.mark.parametrize(
    "fields, reason",
    [
        ({"variant": _variant(board_shape=["7", "7"])}, r"variant.board_shape\[0\] must be an integer, got a string"),
        ({"variant": _variant(board_shape=[7, 10**40])}, r"board_shape\[1\] is a 41-digit"),
        ({"variant": _variant(board_shape=[7.0, 7])}, r"board_shape\[0\] must be an integer, got a number"),
        ({"variant": _variant(board_shape={"rows": 7})}, "variant.board_shape must be a list, got an object"),
        ({"variant": _variant(num_colors=None)}, "variant.num_colors must be an integer, got null"),
        ({"variant": _variant(num_colors=10**6)}, "variant.num_colors is 1000000"),
        ({"variant": _variant(players_to_colors=[[0], "1"])}, r"players_to_colors\[1\] must be a list"),
        ({"variant": _variant(start_cells=[[[0, 0]], [[6, 99]]])}, r"start_cells\[1\]\[0\]\[1\] is 99"),
        ({"variant": _variant(start_cells=[[[0, 0]], [[6, True]]])}, r"start_cells\[1\]\[0\]\[1\] must be an integer"),
        ({"variant": _variant(pieces=[["1", [[0, 0]], 1]] * 65)}, "variant.pieces has 65 entries"),
        ({"variant": _variant(pieces=[["X", [[0, c] for c in range(13)], 1]])}, r"pieces\[0\]\[1\] \(cells\) has 13"),
        ({"variant": _variant(pieces=[[f"p{k}", [[0, 0], [0, 1]], 100] for k in range(3)])}, "300 pieces"),
        ({"variant": _variant(pieces=[{"name": "1"}])}, r"variant.pieces\[0\] must be a list, got an object"),
        ({"variant": _variant(pieces=[[1, [[0, 0]], 1]])}, r"pieces\[0\]\[0\] \(name\) must be a string"),
        ({"variant": _variant(bonus="yes")}, "variant.bonus must be true or false"),
        ({"variant": _variant(shared_color="0")}, "variant.shared_color must be an integer"),
        ({"variant": _variant(name=None)}, "variant.name must be a string"),
        ({"variant": _variant(name="x" * 10_000)}, "variant.name is 10000 characters"),
        ({"variant": _variant(colour="red")}, r"unknown fields \['colour'\]"),
        ({"variant": {"name": "x"}}, "missing fields"),
        ({"variant": [7, 7]}, "'variant' must be a variant name or an object, got a list"),
        ({"variant": None}, "'variant' must be a variant name or an object, got null"),
        ({"variant": "nope"}, "bad variant"),
        ({"variant": _variant(start_cells=[[[0, 0]]])}, "bad variant in record"),
        ({"actions": "1,2"}, "'actions' must be a list, got a string"),
        ({"actions": None}, "'actions' must be a list, got null"),
        ({"actions": {"0": 1}}, "'actions' must be a list, got an object"),
        ({"actions": ["12"]}, "action 1: a string '12' is not an integer action id"),
        ({"actions": [1.5]}, "action 1: a number '1.5' is not an integer"),
        ({"actions": [True]}, "action 1: a boolean 'True' is not an integer"),
        ({"actions": [None]}, "action 1: null 'None' is not an integer"),
        ({"actions": [[1]]}, "action 1: a list"),
        ({"actions": [10**40]}, "action 1: id a 41-digit number is out of range"),
        ({"actions": [-5]}, "action 1: id -5 is out of range"),
        ({"actions": [0] * 100_000}, "'actions' has 100000 entries"),
        ({"players": "ab"}, "'players' must be a list, got a string"),
        ({"players": ["a"]}, "'players' has 1 entries; it must have 2 to 2"),
        ({"players": ["a", None]}, r"'players'\[1\] must be a string, got null"),
        ({"players": ["a", {"n": 1}]}, r"'players'\[1\] must be a string, got an object"),
        ({"metadata": [["a", "b"]]}, "'metadata' must be an object of strings, got a list"),
        ({"metadata": "x"}, "'metadata' must be an object of strings, got a string"),
        ({"metadata": {"a": None}}, r"'metadata'\['a'\] must be a string, got null"),
        ({"metadata": {"a": {"b": 1}}}, r"'metadata'\['a'\] must be a string, got an object"),
        ({"version": "1"}, "not a blokus-jax record"),
        ({"version": True}, "not a blokus-jax record"),
        ({"version": 1.0}, "not a blokus-jax record"),
        ({"format": ["blokus-jax/record"]}, "not a blokus-jax record"),
    ],
)
def test_ill_typed_fields_raise_record_error_naming_the_field(fields, reason):
    with pytest.raises(RecordError, match=reason):
        records.from_json(json.dumps(_record(**fields)))


@pytest.mark.parametrize(
    "text, reason",
    [
        ("[1, 2]", "must be a JSON object, got a list"),
        ("null", "must be a JSON object, got null"),
        ('"record"', "must be a JSON object, got a string"),
        (
            '{"format": "blokus-jax/record", "version": 1, "variant": "simple", "actions": [' + "9" * 5000 + "]}",
            "not valid JSON",
        ),
        ("[" * 200_000, "not valid JSON"),
        ('{"a":' * 200_000, "not valid JSON"),
        ('{"format": "blokus-jax/record", "version": 1e999}', "not a blokus-jax record"),
        ("{" + " " * (records.MAX_RECORD_BYTES + 1) + "}", "characters long"),
    ],
)
def test_hostile_json_text_raises_record_error(text, reason):
    with pytest.raises(RecordError, match=reason):
        records.from_json(text)


def test_files_with_a_bom_load_and_oversized_ones_are_refused(tmp_path, simple_game):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + simple_game.to_json().encode())
    assert records.load(path) == simple_game
    big = tmp_path / "big.json"
    big.write_bytes(b"{" + b" " * (records.MAX_RECORD_BYTES + 10) + b"}")
    with pytest.raises(RecordError, match="larger than"):
        records.load(big)
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"{\xff\xfe}")
    with pytest.raises(RecordError, match="not UTF-8"):
        records.load(bad)
    with pytest.raises(RecordError, match="cannot read"):
        records.load(tmp_path)


def test_python_inputs_are_checked_too(simple_game):
    env = blokus_jax.make("simple")
    with pytest.raises(RecordError, match="1-d array of integer ids"):
        records.GameRecord.from_actions(env, np.asarray([1.5]))
    with pytest.raises(RecordError, match="must be a list of integer action ids"):
        records.GameRecord.from_actions(env, "12")
    with pytest.raises(RecordError, match="lasts more than"):
        records.GameRecord.from_actions(env, np.zeros(10**6, np.int64))
    with pytest.raises(RecordError, match="must be given as text, got null"):
        records.from_json(None)
    with pytest.raises(RecordError, match="must be given as text"):
        records.from_json([1])
    assert records.from_json(simple_game.to_dict()) == simple_game


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=8,
)
_TOP_FIELDS = ["format", "version", "variant", "players", "metadata", "actions", "moves", "scores", "terminated"]
_VARIANT_FIELDS = [
    "name",
    "board_shape",
    "num_colors",
    "players_to_colors",
    "start_cells",
    "pieces",
    "bonus",
    "shared_color",
    "extra",
]


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    where=st.sampled_from(_TOP_FIELDS + [f"variant.{f}" for f in _VARIANT_FIELDS] + ["actions[]", "root"]), value=_JSON
)
def test_fuzzed_fields_give_a_record_or_a_record_error(simple_game, where, value):
    data = simple_game.to_dict()
    data["variant"] = _variant()
    if where == "root":
        data = value
    elif where == "actions[]":
        data["actions"] = data["actions"][:3] + [value] + data["actions"][3:]
    elif where.startswith("variant."):
        field = where.split(".")[1]
        if field in ("bonus", "shared_color", "name") and (value is None or isinstance(value, (bool, str))):
            value = [value]  # a valid value would only build (and compile) another variant
        data["variant"][field] = value
    else:
        data[where] = value
    for candidate in (data, json.dumps(data)):
        try:
            record = records.from_json(candidate)
        except RecordError:
            continue
        assert isinstance(record, records.GameRecord)
