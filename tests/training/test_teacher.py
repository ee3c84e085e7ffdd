"""Expert iteration (``AZConfig.teacher``, ``train --teacher``): the teacher's search plays the first
``teacher_updates`` updates and gives their policy targets, then the network's own search takes over; bad teachers
are refused in the config's and the CLI's words."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from blokus_agents.players import checkpoint_read
from blokus_agents.players.configs import AZConfig
from blokus_agents.training.alphazero import make_train
from blokus_agents.training.curves import plot_win_rates, teacher_handover
from blokus_agents.training.rundir import read_metrics
from blokus_jax.errors import ConfigError

TEACHER = "mcts:sims=2,playouts=1,considered=4"
# The settings of the CLI run below (the CLI's defaults for the rest), so that it loads the compiled update from the
# suite's compilation cache; the root-value blend of the value targets is on, so that its wiring is tested too. The
# runners below start from raw `PRNGKey`s, as `blokus-jax train` does: a typed key is another program to compile.
TAUGHT = AZConfig(
    variant="simple",
    num_envs=4,
    num_steps=4,
    total_steps=32,
    sims=2,
    batch_size=8,
    channels=4,
    blocks=1,
    teacher=TEACHER,
    teacher_updates=1,
    root_value=0.5,
)


@pytest.fixture(scope="module")
def trainer():
    return make_train(TAUGHT)


def _with_other_params(runner):
    """A copy of ``runner`` (the update donates its argument) with a different network: every weight scaled and
    shifted."""
    copy = jax.tree.map(lambda x: x.copy(), runner)
    return copy.replace(params=jax.tree.map(lambda x: 3.0 * x + 0.1, copy.params))


def _self_play(runner) -> tuple:
    """What self-play left in a runner: boards, candidates and weights of every stored position."""
    return tuple(np.asarray(x) for x in (runner.env_state.board, runner.buffer.candidates, runner.buffer.weights))


def _same(a: tuple, b: tuple) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))


@pytest.mark.slow
def test_the_teacher_plays_and_sets_the_targets_until_the_hand_over(trainer):
    a = trainer.init(jax.random.PRNGKey(0))
    b = _with_other_params(a)
    # update 0: the teacher plays, so two different networks leave the same games and targets
    a1, metrics_a = trainer.update(a)
    b1, metrics_b = trainer.update(b)
    assert float(metrics_a["by_teacher"]) == 1.0 == float(metrics_b["by_teacher"])
    assert _same(_self_play(a1), _self_play(b1))
    # from update 1 on each network's own search plays: the two runs part
    a2, metrics_a = trainer.update(a1)
    b2, _ = trainer.update(b1)
    assert float(metrics_a["by_teacher"]) == 0.0
    assert not _same(_self_play(a2), _self_play(b2))


@pytest.mark.slow
def test_the_first_stored_targets_are_the_teachers_search_output(trainer):
    """Policy targets, and (``root_value > 0``) the root value each position's value target will blend in once its
    game ends."""
    runner = trainer.init(jax.random.PRNGKey(1))
    states = runner.env_state
    # the update's key schedule: (next key, self-play key, training key), then one key per self-play move
    _, play_key, _ = jax.random.split(runner.key, 3)
    first_move_key = jax.random.split(play_key, TAUGHT.num_steps)[0]
    expected = jax.jit(trainer.teacher)(runner.params, first_move_key, states)
    after, _ = trainer.update(runner)
    np.testing.assert_array_equal(np.asarray(after.buffer.candidates[:, 0, 0]), np.asarray(expected.candidates))
    np.testing.assert_array_equal(np.asarray(after.buffer.weights[:, 0, 0]), np.asarray(expected.candidate_weights))
    assert int(after.buffer.length.sum()) == 0  # no game has ended yet: the stored values are the root values
    np.testing.assert_allclose(np.asarray(after.buffer.value[:, 0, 0]), np.asarray(expected.value), rtol=1e-6)
    assert np.abs(np.asarray(expected.value)).max() > 0


@pytest.mark.slow
def test_finished_games_get_the_blended_targets_from_the_trainer(trainer):
    """The trainer passes ``root_value`` to the game-end blend: a finished game's targets are ``0.5 * result + 0.5 *
    root value``, so the result they imply from the root values stored before the game ended is one number in
    [-1, 1] per mover, the other mover's negated (a dropped blend would imply a different number at every position)."""
    runner, checked = trainer.init(jax.random.PRNGKey(2)), 0
    for _ in range(16):
        before = jax.tree.map(np.asarray, (runner.buffer.value, runner.buffer.player, runner.buffer.games))
        before_t = np.asarray(runner.buffer.t)
        runner, _ = trainer.update(runner)
        games, value = np.asarray(runner.buffer.games), np.asarray(runner.buffer.value)
        for env in np.flatnonzero(games > before[2]):
            slot, stored = before[2][env] % value.shape[1], before_t[env]  # positions whose root value we saw
            implied = 2 * value[env, slot, :stored] - before[0][env, slot, :stored]
            movers = before[1][env, slot, :stored]
            first = implied[movers == movers[0]]
            np.testing.assert_allclose(first, first[0], atol=1e-5)
            np.testing.assert_allclose(implied[movers != movers[0]], -first[0], atol=1e-5)
            assert abs(first[0]) <= 1 + 1e-6 and not np.allclose(value[env, slot, :stored], first[0])
            checked += 1
        if checked >= 2:
            break
    assert checked >= 2, "no game ended within 16 updates"


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"teacher": "minimax"}, "must be an 'mcts' agent spec"),
        ({"teacher": " " + TEACHER}, "has spaces around it"),
        ({"teacher": "  ", "teacher_updates": 0}, "has spaces around it"),
        ({"teacher_updates": 2**31}, r"at most 2,147,483,647 \(the update counter is an int32\)"),
        ({"teacher_updates": 0}, "go together"),
        ({"teacher": ""}, "go together"),
    ],
)
def test_config_refuses_a_teacher_that_is_not_mcts_or_has_no_schedule(changes, message):
    with pytest.raises(ConfigError, match=message):
        TAUGHT.replace(**changes)


@pytest.mark.parametrize(
    "teacher, message",
    [
        ("mcts:k=8", "k cannot be set"),
        ("mcts:seconds=1", "seconds cannot be set"),
        ("mcts:sims=0", "sims=0"),
        ("mcts:depth=2", "unknown option 'depth'"),
    ],
)
def test_trainer_refuses_teacher_options_it_cannot_honour(teacher, message):
    with pytest.raises(ConfigError, match=message):
        make_train(TAUGHT.replace(teacher=teacher))


@pytest.mark.slow
def test_cli_trains_with_a_teacher_and_checks_its_flags(tmp_path, capsys):
    from blokus_agents import cli

    small = ["--variant", "simple", "--num-envs", "4", "--num-steps", "4", "--channels", "4", "--blocks", "1"]
    args = ["train", "--algo", "alphazero", *small, "--sims", "2", "--batch-size", "8", "--total-steps", "32"]
    quiet = ["--eval-every", "0", "--no-progress", "--cpu-devices", "1"]
    out = tmp_path / "taught"
    taught = ["--teacher", TEACHER, "--teacher-updates", "1", "--root-value", "0.5"]
    code = cli.main([*args, *taught, "--out", str(out), *quiet])
    assert code == 0, capsys.readouterr().err
    records = read_metrics(out)
    assert [r["by_teacher"] for r in records] == [1.0, 0.0]
    assert teacher_handover(records) == records[0]["env_steps"] == 16
    config = checkpoint_read.load_config(out)
    assert (config.teacher, config.teacher_updates, config.root_value) == (TEACHER, 1, 0.5)
    capsys.readouterr()
    assert cli.main([*args, "--teacher", TEACHER, "--out", str(tmp_path / "x"), *quiet]) == 2
    err = capsys.readouterr().err
    assert "--teacher SPEC and --teacher-updates N go together" in err and "Traceback" not in err
    assert cli.main([*args, "--teacher", "greedy", "--teacher-updates", "1", "--out", str(tmp_path / "y"), *quiet]) == 2
    assert "must be an 'mcts' agent spec" in capsys.readouterr().err


def test_the_handover_is_where_the_last_taught_update_ends():
    taught = [{"env_steps": 8 * i, "by_teacher": 1.0} for i in (1, 2, 3)]
    own = [{"env_steps": 8 * i, "by_teacher": 0.0} for i in (4, 5)]
    evaluation = {"env_steps": 24, "win_rate_vs_greedy": 0.5}  # an evaluation record has no by_teacher
    assert teacher_handover([*taught, evaluation, *own]) == 24
    assert teacher_handover(taught) is None  # not handed over yet
    assert teacher_handover(own) is None  # no teacher (a PPO run has no by_teacher at all)
    assert teacher_handover([evaluation]) is None


def test_the_win_rate_plot_marks_the_handover(tmp_path, monkeypatch):
    from matplotlib.axes import Axes

    lines = []
    monkeypatch.setattr(Axes, "axvline", lambda self, x, **kw: lines.append((x, kw["label"])))
    records = [
        {"env_steps": 8, "by_teacher": 1.0, "win_rate_vs_greedy": 0.25},
        {"env_steps": 16, "by_teacher": 0.0, "win_rate_vs_greedy": 0.5},
    ]
    plot_win_rates(records, tmp_path / "a.png", "taught")
    plot_win_rates(records[1:], tmp_path / "b.png", "untaught")
    assert lines == [(8, "teacher hands over")]
    assert (tmp_path / "a.png").stat().st_size > 1000 and (tmp_path / "b.png").exists()


@pytest.mark.parametrize(
    "spec, evaluator, search",
    [
        (
            "mcts:sims=4,playouts=2,playout=random,temperature=2,margin=0.25,centre=1,value_scale=0.5,considered=3",
            {"playouts": 2, "playout": "random", "temperature": 2.0, "margin": 0.25, "centre": 1.0},
            {"sims": 4, "considered": 3, "value_scale": 0.5},
        ),
        (  # what the spec leaves out is mcts's default
            "mcts:sims=4",
            {"playouts": 8, "playout": "greedy", "temperature": 1.0, "margin": 0.5, "centre": 0.0},
            {"sims": 4, "considered": 16, "value_scale": 0.1},
        ),
    ],
)
def test_a_teacher_specs_options_reach_its_search(monkeypatch, spec, evaluator, search):
    """Every option of the teacher's spec reaches its evaluator or its tree; the run's own k and exploration settings
    are the ones the tree gets."""
    from blokus_agents.search import mcts as search_module
    from blokus_jax import make

    seen = {}
    monkeypatch.setattr(search_module, "rollout_evaluator", lambda env, **kw: seen.setdefault("evaluator", kw) and "ev")
    monkeypatch.setattr(search_module, "make_search", lambda env, ev, **kw: seen.setdefault("search", (ev, kw)))
    explore = {"k": 8, "gumbel_scale": 1.0, "root_noise": 0.25, "root_alpha": 0.3}
    search_module.teacher_search(make("simple"), spec, **explore)
    assert seen["evaluator"] == evaluator
    assert seen["search"] == ("ev", {**search, **explore})
