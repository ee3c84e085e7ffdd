"""``blokus-jax train --init-from baseline:NAME``: a new run starts from a shipped baseline's network (its training
config gives the variant and network size) with a fresh optimiser; a bad name or a mismatched run is refused before
anything is written."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import blokus_jax
from blokus_agents.cli.train import _init_source, _new_config
from blokus_agents.players import checkpoint_index
from blokus_agents.players.baselines import baseline_source, load_baseline
from blokus_agents.training.alphazero import make_train
from blokus_agents.training.train import InitNetwork, warm_start
from blokus_jax.errors import CheckpointError


@pytest.fixture(scope="module")
def duo_source():
    return baseline_source("duo")


def test_baseline_source_is_the_baselines_training_config_and_parameters(duo_source):
    config, params = duo_source
    assert config.algorithm == "alphazero" and config.variant == "duo"
    _, shipped, meta = load_baseline("duo", blokus_jax.make("duo"))
    assert (config.channels, config.blocks, config.value_hidden) == tuple(meta["network"].values())
    for x, y in zip(jax.tree.leaves(shipped), jax.tree.leaves(params)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_a_warm_start_from_a_baseline_copies_its_network_with_a_fresh_optimiser(duo_source):
    config, params = duo_source
    small = config.replace(
        num_envs=2, num_steps=2, batch_size=8, sims=2, k=4, considered=2, teacher="", teacher_updates=0
    )
    trainer = make_train(small)
    warm = warm_start(trainer, trainer.init(jax.random.PRNGKey(1)), InitNetwork("baseline:duo", config, params))
    for x, y in zip(jax.tree.leaves(params), jax.tree.leaves(warm.params)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    assert int(warm.opt_state.count) == 0
    with pytest.raises(CheckpointError, match=r"'baseline:duo' has a network of channels=32.*give the same sizes"):
        narrow = make_train(small.replace(channels=8))
        warm_start(narrow, narrow.init(jax.random.PRNGKey(1)), InitNetwork("baseline:duo", config, params))


def test_the_cli_takes_the_baselines_variant_and_size_and_refuses_a_bad_name(duo_source, tmp_path, capsys):
    import argparse

    from blokus_agents import cli

    init = _init_source("baseline:duo")
    assert isinstance(init, InitNetwork) and init.label == "baseline:duo"
    assert _init_source(str(tmp_path)) == str(tmp_path) and _init_source(None) is None
    parser = argparse.ArgumentParser()
    cli.train.setup(parser)
    new = _new_config(parser.parse_args(["--algo", "alphazero", "--init-from", "baseline:duo"]), init)
    assert (new.variant, new.channels, new.blocks) == ("duo", 32, 2)

    out = tmp_path / "run"
    assert cli.main(["train", "--algo", "alphazero", "--init-from", "baseline:nosuch", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "there is no baseline 'nosuch'" in err and "'duo'" in err
    assert not out.exists() or checkpoint_index.latest_step(out) is None
