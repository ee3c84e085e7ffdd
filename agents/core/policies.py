"""Policy types and the one resolver of agent specs, used by the CLI, the arena from Python and the adapters.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import inspect
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp

from blokus_agents.core.masking import masked_logits, sample_masked
from blokus_agents.core.messages import gib
from blokus_agents.core.options import Option, check_budget, default_check, machine_memory
from blokus_jax import _extras
from blokus_jax.env import Env, State
from blokus_jax.errors import BlokusError, CheckpointError

#: A policy: a pure function from a PRNG key and one (unbatched) state to an `int32` action.
Policy = Callable[[jax.Array, State], jax.Array]
#: `factory(env, **options) -> Policy`: how a registered agent is built.
AgentFactory = Callable[..., Policy]


class AgentSpecError(BlokusError, ValueError):
    """An agent spec that names no agent, or options that its agent does not take."""


@dataclass(frozen=True, eq=False)
class ParamPolicy:
    """A policy split into a static function `fn(params, key, state) -> action` and its `params` (e.g. network
    weights). Callable like any policy (and `jax.jit`-able); the arena passes `params` into its compiled match as
    an argument, so new params (a network during training) reuse the compiled match instead of recompiling it.

    Attributes:
        fn: `fn(params, key, state) -> int32` for one unbatched state; static (hashable) so compilations are shared.
        params: The parameters `fn` is called with (any pytree).
        timed: `fn`'s form for play one game at a time where that differs (`one_game`): a time-budgeted search
            that stops its simulations on the clock. `None`: `fn` plays everywhere.
    """

    fn: Callable[[Any, jax.Array, State], jax.Array]
    params: Any
    timed: Callable[[Any, jax.Array, State], jax.Array] | None = None

    def __call__(self, key: jax.Array, state: State) -> jax.Array:
        # outside any `jit`, a search runs as one compiled program (`fn` jitted once) instead of operation by
        # operation (3-4x slower for a network's search); inside a user's `jit` or `vmap`, `fn` is traced there
        args = (self.params, key, state)
        if any(isinstance(leaf, jax.core.Tracer) for leaf in jax.tree.leaves(args)):
            return self.fn(*args)
        return _jitted(self.fn)(*args)


def one_game(policy: Policy) -> Policy:
    """The form of `policy` to play one game at a time (a match against an outside engine, GTP, `play`): for a
    time-budgeted search (`seconds=S`), the search that checks the clock while it runs and stops once its budget
    is spent, so that it uses the time each position allows; else `policy` itself. Batched play (the arena) keeps
    `policy`, whose calibrated simulations do not depend on the clock.

    Args:
        policy: Any policy.

    Returns:
        The policy to `jax.jit` and call on one unbatched state at a time.
    """
    if isinstance(policy, ParamPolicy) and policy.timed is not None:
        return ParamPolicy(policy.timed, policy.params)
    return policy


@functools.lru_cache(maxsize=64)
def _jitted(fn: Callable[[Any, jax.Array, State], jax.Array]) -> Callable[[Any, jax.Array, State], jax.Array]:
    """`jax.jit(fn)`, one per policy function (they are static and hashable, so policies that share a function
    share its compilation)."""
    return jax.jit(fn)


def network_policy(env: Env, network: Any, params: Any, greedy: bool = True) -> ParamPolicy:
    """The policy of a network: the argmax of its masked logits, or a masked sample. The action is always legal.

    Args:
        env: The environment.
        network: A flax module whose `apply(params, observation)` returns `(logits, value)`.
        params: Its parameters.
        greedy: Play the argmax; `False` samples from the masked softmax.

    Returns:
        A `ParamPolicy` for one unbatched state, so evaluating new params reuses the arena's compiled match.
    """
    return ParamPolicy(_network_policy_fn(env, network, greedy), params)


@functools.lru_cache(maxsize=32)
def _network_policy_fn(env: Env, network: Any, greedy: bool):
    def policy(params: Any, key: jax.Array, state: State) -> jax.Array:
        logits, _ = network.apply(params, env.observe(state))
        mask = state.legal_action_mask
        if greedy:
            return jnp.argmax(masked_logits(logits, mask)).astype(jnp.int32)
        return sample_masked(key, logits, mask)[0]

    return policy


# ------------------------------------------------------------------------------------------------------ registry
@dataclass(frozen=True)
class _Declared:
    """What a registration declares beside its factory: the options (see `blokus_agents.core.options`) and the
    memory estimate."""

    options: dict[str, Option]
    memory: Callable[[Env, dict[str, Any]], int] | None


_AGENTS: dict[str, AgentFactory] = {}
_PREFIXES: dict[str, Callable[..., Policy]] = {}
#: The declarations of the factories in `_AGENTS` and `_PREFIXES`, keyed on the factory itself.
_DECLARED: dict[Callable, _Declared] = {}
_RUN_KINDS: dict[str, Callable[..., Policy]] = {}
#: The module that registers the built-in agents. The registry imports it on its first use (any lookup or
#: registration), so that importing the package or parsing a command line loads no agent, and this layer needs no
#: import of the layers above it.
BUILTINS = "blokus_agents.players.catalog"
_BUILTINS_LOADED: list[bool] = []
#: Prefixes that are part of the spec language but whose implementation may be missing (registered by
#: `BUILTINS`).
_RESERVED = {
    "az": "an AlphaZero run played with search ('az:RUN_DIR,sims=N'), registered by blokus_agents.players.catalog",
    "baseline": "a shipped baseline agent ('baseline:NAME'), registered by blokus_agents.players.catalog",
}


def load_builtins() -> None:
    """Register the built-in agents (import `BUILTINS`) unless that was done; every lookup and registration of the
    registry calls this first. If the import raises, the registry is put back as it was (nothing half-registered),
    so that the next lookup tries again and shows the same error (the import's own exception)."""
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED.append(True)  # set first: the catalog registers through this module while it loads
    saved = [(table, dict(table)) for table in (_AGENTS, _PREFIXES, _DECLARED, _RUN_KINDS)], list(_RUN_READER)
    try:
        importlib.import_module(BUILTINS)
    except BaseException:
        for table, before in saved[0]:
            table.clear()
            table.update(before)
        _RUN_READER[:] = saved[1]
        _BUILTINS_LOADED.clear()
        raise


def register_agent(
    name: str,
    factory: AgentFactory,
    *,
    replace: bool = False,
    options: dict[str, Option] | None = None,
    memory: Callable[[Env, dict[str, Any]], int] | None = None,
) -> None:
    """Make `name` (optionally `name:key=value,...`) resolve to `factory(env, **options)`.

    A spec's options are checked against their declarations before `factory` runs, and a spec whose memory
    estimate is over this machine's memory is refused.

    Args:
        name: The agent's name in specs: a plain identifier.
        factory: `factory(env, **options) -> Policy`; its keyword parameters are the spec's options.
        replace: Replace an agent already registered under `name` instead of raising.
        options: The type and range of each option (`Option`), keyed by parameter name.
        memory: `memory(env, options) -> bytes`, what one game of the agent needs with the given options
            (defaults filled in); `None` for no estimate.

    Raises:
        ValueError: `name` is not an identifier or is taken (unless `replace`), or `options` declares a parameter
            `factory` does not take or is not an `Option` of kind int, float, bool or str.
    """
    load_builtins()
    declared = _declare(name, factory, options, memory, skip=1)
    _register(_AGENTS, name, factory, replace)
    _remember(factory, declared)


def register_prefix(
    prefix: str,
    factory: Callable[..., Policy],
    *,
    replace: bool = False,
    options: dict[str, Option] | None = None,
    memory: Callable[[Env, dict[str, Any]], int] | None = None,
) -> None:
    """Make `prefix:TARGET[,key=value,...]` resolve to `factory(env, target, **options)` (e.g. `az:`
    followed by a run directory). A reserved prefix (`az`, `baseline`) may be registered once.

    Args:
        prefix: The prefix in specs, without the colon: a plain identifier.
        factory: `factory(env, target, **options) -> Policy`.
        replace: Replace a prefix already registered instead of raising.
        options: The type and range of each option, as in `register_agent`.
        memory: The memory estimate, as in `register_agent`.

    Raises:
        ValueError: `prefix` is not an identifier or is taken (unless `replace`), or `options` does not match
            `factory`'s parameters.
    """
    load_builtins()
    declared = _declare(prefix, factory, options, memory, skip=2)
    _register(_PREFIXES, prefix, factory, replace)
    _remember(factory, declared)


def register_run_kind(algorithm: str, loader: Callable[..., Policy], *, replace: bool = False) -> None:
    """Make a run directory whose checkpoint metadata says `"algorithm": algorithm` resolve to
    `loader(run_dir, env, **options)`.

    Args:
        algorithm: The algorithm name in the checkpoint metadata: a plain identifier.
        loader: `loader(run_dir, env, **options) -> Policy`.
        replace: Replace a loader already registered for `algorithm` instead of raising.

    Raises:
        ValueError: `algorithm` is not an identifier or is taken (unless `replace`).
    """
    load_builtins()
    _register(_RUN_KINDS, algorithm, loader, replace)


def _remember(factory: Callable, declared: _Declared) -> None:
    try:
        _DECLARED[factory] = declared
    except TypeError:  # an unhashable callable keeps no declarations
        pass


def _declare(name: str, factory: Callable, options: dict | None, memory: Callable | None, skip: int) -> _Declared:
    declared = dict(options or {})
    params = _parameters(factory, skip)[0]
    unknown = sorted(set(declared) - set(params))
    if unknown:
        raise ValueError(f"{name!r} declares options {unknown} that its factory does not take")
    for key, option in declared.items():
        if not isinstance(option, Option) or option.kind not in _TYPES.values():
            raise ValueError(f"option {key!r} of {name!r} must be an Option of kind int, float, bool or str")
    return _Declared(declared, memory)


def _register(table: dict, name: str, factory: Any, replace: bool) -> None:
    if not name.isidentifier():
        raise ValueError(f"agent name {name!r} must be an identifier (letters, digits, '_')")
    if name in table and not replace:
        raise ValueError(f"{name!r} is already registered; pass replace=True to override it")
    table[name] = factory


def agent_names() -> list[str]:
    """The registered agent names (without options), sorted."""
    load_builtins()
    return sorted(_AGENTS)


# ------------------------------------------------------------------------------------------------------ resolver
def resolve_agent(spec: str, env: Env) -> Policy:
    """The policy named by agent `spec` for `env` (see the module docstring for the spec language).

    Every option is checked against its declaration (type and range, see `blokus_agents.options`) and the
    agent's memory estimate against this machine before anything is built. A bot name that is also a directory
    here plays the bot (with a warning; write `./NAME` for the directory).

    Args:
        spec: An agent spec: `"greedy"`, `"mcts:sims=64"`, `"baseline:duo"`, `"az:runs/duo"` or a run
            directory.
        env: The environment the agent will play.

    Returns:
        A `Policy`: a `(key, state) -> action` function, or a `ParamPolicy` carrying its parameters.

    Raises:
        AgentSpecError: An empty spec, an unknown name or prefix, a missing run directory, a malformed option,
            one the agent does not take, one out of range, or a memory estimate over this machine's.
        CheckpointError: A run directory whose checkpoint is missing, corrupt or for another variant.
    """
    return _resolve(spec, env, build=True)  # type: ignore[return-value] (a policy when built)


def check_agent(spec: str, env: Env) -> None:
    """Check agent `spec` for `env` as `resolve_agent` would (the name, each option's type and range, the
    search budget rule, the memory estimate) without building it: for an agent built later (`play`'s hint bot,
    whose time budget is calibrated at the first hint), so that a bad spec is refused at once. A run directory is
    only checked to exist.

    Args:
        spec: The agent spec.
        env: The environment the agent will play.

    Raises:
        AgentSpecError: What `resolve_agent` would raise for the spec, but for a run directory's checkpoint.
    """
    _resolve(spec, env, build=False)


def _resolve(spec: str, env: Env, build: bool) -> Policy | None:
    """`resolve_agent` (`build`) or `check_agent` (not `build`: `None` once the spec is checked)."""
    load_builtins()
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(
            f"agent spec {spec!r} is empty; give an agent name from {agent_names()} or a run directory"
        )
    name, colon, rest = spec.partition(":")
    if name in _AGENTS:
        if os.path.isdir(spec):
            warnings.warn(
                f"agent {spec!r} is the registered agent {name!r}, not the directory of that name here; write "
                f"{os.path.join('.', spec)!r} (an explicit path) to play that run directory",
                UserWarning,
                stacklevel=3,
            )
        options = _parse_options(spec, rest) if colon else {}
        return _build(spec, name, _AGENTS[name], _declared(_AGENTS[name]), env, options, build=build)
    if colon and (name in _PREFIXES or name in _RESERVED):
        if name not in _PREFIXES:
            raise AgentSpecError(
                f"agent {spec!r}: '{name}:' ({_RESERVED[name]}) is not registered; register it with "
                f"register_prefix({name!r}, ...), or use an agent from {agent_names()} or a run directory"
            )
        target, option_text = split_target(spec)
        options = _parse_options(spec, option_text) if option_text is not None else {}
        return _build(spec, name, _PREFIXES[name], _declared(_PREFIXES[name]), env, options, target, build=build)
    if os.path.isdir(spec):
        return load_run(spec, env) if build else None
    if os.path.sep in spec or spec.startswith("."):
        raise AgentSpecError(
            f"agent {spec!r}: no such run directory; check the path (a run directory is the "
            f"--out of 'blokus-jax train')"
        )
    known = agent_names() + [f"{p}:..." for p in sorted(set(_PREFIXES) | set(_RESERVED))]
    guess = did_you_mean(name, agent_names() + [f"{p}:" for p in sorted(_PREFIXES)])
    raise AgentSpecError(f"unknown agent {spec!r}{guess}; give an agent from {known} or a run directory")


def did_you_mean(word: str, choices: Any) -> str:
    """`" (did you mean 'greedy'?)"` naming the choice nearest to a mistyped `word` (`difflib`), or `""`
    when none is close."""
    close = difflib.get_close_matches(word.lower(), [str(c) for c in choices], n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def split_target(spec: str) -> tuple[str, str | None]:
    """`(target, option text or None)` of a prefix spec `prefix:TARGET[,key=value,...]`. A target that
    contains a comma (a run directory `runs/a,b`) is written in double quotes: `az:"runs/a,b",sims=8`; an
    unquoted one ends at the first comma. Raises `AgentSpecError` for an empty or unterminated target."""
    name, _, rest = spec.partition(":")
    if rest.startswith('"'):
        close = rest.find('"', 1)
        if close < 0:
            raise AgentSpecError(f'agent {spec!r}: the quoted target has no closing \'"\'; write {name}:"TARGET",...')
        target, after = rest[1:close], rest[close + 1 :]
        if after and not after.startswith(","):
            raise AgentSpecError(
                f"agent {spec!r}: after the quoted target comes ',key=value,...' or nothing, not {after!r}"
            )
        option_text = after[1:] if after else None
    else:
        target, comma, option_text = rest.partition(",")
        option_text = option_text if comma else None
        if option_text is not None and os.path.isdir(rest) and "=" not in option_text.partition(",")[0]:
            raise AgentSpecError(
                f"agent {spec!r}: the directory {rest!r} contains a comma, which separates options; quote the "
                f'target: {name}:"{rest}"'
            )
    if not target:
        raise AgentSpecError(f"agent {spec!r} names no target; write {name}:TARGET[,key=value,...]")
    return target, option_text


def spec_paths(spec: str) -> list[str]:
    """The run directories an agent spec reads (a run directory itself, the target of `az:`), existing or not;
    empty for a registered agent or a shipped baseline. Used to key caches on the checkpoint, see
    `spec_identity`."""
    load_builtins()
    name, colon, _ = spec.partition(":")
    if name in _AGENTS:
        return []
    if colon and (name in _PREFIXES or name in _RESERVED):
        try:
            target = split_target(spec)[0]
        except AgentSpecError:
            return []
        return [target] if name != "baseline" else []
    return [spec]


def spec_identity(spec: str) -> tuple:
    """A hashable identity of what `spec` would load now: for each run directory it reads (`spec_paths`),
    its absolute path and the names and modification times of its checkpoint folders. Equal identities load the
    same parameters, so a cache keyed on `(spec, spec_identity(spec))` reloads a run that was retrained."""
    identity = []
    for path in spec_paths(spec):
        root = os.path.join(path, "checkpoints")
        try:
            entries = tuple(sorted((e.name, e.stat().st_mtime_ns) for e in os.scandir(root)))
        except OSError:
            entries = ()
        identity.append((os.path.abspath(path), entries))
    return tuple(identity)


def _parse_options(spec: str, text: str) -> dict[str, str]:
    options = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise AgentSpecError(
                f"bad option {item!r} in agent spec {spec!r}; write options as name:key=value,key=value"
            )
        if key in options:
            raise AgentSpecError(f"option {key!r} given twice in agent spec {spec!r}")
        options[key] = value
    return options


_TYPES = {"int": int, "float": float, "bool": bool, "str": str}


def _parameters(factory: Callable, skip: int) -> tuple[dict[str, inspect.Parameter], bool]:
    """The keyword parameters of `factory` after its first `skip` (env, target), and whether it takes
    `**kwargs`."""
    signature = list(inspect.signature(factory).parameters.values())[skip:]
    params = {p.name: p for p in signature if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return params, any(p.kind is p.VAR_KEYWORD for p in signature)


def _declared(factory: Callable) -> _Declared:
    """The declaration registered with `factory`; none (types from the defaults, no ranges) for a factory placed in
    the tables directly."""
    try:
        return _DECLARED.get(factory, _Declared({}, None))
    except TypeError:  # an unhashable callable
        return _Declared({}, None)


def _typed_options(
    spec: str, name: str, factory: Callable, entry: _Declared, env: Env, options: dict[str, str], targets: int = 0
) -> dict[str, Any]:
    """The `options` of `spec` converted to their declared types (else the type of the factory's default) and
    checked against their declared ranges; raises `AgentSpecError` naming the first bad one."""
    params, open_ended = _parameters(factory, 1 + targets)
    described = ", ".join(f"{k}={p.default!r}" for k, p in params.items()) or "none"
    typed = {}
    for key, text in options.items():
        if key not in params and open_ended:
            typed[key] = text
            continue
        if key not in params:
            raise AgentSpecError(
                f"bad options for agent {name!r} in {spec!r}: unknown option {key!r}{did_you_mean(key, params)}; "
                f"its options are: {described}"
            )
        option = entry.options.get(key)
        value = _convert(spec, key, text, params[key], option)
        problem = option.check(value, env) if option is not None else None
        problem = problem or default_check(type(value), value)
        if problem is not None:
            doc = f" ({option.doc})" if option is not None and option.doc else ""
            raise AgentSpecError(f"bad options for agent {name!r} in {spec!r}: option {key}={text} {problem}{doc}")
        typed[key] = value
    return typed


def agent_options(spec: str, env: Env) -> tuple[str, dict[str, Any]]:
    """`(name, options)` of the spec of a registered agent (`mcts:sims=64,playouts=4` -> `("mcts", {"sims":
    64, "playouts": 4})`), each option typed and range-checked as `resolve_agent` would, nothing built: for
    settings that name an agent without playing it (the AlphaZero trainer's `teacher`). Raises
    `AgentSpecError` for an unknown agent (prefixes and run directories have no options to read) or a bad
    option."""
    load_builtins()
    if not isinstance(spec, str) or not spec.strip():
        raise AgentSpecError(f"agent spec {spec!r} is empty; give an agent name from {agent_names()}")
    name, colon, rest = spec.partition(":")
    if name not in _AGENTS:
        raise AgentSpecError(
            f"{spec!r} is not a registered agent{did_you_mean(name, agent_names())}; give one of {agent_names()} "
            f"with its options"
        )
    options = _parse_options(spec, rest) if colon else {}
    factory = _AGENTS[name]
    return name, _typed_options(spec, name, factory, _declared(factory), env, options)


def _build(
    spec: str,
    name: str,
    factory: Callable,
    entry: _Declared,
    env: Env,
    options: dict[str, str],
    *target: str,
    build: bool = True,
) -> Policy | None:
    """`factory(env, *target, **typed options)`, each option converted to its declared type (else the type of the
    factory's default) and checked against its declared range, and the memory estimate checked, first (only those
    checks, returning `None`, when not `build`)."""
    params, _ = _parameters(factory, 1 + len(target))
    typed = _typed_options(spec, name, factory, entry, env, options, len(target))
    try:
        check_budget(typed)  # every search agent's one rule for seconds= and sims=
    except ValueError as exc:
        raise AgentSpecError(f"agent {spec!r}: {exc}") from None
    if entry.memory is not None:
        defaults = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
        need = int(entry.memory(env, {**defaults, **typed}))
        have, what = machine_memory()
        if need > have:
            given = ", ".join(f"{k}={v}" for k, v in typed.items()) or "its default options"
            raise AgentSpecError(
                f"agent {spec!r}: {given} would need about {gib(need)} for one game (an estimate), more than "
                f"{what} ({gib(have)}); lower {', '.join(typed) or 'the budget'}"
            )
    if not build:
        return None
    try:
        return factory(env, *target, **typed)
    except (BlokusError, ValueError, TypeError) as exc:
        if isinstance(exc, (CheckpointError, AgentSpecError)):
            raise
        raise AgentSpecError(f"bad options for agent {name!r} in {spec!r}: {exc}") from exc


def _convert(spec: str, key: str, text: str, param: inspect.Parameter, option: Option | None = None) -> Any:
    kind = option.kind if option is not None else None
    if kind is None and param.default is not inspect.Parameter.empty:
        kind = type(param.default)
    if kind is None or kind not in _TYPES.values():
        kind = _TYPES.get(str(param.annotation).split("|")[0].strip(), str)
    try:
        if kind is bool:
            lowered = text.lower()
            if lowered not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(text)
            return lowered in ("true", "1", "yes")
        if kind is int:
            return int(text)
        if kind is float:
            value = float(text)
            if value != value or value in (float("inf"), float("-inf")):
                raise ValueError(text)
            return value
        return text
    except ValueError:
        raise AgentSpecError(
            f"bad options in agent spec {spec!r}: option {key}={text!r} must be "
            f"{'a finite number' if kind is float else 'an ' + kind.__name__}"
        ) from None


# ------------------------------------------------------------------------------------------------ run directories
@dataclass(frozen=True)
class RunReader:
    """How run directories are read (installed by `blokus_agents.players.catalog` from
    `blokus_agents.players.checkpoint_read`):
    `require(run_dir, spec)` raises `AgentSpecError` unless the run has a checkpoint, `read_meta(run_dir)`
    returns the newest checkpoint's metadata, `load_network(run_dir, env) -> (network, params)`."""

    require: Callable[..., int]
    read_meta: Callable[..., dict]
    load_network: Callable[..., tuple[Any, Any]]

    @classmethod
    def named(cls, require: str, read_meta: str, load_network: str) -> RunReader:
        """A reader whose functions are given as `"module:function"` and imported at their first call, so that
        registering it loads none of the checkpoint code (which sits in a higher layer, `blokus_agents.training`).

        Args:
            require: Where the `require` function is (`"package.module:function"`).
            read_meta: Where the `read_meta` function is.
            load_network: Where the `load_network` function is.

        Returns:
            The reader.
        """
        return cls(late_bound(require), late_bound(read_meta), late_bound(load_network))


def late_bound(reference: str) -> Callable[..., Any]:
    """A function given as `"module:function"`, imported at its first call: how a lower layer's registry names a
    function of a higher layer without importing it (the layering test checks that each such name exists).

    Args:
        reference: The module's dotted name and the function's name, joined by a colon.

    Returns:
        A function that passes its arguments on to the referenced one.
    """
    module, _, name = reference.partition(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"`{reference}`, imported at the first call."
    return call


_RUN_READER: list[RunReader] = []


def register_run_reader(reader: RunReader) -> None:
    """Install how run directories are read (one reader; a second call replaces the first)."""
    load_builtins()
    _RUN_READER[:] = [reader]


def _reader(run_dir: str | os.PathLike) -> RunReader:
    _extras.require("train", f"loading the run directory {str(run_dir)!r}", ("orbax.checkpoint",))
    load_builtins()
    if not _RUN_READER:
        raise AgentSpecError(
            f"run directory {str(run_dir)!r}: no checkpoint reader is registered; install one with "
            f"register_run_reader (the catalog {BUILTINS} does)"
        )
    return _RUN_READER[0]


def require_agent_run(run_dir: str | os.PathLike, spec: str | None = None) -> int:
    """The newest update of `run_dir` given as an agent (`spec`, e.g. `"az:runs/duo"`; default the path); an
    `AgentSpecError` when it has no checkpoint."""
    return _reader(run_dir).require(run_dir, spec)


def load_run(run_dir: str | os.PathLike, env: Env, **options: Any) -> Policy:
    """The policy of the newest checkpoint in a run directory, dispatched on the run's algorithm (see
    `register_run_kind`).

    Args:
        run_dir: The `--out` of `blokus-jax train`.
        env: The environment; its variant must be the run's.
        **options: Options of the run's kind (e.g. `sims=64` for an AlphaZero run).

    Returns:
        The run's policy.

    Raises:
        AgentSpecError: The directory has no checkpoint, or no checkpoint reader is registered.
        CheckpointError: The checkpoint is corrupt, for another variant, or of an algorithm this version cannot
            play.
        MissingExtraError: The `train` extra (orbax) that reads checkpoints is not installed.
    """
    reader = _reader(run_dir)
    reader.require(run_dir, None)  # an AgentSpecError saying what a run directory agent needs
    algorithm = reader.read_meta(run_dir).get("algorithm", "ppo")
    if algorithm not in _RUN_KINDS:
        raise CheckpointError(
            f"{str(run_dir)!r} is a {algorithm!r} run, which this version cannot play; "
            f"known kinds: {sorted(_RUN_KINDS)}"
        )
    return _RUN_KINDS[algorithm](run_dir, env, **options)


def load_network(run_dir: str | os.PathLike, env: Env) -> tuple[Any, Any]:
    """`(network, params)` of the newest checkpoint in `run_dir` (see `blokus_agents.players.checkpoint_read`),
    built for `env`. Raises `CheckpointError` when there is none, it is corrupt, or it was trained on another
    variant."""
    return _reader(run_dir).load_network(run_dir, env)


def load_policy(run_dir: str | os.PathLike, env: Env, greedy: bool = True) -> ParamPolicy:
    """The network policy of the newest checkpoint in a run directory.

    Args:
        run_dir: The run directory.
        env: The environment.
        greedy: Play the argmax of the masked policy; `False` samples from it.

    Returns:
        A `ParamPolicy` (see `network_policy`).

    Raises:
        CheckpointError: As `load_network`.
        MissingExtraError: As `load_network`.
    """
    network, params = load_network(run_dir, env)
    return network_policy(env, network, params, greedy)


__all__ = [
    "AgentFactory",
    "AgentSpecError",
    "BUILTINS",
    "Option",
    "ParamPolicy",
    "Policy",
    "RunReader",
    "agent_names",
    "late_bound",
    "load_builtins",
    "load_network",
    "load_policy",
    "load_run",
    "network_policy",
    "one_game",
    "register_agent",
    "register_prefix",
    "register_run_kind",
    "register_run_reader",
    "require_agent_run",
    "check_agent",
    "did_you_mean",
    "resolve_agent",
    "spec_identity",
    "spec_paths",
    "split_target",
]
