"""Smoke tests that keep the README's demo and the throughput harness runnable (they assert results, not speed)."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pytest

import blokus_jax
from blokus_jax import benchmark, demo
from blokus_jax.rollout import max_game_length


def test_demo_plays_complete_games(capsys):
    assert demo.main(["--variant", "simple", "--games", "8"]) == 0
    out = capsys.readouterr().out
    assert "| 8 | 8 |" in out  # 8 games, all finished
    assert "Final position of game 0" in out
    # one definition of placements/s: the demo's is `blokus-jax bench`'s, measured by the same function and settings
    assert out.count("placements/s") == 1 and "placements/s at batch 8, as `blokus-jax bench` measures it" in out


def test_the_demo_and_bench_measure_placements_the_same_way():
    from blokus_agents.cli import build_parser

    args = build_parser().parse_args(["bench"])
    assert (args.steps, args.repeats) == (benchmark.BENCH_STEPS, benchmark.BENCH_REPEATS)


def test_random_games_end_within_the_length_bound():
    env = blokus_jax.make("simple")
    states = jax.jit(lambda k: demo.play_random_games(env, k, 16))(jax.random.key(0))
    assert bool(states.terminated.all())
    assert int(states.step_count.max()) <= max_game_length(env.variant)


def test_benchmark_rows_count_real_placements():
    env = blokus_jax.make("simple")
    row = benchmark.measure(env, batch_size=4, num_steps=8, repeats=1)
    assert row["variant"] == "simple" and row["batch"] == 4 and row["placements_per_s"] > 0
    _, placed = benchmark.make_random_rollout(env, 4, 8)(jax.random.key(0))
    assert 0 < int(placed) <= 4 * 8
    table = benchmark.format_table([row])
    assert table.splitlines()[0].startswith("| variant | batch | device")


def test_step_autoreset_restarts_a_finished_game_and_reports_its_end():
    env = blokus_jax.make("simple")
    step = jax.jit(env.step_autoreset)
    sample = jax.jit(env.sample_action)
    state, key, done, steps = env.init(), jax.random.key(1), False, 0
    while not done:
        key, sub = jax.random.split(key)
        before = state
        state, rewards, done = step(state, sample(sub, state))
        done, steps = bool(done), steps + 1
        assert steps <= max_game_length(env.variant)
    final = env.step(before, sample(sub, before))  # the same last step without the reset
    assert bool(final.terminated)
    np.testing.assert_array_equal(rewards, final.rewards)  # the reward of the finishing step is reported
    assert float(np.abs(rewards).sum()) > 0
    jax.tree.map(np.testing.assert_array_equal, state, env.init())  # and the game restarted


@pytest.mark.slow
def test_one_play_loop_serves_records_demo_and_benchmark():
    from blokus_jax import rollout

    env = blokus_jax.make("simple")
    key = jax.random.key(5)
    states, actions = rollout.rollout(env, key, batch=4)
    actions = np.asarray(actions)
    assert actions.shape == (4, max_game_length(env.variant)) and bool(states.terminated.all())
    for row, n in zip(actions, np.asarray(states.step_count)):
        assert (row[:n] >= 0).all() and (row[n:] == -1).all()
    demo_states = jax.jit(lambda k: demo.play_random_games(env, k, 4))(key)  # the demo plays the same games
    np.testing.assert_array_equal(np.asarray(demo_states.board), np.asarray(states.board))
    _, endless = jax.jit(rollout.make_rollout(env, 4, 60, autoreset=True))(key)
    assert endless.shape == (4, 60) and (np.asarray(endless) >= 0).all()


def test_the_benchmark_table_names_the_device_and_cores_beside_the_figure(capsys):
    env = blokus_jax.make("simple")
    row = benchmark.measure(env, batch_size=4, num_steps=4, repeats=1)
    assert row["cores"] == benchmark.usable_cores() >= 1
    benchmark.print_table([row])
    lines = capsys.readouterr().out.splitlines()
    header = [c.strip() for c in lines[0].split("|")[1:-1]]
    cells = [c.strip() for c in lines[2].split("|")[1:-1]]
    figure = header.index("placements/s")
    assert header[figure - 1] == "device" and header[figure + 1] == "cores"
    assert cells[header.index("cores")] == str(benchmark.usable_cores()) and cells[header.index("device")]
    note = lines[3]
    assert "CPU cores usable" in note and "depends on the device" in note and "batch size" in note
    assert jax.local_devices()[0].device_kind in note


def test_bench_sets_a_measurement_beside_the_documented_figures_and_they_match_the_docs(capsys):
    row = {"variant": "duo", "batch": 1024, "device": "2x cpu", "cores": 2, "placements_per_s": 284_176.0}
    row.update(compile_s=1.0, runs=1, steps=64)
    benchmark.print_table([row])
    out = capsys.readouterr().out
    assert "compared with the documented figures" in out and "0.50x the documented 568,352" in out
    assert "2026-11-30" in out
    assert benchmark.compare_to_reference([{**row, "variant": "simple"}]) == ""  # nothing documented for it
    root = Path(__file__).resolve().parents[2]
    docs, readme = (root / "docs" / "benchmarks.md").read_text(), (root / "README.md").read_text()
    for figures in benchmark.REFERENCE.values():
        for rate, _ in figures:
            assert f"{rate:,.0f}" in docs and (rate < 100_000 or f"{rate:,.0f}" in readme)
    assert "570,000 random placements/s** on Duo" not in readme  # a range with its machines, not one figure
