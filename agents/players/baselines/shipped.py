"""Reading the shipped baselines: their metadata checked field by field, their networks loaded and checked
against it, and the `baseline:NAME` agent built from one (`baseline_policy`). Writing them is `export`."""

from __future__ import annotations

import datetime
import hashlib
import os
import re
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import serialization

import blokus_jax
from blokus_agents.core.messages import brief as _brief
from blokus_agents.core.options import NETWORK_PRIORS, Option, check_budget
from blokus_agents.core.policies import AgentSpecError, ParamPolicy, network_policy
from blokus_agents.players.checkpoint_read import check_finite
from blokus_agents.players.configs import CONFIGS, PPOConfig
from blokus_agents.players.networks import PolicyValueNet, make_network
from blokus_agents.search.mcts import AZ_OPTIONS, az_memory, network_search_policy
from blokus_agents.search.settings import MAX_SIMS, SearchSettings, takes_settings
from blokus_jax.env import Env
from blokus_jax.errors import CheckpointError
from blokus_jax.io import fileio
from blokus_jax.observe import OBS_VERSION

#: The directory of the shipped baselines (this package).
PACKAGE_DIR = Path(__file__).resolve().parent
#: Version of the `.msgpack` + `.json` layout (`_FIELDS` below; docs/design.md).
FORMAT_VERSION = 1
#: Files larger than this are refused before they are read.
MAX_FILE_BYTES = 4 * 1024 * 1024
#: The training algorithms a baseline may come from (those of `blokus_agents.players.configs`).
ALGORITHMS = tuple(CONFIGS)
_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
#: Metadata fields and their types (`int` means a true int, not a bool).
_FIELDS: dict[str, type] = {
    "format_version": int,
    "name": str,
    "variant": str,
    "obs_version": int,
    "algorithm": str,
    "network": dict,
    "sims": int,
    "sha256": str,
    "command": str,
    "source_run": str,
    "step": int,
    "train_config": dict,
    "date": str,
    "notes": str,
}
#: Metadata fields a file may leave out, and the value an absent one means.
_OPTIONAL_FIELDS: dict[str, Any] = {"mix": 0.0}
_NETWORK_FIELDS = ("channels", "blocks", "value_hidden")
#: Optional fields of `network` and the value an absent one means (`make_network`'s `prior`).
_NETWORK_OPTIONAL = {"prior": "none"}

# "baseline:duo", "baseline:duo,sims=128", "baseline:duo,mix=0.5": the az: agent's declared options, sims 0 meaning
# the baseline's own budget and mix defaulting to the baseline's own
BASELINE_OPTIONS = {
    **AZ_OPTIONS,
    "sims": Option(int, 0, MAX_SIMS, doc="0 plays the baseline's own budget"),
    "mix": Option(float, 0.0, 1.0, doc="weight of the playout result in the leaf value; default: the baseline's own"),
}


def baseline_memory(env: Env, options: dict) -> int:
    """`az_memory` with the playouts counted when `mix` is left to the baseline (its
    metadata is not read for an estimate)."""
    return az_memory(env, {**options, "mix": 1.0 if options["mix"] is None else options["mix"]})


def available(directory: str | os.PathLike | None = None) -> list[str]:
    """The names of the baselines in `directory` (default: the shipped ones), sorted: every `NAME` with both a
    `NAME.msgpack` and a `NAME.json`. Listing checks nothing else; `load_baseline` does."""
    root = Path(directory) if directory is not None else PACKAGE_DIR
    if not root.is_dir():
        return []
    return sorted(p.stem for p in root.glob("*.json") if _NAME.fullmatch(p.stem) and p.with_suffix(".msgpack").exists())


def _read_capped(path: Path) -> bytes:
    """The bytes of regular file `path`, at most `MAX_FILE_BYTES` of them (refused before reading when the
    file says it is larger, and never read past the limit when it lies)."""
    return fileio.read_bytes(path, MAX_FILE_BYTES, what="baseline file", error=CheckpointError)


def _read_meta_file(path: Path, name: str) -> Any:
    """The parsed `NAME.json` at `path` (bounded read, nesting at most 8 levels); `CheckpointError` otherwise."""
    return fileio.load_json(
        _read_capped(path), max_depth=8, what=f"baseline {name!r}: its metadata {path.name}", error=CheckpointError
    )


def check_meta(meta: Any, name: str) -> dict:
    """`meta` (parsed `NAME.json`) checked field by field: every field of `_FIELDS` present with its type,
    no others, and valid values. Returns it; raises `CheckpointError` naming the field."""
    where = f"baseline {name!r}"
    if not isinstance(meta, dict):
        raise CheckpointError(f"{where}: its metadata is a JSON {type(meta).__name__}, not an object")
    missing = sorted(set(_FIELDS) - set(meta))
    extra = sorted(set(meta) - set(_FIELDS) - set(_OPTIONAL_FIELDS))
    if missing or extra:
        raise CheckpointError(f"{where}: its metadata has missing fields {missing} and unknown fields {extra}")
    for key, kind in _FIELDS.items():
        value = meta[key]
        if type(value) is not kind:
            raise CheckpointError(f"{where}: metadata field {key!r} is {_brief(value)}, not a {kind.__name__}")
    if meta["format_version"] != FORMAT_VERSION:
        raise CheckpointError(
            f"{where} has format {meta['format_version']}, this version reads format {FORMAT_VERSION}; "
            f"use a matching blokus-jax version"
        )
    if meta["name"] != name:
        raise CheckpointError(f"{where}: its metadata names it {_brief(meta['name'])}; the files were renamed")
    if meta["algorithm"] not in ALGORITHMS:
        raise CheckpointError(f"{where}: algorithm {_brief(meta['algorithm'])} is not one of {list(ALGORITHMS)}")
    if meta["variant"] not in blokus_jax.VARIANTS:
        raise CheckpointError(
            f"{where}: its metadata names variant {_brief(meta['variant'])}, which this version does not know "
            f"(known: {sorted(blokus_jax.VARIANTS)}); the file is corrupt or from another version"
        )
    network = meta["network"]
    limits = {name: (option.low, option.high) for name, option in PPOConfig.options().items()}
    sizes = {k: v for k, v in network.items() if k not in _NETWORK_OPTIONAL}
    if sorted(sizes) != sorted(_NETWORK_FIELDS) or not all(
        type(network[k]) is int and max(1, limits[k][0]) <= network[k] <= limits[k][1] for k in _NETWORK_FIELDS
    ):
        raise CheckpointError(
            f"{where}: metadata field 'network' is {_brief(network)}; it needs positive ints {list(_NETWORK_FIELDS)} "
            f"(at most {', '.join(f'{k}={limits[k][1]:,}' for k in _NETWORK_FIELDS)}) and may say 'prior'"
        )
    if network.get("prior", "none") not in NETWORK_PRIORS:
        raise CheckpointError(
            f"{where}: metadata field 'network' has prior {_brief(network['prior'])}; use one of {list(NETWORK_PRIORS)}"
        )
    low = 1 if meta["algorithm"] == "alphazero" else 0
    if not low <= meta["sims"] <= MAX_SIMS:
        raise CheckpointError(
            f"{where}: metadata field 'sims' is {_brief(meta['sims'])}; a {meta['algorithm']} baseline needs "
            f"sims >= {low} and at most {MAX_SIMS:,} (its default search budget)"
        )
    mix = meta.get("mix", _OPTIONAL_FIELDS["mix"])
    if type(mix) not in (int, float) or not 0 <= mix <= 1:
        raise CheckpointError(
            f"{where}: metadata field 'mix' is {_brief(mix)}; it needs a number from 0 to 1 (the weight of playout "
            f"results in the leaf values)"
        )
    if mix and meta["sims"] == 0:
        raise CheckpointError(
            f"{where}: metadata field 'mix' is {mix}, but the baseline plays its network without search (sims 0), "
            f"so it has no leaf values to mix playouts into"
        )
    meta = {**meta, "mix": float(mix)}  # the caller's dict stays as it was
    if not 0 <= meta["step"] < 2**31:
        raise CheckpointError(f"{where}: metadata field 'step' is {_brief(meta['step'])}, not a checkpoint number")
    if meta["train_config"]:
        try:
            CONFIGS[meta["algorithm"]].from_dict(meta["train_config"])
        except CheckpointError as exc:
            raise CheckpointError(f"{where}: metadata field 'train_config' is invalid: {exc}") from None
    if not re.fullmatch(r"[0-9a-f]{64}", meta["sha256"]):
        raise CheckpointError(f"{where}: metadata field 'sha256' is {_brief(meta['sha256'])}, not a sha256 hex digest")
    try:
        datetime.date.fromisoformat(meta["date"])
    except ValueError:
        raise CheckpointError(f"{where}: metadata field 'date' is {_brief(meta['date'])}, not an ISO date") from None
    return meta


def _network_for(env: Env, meta: dict) -> tuple[PolicyValueNet, Any]:
    """The network `meta` describes for `env` and the abstract (shape/dtype) tree of its params."""
    net = meta["network"]
    value_dim = CONFIGS[meta["algorithm"]].value_dim(env.num_players)  # the value size its algorithm trains
    network = make_network(
        env, net["channels"], net["blocks"], net["value_hidden"], value_dim=value_dim, prior=net.get("prior", "none")
    )
    obs = jax.eval_shape(env.observe, env.init())
    abstract = jax.eval_shape(lambda o: network.init(jax.random.key(0), o), obs)
    return network, abstract


def _check_params(name: str, raw: Any, abstract: Any) -> Any:
    """`raw` (as `flax.serialization.msgpack_restore` returns it) as device arrays, after checking that its
    tree, shapes and dtypes are those of `abstract`."""
    where = f"baseline {name!r}"
    leaves, treedef = jax.tree_util.tree_flatten(raw)
    want_leaves, want_treedef = jax.tree_util.tree_flatten(abstract)
    if treedef != want_treedef:
        raise CheckpointError(f"{where}: its parameters do not have the layout of the network its metadata describes")
    for path, leaf, want in zip(jax.tree_util.tree_flatten_with_path(abstract)[0], leaves, want_leaves):
        shown = jax.tree_util.keystr(path[0])
        if not isinstance(leaf, np.ndarray) or leaf.shape != want.shape or leaf.dtype != want.dtype:
            got = f"{leaf.dtype}{list(leaf.shape)}" if isinstance(leaf, np.ndarray) else type(leaf).__name__
            raise CheckpointError(f"{where}: parameter {shown} is {got}, expected {want.dtype}{list(want.shape)}")
    check_finite(raw, where)
    return jax.tree_util.tree_unflatten(treedef, [jnp.asarray(leaf) for leaf in leaves])


def load_baseline(name: str, env: Env, directory: str | os.PathLike | None = None) -> tuple[PolicyValueNet, Any, dict]:
    """`(network, params, meta)` of baseline `name` from `directory` (default: the shipped ones), built for `env`.

    Args:
        name: The baseline's name (`NAME.msgpack` and `NAME.json`).
        env: The environment to build the network for; the baseline must play its variant.
        directory: The folder holding the baseline; default the shipped ones.

    Returns:
        `(network, params, meta)`: the `PolicyValueNet`, its parameters and the checked metadata.

    Raises:
        AgentSpecError: A name that is not there (listing those that are).
        CheckpointError: Another variant (saying which `--variant` to use), another observation layout, a file over
            `MAX_FILE_BYTES`, bad metadata, a hash mismatch or parameters of the wrong shape.
    """
    root = Path(directory) if directory is not None else PACKAGE_DIR
    names = available(root)
    if name not in names:
        raise AgentSpecError(f"unknown baseline {name!r}; the available baselines are {names}")
    where = f"baseline {name!r}"
    meta = check_meta(_read_meta_file(root / f"{name}.json", name), name)
    if meta["variant"] != env.variant.name:
        raise CheckpointError(
            f"{where} plays variant {meta['variant']!r}, not {env.variant.name!r}; use --variant {meta['variant']}"
        )
    if meta["obs_version"] != OBS_VERSION:
        raise CheckpointError(
            f"{where} was trained on observation layout {meta['obs_version']}, this version produces layout "
            f"{OBS_VERSION}; use a matching blokus-jax version"
        )
    data = _read_capped(root / f"{name}.msgpack")
    if hashlib.sha256(data).hexdigest() != meta["sha256"]:
        raise CheckpointError(
            f"{where} is corrupt: the sha256 of {name}.msgpack does not match its metadata; reinstall blokus-jax"
        )
    try:
        raw = serialization.msgpack_restore(data)
    except Exception as exc:  # msgpack raises several types for malformed data
        raise CheckpointError(f"{where} is corrupt: {name}.msgpack is not a msgpack parameter tree ({exc})") from exc
    network, abstract = _network_for(env, meta)
    return network, _check_params(name, raw, abstract), meta


@takes_settings(SearchSettings(), sims=0, mix=None)
def baseline_policy(env: Env, target: str, **settings: Any) -> ParamPolicy:
    """The agent `baseline:NAME` (`baseline:duo`, `baseline:duo,sims=128`): shipped baseline `NAME` (see
    `load_baseline`) as a `ParamPolicy`.

    `sims=0` plays the baseline as it was published: an `alphazero` baseline with `network_search_policy` and its
    metadata's `sims`, a `ppo` baseline (`sims` 0 in its metadata) with the argmax of its masked policy.

    Args:
        env: The environment; its variant must be the baseline's.
        target: The baseline's name (`"duo"`).
        **settings: Every search setting (`SETTING_NAMES`), each with its default and range as `SearchSettings`
            declares it (used only when the baseline searches), except two: `sims` is 0 (the baseline's own
            budget) or `N > 0`, to play either kind with a search of `N` simulations guided by its network (like
            `az:RUN_DIR`); `mix` is `None` (the baseline's own `mix` from its metadata) or the weight of the
            playout results in the leaf values (as for `az:RUN_DIR,mix=L`). `seconds=S > 0` searches with a time
            budget of `S` seconds a move (`baseline:duo,seconds=2`; calibrated on this machine, as for `mcts`);
            it cannot be given with `sims`. `prior="model"` ranks the search's candidates by the fitted move
            model's scores over the network's logits (`blokus_agents.search.move_model`).

    Returns:
        The policy, a `ParamPolicy` carrying the network's parameters.

    Raises:
        AgentSpecError: `sims` out of `[0, MAX_SIMS]`, `sims` and `seconds` both given, or no such baseline.
        CheckpointError: The baseline cannot be loaded for `env` (see `load_baseline`).
        ValueError: `seconds` is neither 0 nor from `MIN_SECONDS` to `MAX_SECONDS`.
    """
    sims, seconds = settings["sims"], settings["seconds"]
    check_budget({"seconds": seconds})
    if not 0 <= sims <= MAX_SIMS:
        raise AgentSpecError(
            f"sims={sims}: give 0 (the baseline's own budget) or a number of simulations from 1 to {MAX_SIMS:,}"
        )
    if sims and seconds:
        raise AgentSpecError(
            f"baseline:{target}: give a budget either in simulations (sims={sims}) or in time (seconds={seconds}), "
            f"not both"
        )
    network, params, meta = load_baseline(target, env)
    budget = sims or meta["sims"]
    mix = meta["mix"] if settings["mix"] is None else settings["mix"]
    if budget == 0 and not seconds:
        return network_policy(env, network, params, greedy=True)
    search = SearchSettings(**{**settings, "sims": budget, "mix": mix})
    return network_search_policy(env, network.apply, params, search)


def baseline_variant(name: str, directory: str | os.PathLike | None = None) -> str | None:
    """The variant of baseline `name` from its metadata alone (the CLI's default `--variant` for
    `baseline:NAME`), or `None` when there is no such baseline or its metadata is unreadable."""
    root = Path(directory) if directory is not None else PACKAGE_DIR
    if name not in available(root):
        return None
    try:
        return check_meta(_read_meta_file(root / f"{name}.json", name), name)["variant"]
    except CheckpointError:
        return None


def baseline_source(name: str, directory: str | os.PathLike | None = None) -> tuple[Any, Any]:
    """`(config, params)` of baseline `name`: the training config it was exported with (its algorithm, variant
    and network size) and its checked parameters, to start a new run from (`blokus-jax train --init-from
    baseline:NAME`). Raises `CheckpointError` for a name that is not there (listing those
    that are), a baseline exported without its training config, and whatever `load_baseline` refuses."""
    root = Path(directory) if directory is not None else PACKAGE_DIR
    names = available(root)
    if name not in names:
        raise CheckpointError(f"--init-from baseline:{name}: there is no baseline {name!r}; the baselines are {names}")
    meta = check_meta(_read_meta_file(root / f"{name}.json", name), name)
    if not meta["train_config"]:
        raise CheckpointError(
            f"--init-from baseline:{name}: its metadata has no training config to take the network's size from; "
            f"start from its run directory instead"
        )
    _, params, meta = load_baseline(name, blokus_jax.make(meta["variant"]), root)
    return CONFIGS[meta["algorithm"]].from_dict(meta["train_config"]), params
