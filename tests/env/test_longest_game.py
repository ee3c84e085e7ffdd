"""The longest possible game (to size a ``lax.scan``) bounds real games and is what the environment page says;
the shipped contract check prints nothing."""

from __future__ import annotations

import re
from pathlib import Path

import jax
import numpy as np
import pytest

import blokus_jax
from blokus_jax.rollout import make_rollout, max_game_length
from blokus_jax.testing import check_env
from blokus_jax.variants import get_variant

PAGE = Path(__file__).resolve().parents[2] / "docs" / "environment.md"


def test_the_environment_page_documents_make_rollout_and_the_longest_game_of_each_variant():
    text = PAGE.read_text()
    assert "make_rollout" in text and "max_game_length" in text
    rows = re.findall(r"^\| (`[^|]+`) \| (\d+) \| ([\d, ]+) \| ([\d, ]+) \|$", text, re.M)
    assert rows
    for names, colors, _, lengths in rows:
        for name, length in zip(re.findall(r"`(\w+)`", names), lengths.split(", ")):
            variant = get_variant(name)
            assert variant.num_colors == int(colors) and max_game_length(variant) == int(length), name


@pytest.mark.parametrize("seed", [0, 1])
def test_random_games_end_within_the_longest_game(seed):
    env = blokus_jax.make("simple")
    states, actions = jax.jit(make_rollout(env, batch=64))(jax.random.key(seed))
    assert bool(states.terminated.all())
    played = np.asarray((actions >= 0).sum(axis=1))
    assert played.max() <= max_game_length(env.variant) and (np.asarray(states.step_count) == played).all()


def test_check_env_prints_nothing_to_stdout(capfd):
    check_env(blokus_jax.make("simple"))
    assert capfd.readouterr().out == ""
