"""Pentobi's .blksgf dialect (blokus_jax.io.sgf): the iterative main-line parser, and hostile files that must end in a
RecordError naming the problem (deep nesting, huge files, huge numbers, oversized moves, ill-shaped XBJ), never in
RecursionError, ValueError, TypeError, OverflowError or gigabytes of memory. Fuzzed with hypothesis within the size
limits: any text gives a GameRecord or a RecordError."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blokus_jax.errors import RecordError
from blokus_jax.io import records, sgf

DUO_GAME = Path(__file__).parents[1] / "data" / "sgf" / "duo" / "duo_dev_00_seed20243000.blksgf"
DUO = DUO_GAME.read_text()


def _with_root(extra: str) -> str:
    return DUO.replace("GM[Blokus Duo]", "GM[Blokus Duo]" + extra)


def test_main_line_follows_first_variations_and_skips_others():
    nodes = sgf.parse_main_line("(;GM[x](;B[a1](;W[b2])(;W[c3]))(;B[d4]))")
    assert nodes == [[("GM", ["x"])], [("B", ["a1"])], [("W", ["b2"])]]
    assert sgf.parse_main_line(r"(;C[a\]b\\c])") == [[("C", ["a]b\\c"])]]


def test_deep_nesting_is_parsed_without_recursion():
    depth = 100_000
    nodes = sgf.parse_main_line("(;GM[Blokus Duo]" + "(" * depth + ";B[e10]" + ")" * depth + ")")
    assert nodes[-1] == [("B", ["e10"])]
    with pytest.raises(RecordError, match="truncated"):
        sgf.parse_main_line("(;GM[Blokus Duo]" + "(" * 1000)
    record = records.from_blksgf("(;GM[Blokus Duo]" + "(" * 1000 + ";B[e10]" + ")" * 1000 + ")")
    assert len(record.moves) == 1


def test_a_byte_order_mark_is_accepted(tmp_path):
    expected = records.from_blksgf(DUO)
    assert records.from_blksgf("\ufeff" + DUO) == expected
    path = tmp_path / "bom.blksgf"
    path.write_bytes(b"\xef\xbb\xbf" + DUO.encode())
    assert records.load(path) == expected


def test_oversized_files_are_refused_before_reading(tmp_path):
    big = tmp_path / "big.blksgf"
    with big.open("w") as f:  # a 50 MB comment: refused from its size, not parsed
        f.write("(;GM[Blokus Duo]C[")
        f.write("x" * (50 << 20))
        f.write("])")
    with pytest.raises(RecordError, match="larger than"):
        records.load(big)
    with pytest.raises(RecordError, match="characters long"):
        records.from_blksgf("(;GM[Blokus Duo]C[" + "x" * (records.MAX_RECORD_BYTES + 1) + "])")


@pytest.mark.parametrize(
    "text, reason",
    [
        ("(;GM[Blokus Duo];B[a" + "9" * 5000 + "])", "move 1: bad coordinate"),
        ("(;GM[Blokus Duo];B[" + "z" * 5000 + "1])", "move 1: bad coordinate"),
        ("(;GM[Blokus Duo];B[" + "e10," * 50_000 + "e10])", "move 1: .*more than 5 points"),
        ("(;GM[Blokus Duo]" + ";B[e10]" * 5000 + ")", "5000 moves but no game of 'duo' has more than 44"),
        ("(;GM[Blokus Duo]" + ";C[x]" * (sgf.MAX_NODES + 1) + ")", "more than 10000 nodes"),
        (_with_root(r"XBJ[[1,2\]]"), "XBJ must hold a JSON object"),
        (_with_root("XBJ[5]"), "XBJ must hold a JSON object"),
        (_with_root('XBJ["text"]'), "XBJ must hold a JSON object"),
        (_with_root(r'XBJ[{"a": [1\]}]'), "XBJ: metadata values must be strings"),
        (_with_root('XBJ[{"a": null}]'), "XBJ: metadata values must be strings"),
        (_with_root('XBJ[{"a": ' + "9" * 5000 + "}]"), "XBJ must hold a JSON object"),
        (_with_root("XBJ[" + "[" * 100_000 + "]"), "XBJ must hold a JSON object"),
        (_with_root("XBJ[{}][{}]"), "XBJ must have exactly one value"),
        (_with_root("XBJ[{]"), "XBJ must hold a JSON object"),
        (_with_root("PB[a][b]"), "PB must have exactly one value"),
        ("(;GM[Blokus Duo][Blokus]C[x])", "GM must have exactly one value"),
        ("(;GM[" + "x" * 10_000 + "])", "unsupported game"),
        (_with_root("\u0661[a1]"), "malformed SGF"),
        ("(;GM[Blokus Duo];B[e10];B)", "property B has no value"),
        ("(;GM[Blokus Duo](;B[e10]);W[j5])", "unexpected ';'"),
    ],
)
def test_hostile_blksgf_raises_record_error_naming_the_problem(text, reason):
    with pytest.raises(RecordError, match=reason):
        records.from_blksgf(text)


def test_extra_metadata_keeps_scalars_as_text():
    record = records.from_blksgf(_with_root('XBJ[{"seed": 3, "note": "hi"}]'))
    assert record.metadata["seed"] == "3" and record.metadata["note"] == "hi"


_TOKENS = st.sampled_from(
    [
        "(",
        ")",
        ";",
        "[",
        "]",
        "\\",
        "GM",
        "[Blokus Duo]",
        "[Blokus]",
        "B",
        "W",
        "1",
        "PB",
        "XBJ",
        "[{}]",
        '[{"a":"b"}]',
        "[e10]",
        "[j5]",
        "[a1,b1]",
        "[e10,f10]",
        "AB",
        "RE",
        "[B+5]",
        " ",
        "\n",
        "\ufeff",
        "9" * 50,
        "é",
        "\x00",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_TOKENS, max_size=60))
def test_fuzzed_token_soup_gives_a_record_or_a_record_error(tokens):
    try:
        record = records.from_blksgf("".join(tokens))
    except RecordError:
        return
    assert isinstance(record, records.GameRecord)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(at=st.integers(0, len(DUO)), cut=st.integers(0, 20), insert=st.lists(_TOKENS, max_size=4))
def test_fuzzed_edits_of_a_real_game_give_a_record_or_a_record_error(at, cut, insert):
    text = DUO[:at] + "".join(insert) + DUO[at + cut :]
    try:
        record = records.from_blksgf(text)
    except RecordError:
        return
    assert record.variant.name == "duo"


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gives_a_record_or_a_record_error(text):
    for candidate in (text, "(;GM[Blokus Duo]" + text + ")", "(;GM[Blokus Duo]XBJ[" + text + "])"):
        try:
            records.from_blksgf(candidate)
        except RecordError:
            pass


def test_writer_escapes_values_and_round_trips_metadata():
    record = records.from_blksgf(DUO)
    tricky = {"comment": "a]b\\c", "event": "x", "custom]key": json.dumps({"nested": "]"})}
    again = records.GameRecord.from_actions(record.variant, record.actions, players=["A]", "B\\"], metadata=tricky)
    back = records.from_blksgf(again.to_blksgf())
    assert back == again and back.players == ("A]", "B\\")
