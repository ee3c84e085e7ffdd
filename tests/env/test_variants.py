"""Registered variants against the Pentobi headers, the action codec, Variant validation and a custom variant."""

from __future__ import annotations

import jax
import numpy as np
import pytest
import reference
from helpers import ORACLE_VARIANTS

import blokus_jax as bj
from blokus_jax import IllegalActionError, Piece, Variant, VariantError
from blokus_jax.variants import MAX_BOARD_WIDTH

EMPTY_BOARD_PLACEMENTS = {"classic": 30433, "classic_2p": 30433, "classic_3p": 30433, "duo": 13729, "junior": 7217}
FIRST_MOVES = {"classic": 58, "classic_2p": 58, "classic_3p": 58, "duo": 414, "junior": 189}


def _custom_variant() -> Variant:
    pieces = (
        Piece("hook", ((0, 0), (1, 0), (1, 1), (1, 2))),
        Piece("bar", ((0, 0), (0, 1), (0, 2)), copies=2),
        Piece("dot", ((0, 0),)),
    )
    return Variant("custom9", (9, 9), 2, ((0,), (1,)), (((0, 0),), ((8, 8), (8, 0))), pieces)


def test_registered_names():
    assert set(bj.variant_names()) == {"classic", "classic_2p", "classic_3p", "duo", "junior", "simple"}


@pytest.mark.parametrize("name", sorted(EMPTY_BOARD_PLACEMENTS))
def test_empty_board_placements_and_first_moves(name):
    env = bj.make(name)
    assert env.tables.num_placements == EMPTY_BOARD_PLACEMENTS[name]
    mask = np.asarray(env.init().legal_action_mask)
    assert mask.shape == (env.num_actions,)
    assert int(mask.sum()) == FIRST_MOVES[name]
    assert not mask[env.pass_action]


def test_simple_variant_tables_match_reference():
    env = bj.make("simple")
    rows, cols = env.board_shape
    shapes = [p.cells for p in env.variant.pieces]
    fits = sum(
        (rows - max(r for r, _ in o)) * (cols - max(c for _, c in o))
        for s in shapes
        for o in reference.shape_orientations(s)
    )
    assert env.tables.num_placements == fits
    assert env.num_orientations == sum(len(reference.shape_orientations(s)) for s in shapes)
    state = env.init()
    expected = reference.legal_placements(
        np.asarray(state.board), 0, [1] * len(shapes), True, env.variant.start_cells[0], shapes
    )
    assert (
        set(
            map(
                frozenset,
                (
                    map(tuple, env.action_cells(int(a)).tolist())
                    for a in np.flatnonzero(np.asarray(state.legal_action_mask)[:-1])
                ),
            )
        )
        == expected
    )


@pytest.mark.parametrize("oracle_id", sorted(ORACLE_VARIANTS))
def test_variant_matches_oracle_header(oracle, oracle_id):
    header = oracle(f"{oracle_id}_dev.json.gz")["header"]
    variant = bj.get_variant(ORACLE_VARIANTS[oracle_id])
    env = bj.make(variant)
    assert list(variant.board_shape) == header["board_size"]
    assert variant.num_colors == header["num_colors"] == env.num_colors
    assert variant.num_players == header["num_players"] == env.num_players
    assert [list(cs) for cs in variant.players_to_colors] == header["players_to_colors"]
    assert [[list(c) for c in cs] for cs in variant.start_cells] == header["start_squares"]
    assert variant.squares_per_color == header["total_squares_per_color"]
    assert env.tables.num_placements == header["empty_board_placements"]
    shared = header.get("shared_color")
    assert variant.shared_color == (None if shared is None else shared["color"])
    assert {p.name: p.copies for p in variant.pieces} == {e["name"]: e["instances"] for e in header["pieces"]}
    assert variant.bonus == (oracle_id != "junior")


@pytest.mark.parametrize("name", ["simple", "duo"])
def test_action_codec_round_trips(name):
    env = bj.make(name)
    rows, cols = env.board_shape
    rng = np.random.default_rng(0)
    actions = np.arange(env.num_actions - 1) if name == "simple" else rng.choice(env.num_actions - 1, 3000)
    checked = 0
    for action in map(int, actions):
        piece, orientation, row, col = env.decode_action(action)
        assert env.encode_action(piece, orientation, row, col) == action
        o = action // (rows * cols)
        assert (row, col) == divmod(action % (rows * cols), cols)
        assert env.tables.orientation_piece[o] == piece
        shape = env.variant.pieces[piece].orientations[orientation]
        offsets = np.asarray(shape)
        if (offsets[:, 0] + row).max() >= rows or (offsets[:, 1] + col).max() >= cols:
            with pytest.raises(IllegalActionError, match="off the board"):
                env.action_cells(action)
            continue
        cells = env.action_cells(action)
        assert cells.dtype == np.int32 and cells.shape == (len(shape), 2)
        np.testing.assert_array_equal(cells, offsets + [row, col])
        assert env.action_from_cells(cells[::-1].tolist()) == action
        checked += 1
    assert checked > 0
    assert env.action_cells(env.pass_action).shape == (0, 2)
    assert env.action_shape == (env.num_orientations, rows, cols)
    assert env.num_actions == env.num_orientations * rows * cols + 1 == env.pass_action + 1


def test_action_codec_errors():
    env = bj.make("simple")
    with pytest.raises(IllegalActionError, match="is the pass"):
        env.decode_action(env.pass_action)
    for bad in (-1, env.num_actions):
        with pytest.raises(IllegalActionError, match=f"action {bad} out of range"):
            env.decode_action(bad)
        with pytest.raises(IllegalActionError, match="out of range"):
            env.action_cells(bad)
    with pytest.raises(IllegalActionError, match="integer index"):
        env.action_cells("five")
    with pytest.raises(IllegalActionError, match="piece index 9 out of range"):
        env.encode_action(9, 0, 0, 0)
    with pytest.raises(IllegalActionError, match="has 1 orientations; got orientation 1"):
        env.encode_action(0, 1, 0, 0)
    with pytest.raises(IllegalActionError, match=r"anchor \(7, 0\) is off"):
        env.encode_action(0, 0, 7, 0)
    with pytest.raises(IllegalActionError, match="no cells given"):
        env.action_from_cells([])
    with pytest.raises(IllegalActionError, match="not all on the 7x7 board"):
        env.action_from_cells([(6, 6), (6, 7)])
    with pytest.raises(IllegalActionError, match="do not form a piece"):
        env.action_from_cells([(0, 0), (1, 1)])
    with pytest.raises(IllegalActionError, match="do not form a piece"):  # a pentomino is not in "simple"
        env.action_from_cells([(0, c) for c in range(5)])
    with pytest.raises(IllegalActionError, match="must be"):
        env.action_from_cells([(0, 0, 0)])


def test_unknown_variant_name_lists_valid_names():
    with pytest.raises(VariantError, match="unknown variant 'clasic'") as info:
        bj.make("clasic")
    for name in bj.variant_names():
        assert repr(name) in str(info.value)


def test_unknown_override_field_lists_fields():
    with pytest.raises(VariantError, match=r"unknown variant fields \['board_size'\].*board_shape"):
        bj.make("duo", board_size=(10, 10))


def test_overrides_build_a_modified_variant():
    env = bj.make("duo", board_shape=(10, 10), start_cells=(((3, 3),), ((6, 6),)))
    assert env.board_shape == (10, 10)
    assert int(np.asarray(env.init().legal_action_mask).sum()) > 0


_PIECES = (Piece("1", ((0, 0),)), Piece("2", ((0, 0), (0, 1))))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(board_shape=(5, 5), start_cells=(((0, 0),), ((5, 0),))), r"start cell \(5, 0\) of colour 1 is off"),
        (dict(board_shape=(5, 5), start_cells=(((0, 0),), ((0, -1),))), "is off the 5x5 board"),
        (dict(board_shape=(1, 1)), "too small for pieces \\['2'\\]"),
        (dict(board_shape=(5, MAX_BOARD_WIDTH + 1)), "31 columns wide; at most 30"),
        (dict(board_shape=(0, 5)), "must be two positive ints"),
        (dict(players_to_colors=((0,), (0,))), "must give each colour in \\[0, 1\\] to exactly one player"),
        (dict(players_to_colors=((0, 1), ())), "every player needs at least one colour"),
        (dict(start_cells=(((0, 0),),)), "start_cells has 1 entries but there are 2 colours"),
        (dict(start_cells=(((0, 0),), ())), "colour 1 has no start cell"),
        (dict(pieces=()), "has no pieces"),
        (dict(pieces=(_PIECES[1], Piece("d", ((0, 0), (1, 0))))), "'2' and 'd' are the same shape"),
        (dict(pieces=(_PIECES[0], Piece("1", ((0, 0), (0, 1))))), "piece names .* repeat"),
        (dict(shared_color=5), "shared_color 5 is not a colour in \\[0, 2\\)"),
        (dict(shared_color=1), "the shared colour 1 to none"),
        (dict(board_shape="big"), "board_shape must be"),
    ],
)
def test_invalid_variants_raise(kwargs, message):
    base = dict(
        name="bad",
        board_shape=(4, 4),
        num_colors=2,
        players_to_colors=((0,), (1,)),
        start_cells=(((0, 0),), ((3, 3),)),
        pieces=_PIECES,
    )
    base.update(kwargs)
    with pytest.raises(VariantError, match=message):
        Variant(**base)


def test_env_argument_errors():
    with pytest.raises(VariantError, match="unknown reward mode 'points'"):
        bj.make("simple", reward="points")
    with pytest.raises(VariantError, match="max_steps must be a positive int"):
        bj.make("simple", max_steps=0)


def test_custom_variant_random_game_to_the_end():
    variant = _custom_variant()
    env = bj.make(variant)
    assert env.num_pieces == 3 and env.num_orientations == 8 + 2 + 1
    assert variant.squares_per_color == 4 + 3 * 2 + 1
    step, sample = jax.jit(env.step), jax.jit(env.sample_action)
    state, key = env.init(), jax.random.key(7)
    placements = 0
    for _ in range(4 * env.num_pieces * 2 + 2):
        if bool(state.terminated):
            break
        key, sub = jax.random.split(key)
        action = int(sample(sub, state))
        assert bool(np.asarray(state.legal_action_mask)[action])
        placements += action != env.pass_action
        state = step(state, action)
    assert bool(state.terminated) and not bool(state.truncated)
    remaining = np.asarray(state.remaining)
    assert placements == int((np.asarray(env.tables.piece_copies) - remaining).sum()) > 0
    assert int(np.count_nonzero(np.asarray(state.board))) == int(
        ((np.asarray(env.tables.piece_copies) - remaining) * env.tables.piece_sizes).sum()
    )
    assert not np.asarray(state.legal_action_mask).any()


# ------------------------------------------------------------------------------------------ field types and ranges
@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(board_shape=(4.0, 4)), r"board_shape must be \(rows, cols\), all ints.*4.0 is a float"),
        (dict(board_shape=(True, 4)), "board_shape .*True is a bool"),
        (dict(board_shape=("4", 4)), "board_shape .*'4' is a str"),
        (dict(board_shape=(4, 4, 1)), "board_shape must be"),
        (dict(board_shape=(200_000, 30)), r"placement ids .* at most 16777215"),
        (dict(num_colors=2.0), "num_colors must be an int, got 2.0"),
        (dict(num_colors="2"), "num_colors must be an int"),
        (dict(num_colors=True), "num_colors must be an int"),
        (
            dict(num_colors=128, start_cells=(((0, 0),),) * 128, players_to_colors=(tuple(range(128)),)),
            r"num_colors is 128; it must be in \[1, 127\]",
        ),
        (
            dict(num_colors=300, start_cells=(((0, 0),),) * 300, players_to_colors=(tuple(range(300)),)),
            r"num_colors is 300; it must be in \[1, 127\]",
        ),
        (dict(players_to_colors=((0,), (1.0,))), "players_to_colors must be .*1.0 is a float"),
        (dict(players_to_colors=((0,), ("1",))), "players_to_colors must be .*'1' is a str"),
        (dict(players_to_colors=(0, 1)), "players_to_colors must be .*0 is not a list"),
        (dict(start_cells=(((0, 0),), ((3.0, 3),))), "start_cells must be .*3.0 is a float"),
        (dict(start_cells=(((0, 0),), ((3, 3, 3),))), r"start_cells must be .*\(row, col\) pairs"),
        (dict(shared_color=1.0), "shared_color must be an int, got 1.0"),
        (dict(shared_color=True), "shared_color must be an int, got True"),
        (dict(bonus=1), "bonus must be True or False, got 1"),
        (dict(bonus="yes"), "bonus must be True or False"),
        (dict(name=7), "variant name 7 is a int"),
        (dict(pieces=(5,)), "pieces must be a list of Piece"),
        (dict(pieces=(Piece("1", ((0, 0),), copies=127),)), None),
    ],
)
def test_variant_fields_have_types_and_ranges(kwargs, message):
    base = dict(
        name="bad",
        board_shape=(4, 4),
        num_colors=2,
        players_to_colors=((0,), (1,)),
        start_cells=(((0, 0),), ((3, 3),)),
        pieces=_PIECES,
    )
    base.update(kwargs)
    if message is None:
        Variant(**base)
        return
    with pytest.raises(VariantError, match=message):
        Variant(**base)


@pytest.mark.parametrize("copies", [128, 1000, 10**9, 0, -1, 1.0, 2.5, True, "2", None])
def test_piece_copies_fit_the_int8_counters(copies):
    with pytest.raises(VariantError, match=r"copies in \[1, 127\]"):
        Piece("1", ((0, 0),), copies=copies)


@pytest.mark.parametrize("cells", [((0, 0.0),), ((0, 0), (True, 0)), ((0, "1"),)])
def test_piece_cells_are_ints(cells):
    with pytest.raises(VariantError, match="integer pairs"):
        Piece("bad", cells)


def test_piece_name_is_a_string():
    with pytest.raises(VariantError, match="name pieces with strings"):
        Piece(3, ((0, 0),))


def test_numpy_integers_are_accepted_and_normalised():
    variant = bj.get_variant(
        "duo", board_shape=(np.int64(10), np.int32(10)), start_cells=[[(np.int8(3), 3)], [(6, np.uint8(6))]]
    )
    assert variant.board_shape == (10, 10) and all(type(x) is int for x in variant.board_shape)
    assert type(variant.start_cells[1][0][1]) is int
    assert Piece("1", ((0, 0),), copies=np.int64(127)).copies == 127


def test_most_copies_start_with_positive_counts_and_negative_scores():
    env = bj.make(
        "simple",
        pieces=(Piece("1", ((0, 0),), copies=127),),
        board_shape=(16, 16),
        start_cells=(((0, 0),), ((15, 15),)),
    )
    state = env.init()
    np.testing.assert_array_equal(state.remaining, 127)
    np.testing.assert_array_equal(state.scores, -127)


def test_get_variant_rejects_non_string_names_and_accepts_a_name_override():
    with pytest.raises(VariantError, match="unknown variant"):
        bj.get_variant(["duo"])
    assert bj.get_variant("duo", name="my_duo").name == "my_duo"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(max_steps=2.5), "max_steps must be a positive int"),
        (dict(max_steps=True), "max_steps must be a positive int"),
        (dict(max_steps=2**31), "max_steps must be a positive int"),
        (dict(illegal_action_penalty=float("nan")), "illegal_action_penalty must be a finite number"),
        (dict(illegal_action_penalty="-1"), "illegal_action_penalty must be a finite number"),
        (dict(reward=["winloss"]), "unknown reward mode"),
    ],
)
def test_env_arguments_have_types_and_ranges(kwargs, message):
    with pytest.raises(VariantError, match=message):
        bj.make("simple", **kwargs)
