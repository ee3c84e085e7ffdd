"""Shipped baseline agents (agents/baselines): export, bit-exact load, every check of the loader, the `baseline:`
prefix in the resolver and the arena, and the baselines that actually ship."""

from __future__ import annotations

import json
from pathlib import Path

import jax
import numpy as np
import pytest
from flax import serialization
from helpers import ROOT, load_script

import blokus_jax
from blokus_agents.core import policies
from blokus_agents.core.masking import masked_logits
from blokus_agents.core.policies import AgentSpecError, ParamPolicy, resolve_agent
from blokus_agents.engines.arena import play_match
from blokus_agents.players import baselines
from blokus_agents.players.baselines import shipped
from blokus_agents.players.configs import PPOConfig
from blokus_agents.players.networks import make_network
from blokus_agents.search.settings import MAX_SIMS
from blokus_agents.training import checkpoint
from blokus_agents.training.ppo import make_train
from blokus_jax.errors import BlokusError, CheckpointError
from blokus_jax.io import fileio

NETWORK = {"channels": 4, "blocks": 1, "value_hidden": 8}


@pytest.fixture(scope="module")
def env():
    return blokus_jax.make("simple")


@pytest.fixture(scope="module")
def params(env):
    network = make_network(env, **NETWORK)
    return jax.jit(network.init)(jax.random.key(1), jax.tree.map(lambda x: x[None], env.observe(env.init())))


def write(params, directory, name="tiny", **overrides):
    options = dict(
        variant="simple", algorithm="ppo", network=NETWORK, sims=0, command="python -m blokus_agents.cli train ...",
        source_run="tests", step=0,
    )  # fmt: skip
    return baselines.write_baseline(params, name, directory, **{**options, **overrides})


@pytest.fixture()
def shelf(tmp_path, params, monkeypatch):
    """A baseline directory holding ``tiny`` (ppo) and ``tiny_az`` (alphazero, 4 simulations), standing in for the
    package directory."""
    write(params, tmp_path)
    write(params, tmp_path, "tiny_az", algorithm="alphazero", sims=4)
    monkeypatch.setattr(shipped, "PACKAGE_DIR", tmp_path)
    return tmp_path


def leaves_equal(a, b) -> bool:
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    return len(la) == len(lb) and all(
        np.asarray(x).dtype == np.asarray(y).dtype and np.array_equal(np.asarray(x), np.asarray(y))
        for x, y in zip(la, lb)
    )


def test_a_written_baseline_loads_back_bit_exactly(env, params, tmp_path):
    path = write(params, tmp_path)
    assert path == tmp_path / "tiny.json" and baselines.available(tmp_path) == ["tiny"]
    network, loaded, meta = baselines.load_baseline("tiny", env, tmp_path)
    assert leaves_equal(loaded, params)
    assert jax.tree.structure(loaded) == jax.tree.structure(params)
    assert serialization.to_bytes(loaded) == (tmp_path / "tiny.msgpack").read_bytes()
    assert (network.channels, network.blocks, network.value_hidden) == (4, 1, 8)
    assert meta["variant"] == "simple" and meta["algorithm"] == "ppo" and meta["sims"] == 0
    assert set(json.loads(path.read_text())) == set(shipped._FIELDS) | set(shipped._OPTIONAL_FIELDS)
    with pytest.raises(FileExistsError, match="--force"):
        write(params, tmp_path)
    write(params, tmp_path, overwrite=True)


def test_a_link_as_the_export_folder_or_a_baseline_file_is_refused(params, tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "linked").symlink_to(target)
    with pytest.raises(CheckpointError, match="symbolic link"):
        write(params, tmp_path / "linked")
    out = tmp_path / "out"
    out.mkdir()
    (out / "tiny.json").symlink_to(target / "planted.json")
    with pytest.raises(CheckpointError, match="symbolic link"):
        write(params, out, overwrite=True)
    assert list(target.iterdir()) == []


def test_export_from_a_run_directory(env, tmp_path):
    config = PPOConfig(variant="simple", num_envs=4, num_steps=4, total_steps=64, num_minibatches=2, **NETWORK)
    runner = make_train(config).init(jax.random.PRNGKey(0))
    checkpoint.save(tmp_path / "run", runner, config)
    path = baselines.export_baseline(tmp_path / "run", "exported", tmp_path / "out", command="train --variant simple")
    meta = json.loads(path.read_text())
    assert meta["step"] == 0 and meta["train_config"] == config.to_dict() and meta["network"] == NETWORK
    assert meta["command"] == "train --variant simple" and meta["source_run"] == str(tmp_path / "run")
    _, loaded, _ = baselines.load_baseline("exported", env, tmp_path / "out")
    assert leaves_equal(loaded, runner.params)
    with pytest.raises(ValueError, match="training command"):
        baselines.export_baseline(tmp_path / "run", "other", tmp_path / "out", command=" ")


@pytest.mark.parametrize("suffix", [".msgpack", ".json"])
def test_a_flipped_byte_is_a_checkpoint_error(env, params, tmp_path, suffix):
    write(params, tmp_path)
    path = tmp_path / f"tiny{suffix}"
    data = bytearray(path.read_bytes())
    index = len(data) // 2 if suffix == ".msgpack" else data.index(b'"sha256": "') + 12
    data[index] ^= 0x01
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="corrupt|sha256|not valid JSON"):
        baselines.load_baseline("tiny", env, tmp_path)


def test_a_consistently_rehashed_but_garbled_network_is_a_checkpoint_error(env, params, tmp_path):
    import hashlib

    write(params, tmp_path)
    data = serialization.to_bytes({"params": {"Dense_0": {"kernel": np.zeros((2, 2), np.float32)}}})
    (tmp_path / "tiny.msgpack").write_bytes(data)
    meta = json.loads((tmp_path / "tiny.json").read_text())
    meta["sha256"] = hashlib.sha256(data).hexdigest()
    (tmp_path / "tiny.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="layout of the network"):
        baselines.load_baseline("tiny", env, tmp_path)
    meta["network"]["channels"] = 8  # the metadata describes another network than the one in the file
    write(params, tmp_path, overwrite=True)
    meta["sha256"] = json.loads((tmp_path / "tiny.json").read_text())["sha256"]
    (tmp_path / "tiny.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=r"parameter .* is float32\[.*\], expected float32"):
        baselines.load_baseline("tiny", env, tmp_path)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("sims", True, "'sims' is True, not a int"),
        ("sims", "4", "'sims' is '4', not a int"),
        ("variant", None, "'variant' is None, not a str"),
        ("algorithm", "dqn", "algorithm 'dqn' is not one of"),
        ("network", {"channels": 4, "blocks": 1}, "needs positive ints"),
        ("name", "other", "names it 'other'"),
        ("format_version", 99, "has format 99"),
        ("date", "yesterday", "not an ISO date"),
        ("sha256", "abc", "not a sha256 hex digest"),
        ("extra", 1, r"unknown fields \['extra'\]"),
        ("obs_version", -1, "observation layout -1"),
        ("mix", 1.5, "'mix' is 1.5; it needs a number from 0 to 1"),
        ("mix", "0.5", "'mix' is '0.5'; it needs a number"),
        ("mix", True, "'mix' is True; it needs a number"),
        ("mix", 0.5, "plays its network without search"),  # tiny is a ppo baseline with sims 0
    ],
)
def test_metadata_is_checked_field_by_field(env, params, tmp_path, field, value, message):
    write(params, tmp_path)
    meta = json.loads((tmp_path / "tiny.json").read_text())
    meta[field] = value
    (tmp_path / "tiny.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=message):
        baselines.load_baseline("tiny", env, tmp_path)


def test_a_missing_field_or_a_json_list_is_refused(env, params, tmp_path):
    write(params, tmp_path)
    meta = json.loads((tmp_path / "tiny.json").read_text())
    del meta["command"]
    (tmp_path / "tiny.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=r"missing fields \['command'\]"):
        baselines.load_baseline("tiny", env, tmp_path)
    (tmp_path / "tiny.json").write_text("[1, 2]")
    with pytest.raises(CheckpointError, match="not an object"):
        baselines.load_baseline("tiny", env, tmp_path)


def test_unknown_name_lists_the_available_baselines(env, shelf):
    with pytest.raises(AgentSpecError, match=r"unknown baseline 'nope'.*\['tiny', 'tiny_az'\]") as err:
        baselines.load_baseline("nope", env)
    assert isinstance(err.value, BlokusError)
    for spec in ("baseline:nope", "baseline:../tiny", "baseline:tiny.json"):
        with pytest.raises(AgentSpecError, match=r"unknown baseline .*\['tiny', 'tiny_az'\]"):
            resolve_agent(spec, env)


def test_variant_mismatch_says_which_variant_to_use(shelf):
    with pytest.raises(CheckpointError, match="plays variant 'simple', not 'duo'; use --variant simple"):
        resolve_agent("baseline:tiny", blokus_jax.make("duo"))


def test_files_over_the_size_limit_are_refused_before_reading(env, params, tmp_path, monkeypatch):
    write(params, tmp_path)
    with open(tmp_path / "tiny.msgpack", "r+b") as f:
        f.truncate(baselines.MAX_FILE_BYTES + 1)  # sparse: large on paper, nothing to read
    read, original = [], fileio._read_fd
    monkeypatch.setattr(fileio, "_read_fd", lambda fd, size: read.append(original(fd, size)) or read[-1])
    with pytest.raises(CheckpointError, match=r"over the 4,194,304-byte limit"):
        baselines.load_baseline("tiny", env, tmp_path)
    assert b"".join(read) == (tmp_path / "tiny.json").read_bytes()  # only the metadata: the msgpack was never read


def test_export_refuses_a_network_over_two_megabytes(params, tmp_path):
    big = {"params": {"Dense_0": {"kernel": np.zeros((600, 1000), np.float32)}}}  # 2.4 MB
    with pytest.raises(CheckpointError, match="2,097,152-byte limit"):
        write(big, tmp_path)
    assert baselines.available(tmp_path) == []
    with pytest.raises(ValueError, match="lowercase"):
        write(params, tmp_path, name="../evil")
    with pytest.raises(ValueError, match="alphazero baseline needs sims >= 1"):
        write(params, tmp_path, algorithm="alphazero", sims=0)


def test_baseline_prefix_is_registered_and_plays_a_full_game_in_the_arena(env, shelf):
    policies.load_builtins()
    assert policies._PREFIXES["baseline"] is baselines.baseline_policy
    greedy = resolve_agent("baseline:tiny", env)  # ppo, sims 0: the greedy network policy
    assert isinstance(greedy, ParamPolicy)
    assert greedy.fn is policies.network_policy(env, *baselines.load_baseline("tiny", env)[:2]).fn
    result = play_match(
        env, [greedy, resolve_agent("random", env)], ["baseline:tiny", "random"], 2, jax.random.key(0), progress=False
    )
    assert result.games == 2 and (result.steps > 0).all() and result.forfeits.tolist() == [0, 0]
    assert np.allclose(result.credit.sum(axis=1), 1.0)
    from blokus_jax.adapters._boundary import resolve_policy  # the adapters' opponents= use the same resolver

    assert isinstance(resolve_policy("baseline:tiny", env), ParamPolicy)
    with pytest.raises(AgentSpecError, match="unknown option 'depth'"):
        resolve_agent("baseline:tiny,depth=2", env)
    with pytest.raises(AgentSpecError, match="sims=-1"):
        resolve_agent("baseline:tiny,sims=-1", env)


def test_alphazero_baselines_search_with_their_budget_unless_overridden(env, shelf, monkeypatch):
    calls = []

    def spy(env, apply_fn, params, settings):
        calls.append(settings.options())
        return "searching policy"

    monkeypatch.setattr(shipped, "network_search_policy", spy)
    assert resolve_agent("baseline:tiny_az", env) == "searching policy"
    assert resolve_agent("baseline:tiny_az,sims=32,k=8", env) == "searching policy"
    assert resolve_agent("baseline:tiny,sims=2", env) == "searching policy"  # a ppo baseline with search
    assert resolve_agent("baseline:tiny_az,mix=0.5,playouts=2", env) == "searching policy"  # playouts in the leaves
    assert [(c["sims"], c["k"]) for c in calls] == [(4, 16), (32, 8), (2, 16), (4, 16)]
    assert [(c["mix"], c["playouts"]) for c in calls] == [(0.0, 8), (0.0, 8), (0.0, 8), (0.5, 2)]
    with pytest.raises(AgentSpecError, match="mix"):
        resolve_agent("baseline:tiny_az,mix=1.5", env)


def test_a_time_budget_replaces_the_baselines_simulations(env, shelf, monkeypatch):
    """``baseline:NAME,seconds=S`` searches with a time budget (also a ppo baseline, which would not search by
    default); a budget in simulations and in time at once is refused."""
    calls = []
    monkeypatch.setattr(shipped, "network_search_policy", lambda env, fn, p, settings: calls.append(settings.options()))
    resolve_agent("baseline:tiny_az,seconds=0.5", env)
    resolve_agent("baseline:tiny,seconds=2", env)
    assert [c["seconds"] for c in calls] == [0.5, 2.0]
    with pytest.raises(AgentSpecError, match="either in simulations .* or in time"):
        resolve_agent("baseline:tiny_az,sims=8,seconds=1", env)
    with pytest.raises(AgentSpecError, match="seconds"):
        resolve_agent("baseline:tiny_az,seconds=-1", env)


def test_a_baselines_own_mix_is_its_default_and_a_file_without_one_means_zero(env, params, tmp_path, monkeypatch):
    calls = []
    monkeypatch.setattr(shipped, "network_search_policy", lambda env, fn, p, settings: calls.append(settings.options()))
    monkeypatch.setattr(shipped, "PACKAGE_DIR", tmp_path)
    write(params, tmp_path, "mixed", algorithm="alphazero", sims=4, mix=0.5)
    assert json.loads((tmp_path / "mixed.json").read_text())["mix"] == 0.5
    write(params, tmp_path, "old", algorithm="alphazero", sims=4)
    meta = json.loads((tmp_path / "old.json").read_text())
    del meta["mix"]  # as written before the field existed
    (tmp_path / "old.json").write_text(json.dumps(meta))
    assert baselines.load_baseline("old", env)[2]["mix"] == 0.0
    for spec in ("baseline:mixed", "baseline:mixed,mix=0", "baseline:mixed,mix=1", "baseline:old"):
        resolve_agent(spec, env)
    assert [c["mix"] for c in calls] == [0.5, 0.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="plays its network without search"):
        write(params, tmp_path, "ppo_mixed", mix=0.5)
    write(params, tmp_path, "ppo_searching", sims=4, mix=0.5)  # a ppo baseline that searches by default may mix
    resolve_agent("baseline:ppo_searching", env)
    assert calls[-1]["mix"] == 0.5
    meta = json.loads((tmp_path / "old.json").read_text())
    assert baselines.check_meta(meta, "old")["mix"] == 0.0 and "mix" not in meta  # the caller's dict is unchanged


def test_the_memory_estimate_counts_playouts_when_the_mix_is_the_baselines(env):
    from blokus_agents.search.mcts import az_memory

    options = {"sims": 4, "k": 16, "considered": 16, "gumbel_scale": 0.0, "playouts": 8, "playout": "greedy"}
    spec_mix = baselines.baseline_memory(env, {**options, "mix": None})
    assert spec_mix == az_memory(env, {**options, "mix": 1.0}) > az_memory(env, {**options, "mix": 0.0})
    assert baselines.baseline_memory(env, {**options, "mix": 0.0}) == az_memory(env, {**options, "mix": 0.0})


def test_an_alphazero_baseline_plays_a_legal_move_with_search(env, shelf):
    state = env.init()
    action = jax.jit(resolve_agent("baseline:tiny_az,k=4", env))(jax.random.key(0), state)
    assert bool(env.is_legal(state, action))


def test_cli_eval_defaults_to_the_variant_of_a_baseline(shelf, capsys):
    from blokus_agents import cli

    assert cli.common.run_variant(["baseline:tiny", "random"]) == "simple"
    assert cli.common.run_variant(["baseline:nope", "random"]) is None
    assert cli.main(["eval", "--agents", "baseline:tiny", "random", "--games", "2", "--no-progress"]) == 0
    assert "variant simple (that of the run directory or baseline" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------- the shipped baselines
def test_the_shipped_baseline_directory_is_package_data():
    assert baselines.PACKAGE_DIR.is_dir() and (baselines.PACKAGE_DIR / "__init__.py").is_file()
    names = baselines.available()
    assert isinstance(names, list) and all(isinstance(n, str) for n in names)
    for path in baselines.PACKAGE_DIR.iterdir():  # no half baselines, no stray data files
        if path.suffix in (".json", ".msgpack"):
            assert path.stem in names, f"{path.name} has no partner file"


def test_pyproject_installs_the_baseline_files_as_package_data():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    setuptools = pyproject["tool"]["setuptools"]
    assert {"blokus_jax", "blokus_agents", "blokus_agents.players.baselines"} <= set(setuptools["packages"])
    assert setuptools["package-dir"]["blokus_agents"] == "agents"  # the folder agents/ installs as blokus_agents
    assert set(setuptools["package-data"]["blokus_agents.players.baselines"]) >= {"*.msgpack", "*.json"}


@pytest.mark.slow
@pytest.mark.parametrize("name", baselines.available())
def test_every_shipped_baseline_loads_and_is_small(name):
    meta = json.loads((baselines.PACKAGE_DIR / f"{name}.json").read_text())
    assert (baselines.PACKAGE_DIR / f"{name}.msgpack").stat().st_size <= baselines.MAX_EXPORT_BYTES
    env = blokus_jax.make(meta["variant"])
    network, params, meta = baselines.load_baseline(name, env)
    assert meta["command"].strip() and meta["source_run"].strip()
    policy = resolve_agent(f"baseline:{name}", env)
    state = env.init()
    assert bool(env.is_legal(state, policy(jax.random.key(0), state)))


@pytest.mark.slow
def test_the_shipped_ppo_baseline_plays_its_network_alone():
    """`baseline:duo_ppo` is a network trained by the project's PPO that plays without search: its metadata says so,
    its provenance names the PPO command, and its move is the argmax of its masked policy, move after move."""
    env = blokus_jax.make("duo")
    network, params, meta = baselines.load_baseline("duo_ppo", env)
    assert (meta["algorithm"], meta["sims"], meta["variant"]) == ("ppo", 0, "duo")
    assert "blokus-jax train --variant duo --init-from" in meta["command"] and "--kl-coef" in meta["command"]
    policy = resolve_agent("baseline:duo_ppo", env)
    state = env.init()
    for i in range(4):
        logits, _ = jax.jit(network.apply)(params, env.observe(state))
        want = int(np.argmax(np.asarray(masked_logits(logits, state.legal_action_mask))))
        assert int(policy(jax.random.key(i), state)) == want
        state = env.step(state, want)


def test_export_script_reports_a_missing_run_as_an_error(tmp_path, capsys):
    module = load_script(ROOT / "benchmarks" / "export_baseline.py")
    assert module.main([str(tmp_path / "nowhere"), "x", "--command", "train", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: exporting") and "no checkpoint in" in err and "--resume" not in err
    assert baselines.available(tmp_path) == []


# ------------------------------------------------------------------------------------- hostile files
@pytest.mark.parametrize(
    "which, make, message",
    [
        ("json", lambda p: p.symlink_to("/dev/zero"), "character device, not a regular file"),
        ("json", lambda p: __import__("os").mkfifo(p), "FIFO"),
        ("msgpack", lambda p: p.symlink_to("/dev/zero"), "character device, not a regular file"),
        ("msgpack", lambda p: __import__("os").mkfifo(p), "FIFO"),
        ("json", lambda p: p.write_text("[" * 200_000 + "]" * 200_000), "nested too deeply"),
        ("json", lambda p: p.write_bytes(b'{"name": "\xff"}'), "not UTF-8"),
        ("json", lambda p: p.write_text('{"sims": ' + "1" * 5000 + "}"), "not valid JSON"),
    ],
)
def test_links_to_devices_fifos_and_deep_json_are_refused_without_reading_them(
    env, params, tmp_path, which, make, message
):
    write(params, tmp_path)
    path = tmp_path / f"tiny.{which}"
    path.unlink()
    make(path)
    with pytest.raises(CheckpointError, match=message):
        baselines.load_baseline("tiny", env, tmp_path)
    if which == "json":
        assert baselines.baseline_variant("tiny", tmp_path) is None  # the CLI's variant guess: no hang, no crash


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("sims", 10**12, rf"sims >= 1 and at most {MAX_SIMS:,}"),
        ("sims", -1, "sims >= 0"),
        ("step", 10**40, "not a checkpoint number"),
        ("variant", "nosuch", "names variant 'nosuch', which this version does not know"),
        ("network", {"channels": 10**9, "blocks": 1, "value_hidden": 8}, "at most channels=1,024"),
        ("train_config", {"sims": 2.9}, "train_config' is invalid"),
    ],
)
def test_metadata_values_are_bounded(env, params, tmp_path, field, value, message):
    searching = field == "sims" and value > 0
    write(params, tmp_path, algorithm="alphazero" if searching else "ppo", sims=4 if searching else 0)
    meta = json.loads((tmp_path / "tiny.json").read_text())
    meta[field] = value
    (tmp_path / "tiny.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match=message) as err:
        baselines.load_baseline("tiny", env, tmp_path)
    assert "--variant nosuch" not in str(err.value) and "--resume" not in str(err.value)


def test_non_finite_parameters_with_a_matching_hash_are_refused(env, params, tmp_path):
    poisoned = jax.tree.map(lambda x: np.asarray(x).copy(), params)
    leaf = jax.tree.leaves(poisoned)[0]
    leaf.flat[0] = np.nan
    data = serialization.to_bytes(poisoned)
    write(params, tmp_path)
    (tmp_path / "tiny.msgpack").write_bytes(data)
    meta = json.loads((tmp_path / "tiny.json").read_text())
    meta["sha256"] = __import__("hashlib").sha256(data).hexdigest()  # an attacker who recomputes the hash
    (tmp_path / "tiny.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="non-finite parameters"):
        baselines.load_baseline("tiny", env, tmp_path)


def test_spec_sims_are_bounded(shelf, env):
    with pytest.raises(AgentSpecError, match=f"sims=1000000000 must be between 0 and {MAX_SIMS}"):
        resolve_agent("baseline:tiny,sims=1000000000", env)


def test_export_into_an_unwritable_place_is_a_clear_error(params, tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    with pytest.raises(CheckpointError, match="cannot write baseline 'tiny' into .*choose a writable directory"):
        write(params, blocker / "shelf")
    with pytest.raises(CheckpointError, match="cannot write baseline 'tiny' into"):
        write(params, blocker)
    # a write that fails half-way (a full disk) leaves the old pair as it was: both files are written first
    write(params, tmp_path / "shelf")
    before = {p.name: p.read_bytes() for p in (tmp_path / "shelf").iterdir()}
    real, calls = __import__("os").fsync, []

    def fsync(fd):  # the second file's data does not reach the disk
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real(fd)

    monkeypatch.setattr("os.fsync", fsync)
    with pytest.raises(CheckpointError, match="No space left"):
        write(params, tmp_path / "shelf", notes="new", overwrite=True)
    monkeypatch.setattr("os.fsync", real)
    assert {p.name: p.read_bytes() for p in (tmp_path / "shelf").iterdir()} == before


def test_export_script_reports_an_unwritable_out_without_a_traceback(tmp_path, capsys):
    module = load_script(ROOT / "benchmarks" / "export_baseline.py")
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    assert module.main([str(tmp_path), "x", "--command", "train", "--out", str(blocker)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err
