"""Trainer configs: typed, ranged fields as in ``Variant`` (ints are ints, NumPy ints become
ints, nothing truncated), a memory estimate that refuses a run the machine cannot hold before anything is compiled
or written, and a replay ring that is checked against the game length."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from blokus_agents.core.options import machine_memory
from blokus_agents.players.configs import AZConfig, PPOConfig
from blokus_agents.training.checks import ReplayWarning, check_trainable, estimate_memory
from blokus_jax.errors import BlokusError, CheckpointError, ConfigError

INT_FIELDS = {cls: [f for f, v in cls().to_dict().items() if type(v) is int] for cls in (PPOConfig, AZConfig)}
GIB = 2**30


@pytest.mark.parametrize("cls", [PPOConfig, AZConfig])
@pytest.mark.parametrize("bad", [True, False, 2.9, 3.0, "8", None, np.bool_(True), np.float64(4.0), [4]])
def test_int_fields_take_true_ints_only(cls, bad):
    for field in INT_FIELDS[cls]:
        with pytest.raises(ConfigError, match=f"{cls.__name__}.{field} must be an int"):
            cls(**{field: bad})


def test_sims_2_9_is_refused_not_truncated():
    with pytest.raises(ConfigError, match=r"AZConfig.sims must be an int, got 2.9"):
        AZConfig(sims=2.9)
    with pytest.raises(CheckpointError, match="sims"):  # nor read back from a checkpoint's config
        AZConfig.from_dict({**AZConfig().to_dict(), "sims": 2.9})


def test_numpy_numbers_are_normalised_so_the_config_stays_json():
    config = AZConfig(num_envs=np.int64(8), batch_size=np.int32(32), sims=np.uint8(4), learning_rate=np.float32(0.5))
    assert type(config.num_envs) is int and type(config.sims) is int and type(config.learning_rate) is float
    data = json.loads(json.dumps(config.to_dict()))
    assert AZConfig.from_dict(data) == config
    assert config == AZConfig(num_envs=8, batch_size=32, sims=4, learning_rate=float(np.float32(0.5)))


@pytest.mark.parametrize(
    "cls, field, value, message",
    [
        (PPOConfig, "seed", 2**32, "at most 4,294,967,295 .PRNG keys take 32 bits"),
        (PPOConfig, "seed", 12345678901234567890, "seed must be a non-negative int"),
        (PPOConfig, "seed", -1, "non-negative"),
        (PPOConfig, "num_envs", 200_000_000, "at most 1,048,576"),
        (PPOConfig, "total_steps", 10**16, "at most"),
        (PPOConfig, "learning_rate", 10**400, "finite number, got an int of 401 digits"),
        (PPOConfig, "learning_rate", float("nan"), "finite number"),
        (PPOConfig, "gamma", 1.5, r"gamma must be a finite number in \[0.0, 1.0\]"),
        (AZConfig, "sims", 10**6, "at most 32,768"),
        (AZConfig, "sims", 0, "positive int"),
        (AZConfig, "games_per_env", 1, "games_per_env must be at least 2"),
        (AZConfig, "gumbel_scale", -1.0, "gumbel_scale"),
        (AZConfig, "variant", "nosuch", "not a variant; known"),
        (AZConfig, "variant", 3, "variant must be a string"),
        (PPOConfig, "reward", "money", "not a reward mode"),
    ],
)
def test_ranges_are_checked_with_the_field_named(cls, field, value, message):
    with pytest.raises(ConfigError, match=message) as err:
        cls(**{field: value})
    assert isinstance(err.value, BlokusError) and isinstance(err.value, ValueError)


@settings(max_examples=150, deadline=None)
@given(
    cls=st.sampled_from([PPOConfig, AZConfig]),
    data=st.data(),
    value=st.one_of(
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.text(max_size=5),
        st.none(),
    ),
)
def test_any_value_in_any_field_gives_a_valid_config_or_a_config_error(cls, data, value):
    field = data.draw(st.sampled_from(list(cls().to_dict())))
    try:
        config = cls(**{field: value})
    except ConfigError:
        return
    saved = config.to_dict()
    assert cls.from_dict(json.loads(json.dumps(saved))) == config  # whatever was accepted round-trips as JSON
    kind = type(getattr(cls(), field))
    assert type(saved[field]) is kind


# ------------------------------------------------------------------------------------------------- memory estimate
def test_defaults_fit_a_small_machine():
    for config in (PPOConfig(), AZConfig(), AZConfig(variant="duo"), PPOConfig(variant="classic")):
        check_trainable(config, limit=2 * GIB)


@pytest.mark.parametrize(
    "config, field",
    [
        (AZConfig(sims=10_000, num_envs=4096, batch_size=4096), "sims"),
        (AZConfig(num_envs=200_000, batch_size=200_000), "batch_size"),
        (AZConfig(batch_size=8 * 10**6 // 64 * 64), "batch_size"),
        (PPOConfig(num_envs=200_000), "num_envs"),
    ],
)
def test_configs_over_the_memory_limit_are_refused_naming_the_field_and_the_limit(config, field):
    with pytest.raises(
        ConfigError, match=rf"needs at least .* GiB .*{field}=.*more than the 16.0 GiB.*lower .*{field}"
    ):
        check_trainable(config, limit=16 * GIB)


def test_the_estimate_grows_with_every_size_field():
    base = sum(size for size, _ in estimate_memory(AZConfig()).values())
    for change in ({"sims": 64}, {"num_envs": 128, "batch_size": 512}, {"games_per_env": 16}, {"channels": 128}):
        assert sum(size for size, _ in estimate_memory(AZConfig(**change)).values()) > base
    # measured once on CPU with XLA's memory_analysis of the compiled update (temporaries + arguments: 21.1 MiB for
    # this PPO config, 11.4 MiB for AZConfig(num_envs=8, batch_size=32, sims=8, k=8)): the estimate is a lower
    # bound of about half, so a refused config would certainly not have fit
    for config, measured in (
        (PPOConfig(num_envs=16, num_steps=8, num_minibatches=2), 21.1 * 2**20),
        (AZConfig(num_envs=8, batch_size=32, sims=8, k=8), 11.4 * 2**20),
    ):
        assert 0.25 * measured < sum(size for size, _ in estimate_memory(config).values()) < measured


def test_a_teacher_search_is_counted_and_a_too_large_one_refused():
    base = estimate_memory(AZConfig(num_envs=64, batch_size=256))
    taught = estimate_memory(AZConfig(num_envs=64, batch_size=256, teacher="mcts:sims=64", teacher_updates=2))
    assert "teacher search" not in base
    assert set(taught) - set(base) == {"teacher search"}
    bigger = estimate_memory(AZConfig(num_envs=64, batch_size=256, teacher="mcts:sims=512", teacher_updates=2))
    assert bigger["teacher search"][0] > 4 * taught["teacher search"][0]
    huge = AZConfig(num_envs=4096, batch_size=4096, teacher="mcts:sims=10000", teacher_updates=2)
    with pytest.raises(ConfigError, match=r"teacher search: .* with teacher='mcts:sims=10000', num_envs=4,096.*lower"):
        check_trainable(huge, limit=16 * GIB)
    with pytest.raises(ConfigError, match="AZConfig.teacher: .*sims"):
        estimate_memory(AZConfig(teacher="mcts:sims=-3", teacher_updates=2))


def test_memory_limit_is_the_machine():
    limit, what = machine_memory(every_device=True)
    assert limit > 2**28 and what


def test_k_above_the_number_of_placements_is_refused_by_the_config_check_and_by_make_train():
    for k in (2000, 1373):  # simple has 1,373 actions: 1,372 placements and the pass
        with pytest.raises(ConfigError, match="AZConfig.k=.* more than the 1,372 placements of 'simple'"):
            check_trainable(AZConfig(k=k, considered=8), limit=64 * GIB)
    from blokus_agents.training.alphazero import make_train

    with pytest.raises(ConfigError, match="AZConfig.k=2000 is more than the 1,372 placements"):
        make_train(AZConfig(k=2000, considered=8))  # called directly, before anything is traced


# --------------------------------------------------------------------------------------------------- replay ring
def test_a_ring_that_loses_every_update_is_refused_and_one_that_may_lose_warns():
    with pytest.raises(ConfigError, match="every update would overwrite finished games"):
        check_trainable(AZConfig(num_steps=80, games_per_env=4), limit=64 * GIB)  # simple games last <= 20 moves
    with pytest.warns(ReplayWarning, match="overwrites some before any optimiser step sees them"):
        check_trainable(AZConfig(num_steps=40, games_per_env=4), limit=64 * GIB)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_trainable(AZConfig(num_steps=40, games_per_env=8), limit=64 * GIB)  # room for 7 games per env
        check_trainable(AZConfig(), limit=64 * GIB)


def test_check_trainable_refuses_what_is_not_a_config():
    with pytest.raises(ConfigError, match="PPOConfig or AZConfig"):
        check_trainable({"variant": "simple"})


def test_the_trainer_refuses_before_writing_anything(tmp_path):
    from blokus_agents.training.train import run

    out = tmp_path / "run"
    with pytest.raises(ConfigError, match="sims"):
        run(AZConfig(sims=10_000, num_envs=2**16, batch_size=2**16), out, progress=False)
    assert not out.exists()


def test_evaluation_games_count_and_are_checked():
    check_trainable(PPOConfig(), limit=2 * GIB, eval_games=64)
    with pytest.raises(ConfigError, match=r"evaluation games: .* eval_games=1,000,000.*lower eval_games"):
        check_trainable(PPOConfig(variant="classic"), limit=2 * GIB, eval_games=10**6)
    for bad in (10**8, -1, 2.5, True, "64"):
        with pytest.raises(ConfigError, match="eval_games"):
            check_trainable(PPOConfig(), limit=2 * GIB, eval_games=bad)
