"""The agent-spec resolver: registered names with typed options, run directories, prefixes, clear errors."""

from __future__ import annotations

import subprocess
import sys

import jax
import pytest

import blokus_jax
from blokus_agents.core import policies
from blokus_agents.core.policies import AgentSpecError, register_agent, register_prefix, resolve_agent
from blokus_jax.errors import BlokusError


@pytest.fixture(scope="module")
def env():
    return blokus_jax.make("simple")


def test_bot_names_and_typed_options_resolve(env):
    for name in ("random", "greedy", "corners", "mobility", "minimax"):
        assert name in policies.agent_names()
        action = jax.jit(resolve_agent(name, env))(jax.random.key(0), env.init())  # jitted: op by op is slower
        assert bool(env.is_legal(env.init(), action))
    assert callable(resolve_agent("minimax:k=3,depth=1", env))
    assert callable(resolve_agent("corners:size_weight=2", env))  # an int text for a float option


@pytest.mark.parametrize(
    "spec, message",
    [
        ("alphazero", "unknown agent 'alphazero'"),
        ("minimax:k", "key=value"),
        ("minimax:k=", "key=value"),
        ("minimax:k=2.5", "option k='2.5' must be an int"),
        ("corners:size_weight=nan", "must be a finite number"),
        ("minimax:k=3,k=4", "given twice"),
        ("greedy:k=3", "bad options for agent 'greedy'.*unknown option 'k'"),
        ("mobility:depth=2", "its options are: k=16, size_weight=1.0"),
        ("baseline:no_such_baseline", "unknown baseline 'no_such_baseline'; the available baselines are"),
        ("./no/such/run", "no such run directory"),
        ("", "empty"),
    ],
)
def test_bad_specs_are_agent_spec_errors(env, spec, message):
    with pytest.raises(AgentSpecError, match=message) as err:
        resolve_agent(spec, env)
    assert isinstance(err.value, BlokusError) and isinstance(err.value, ValueError)


def test_the_registry_loads_the_built_in_agents_at_its_first_lookup():
    """A fresh interpreter that imports the registry alone has no agents (and no JAX from the package's
    ``__init__``) until its first lookup, which registers every built-in agent from the catalog."""
    probe = (
        "import sys\n"
        "import blokus_agents\n"
        "assert 'jax' not in sys.modules\n"
        "from blokus_agents.core import policies\n"
        "assert not policies._AGENTS and policies.BUILTINS not in sys.modules\n"
        "names = policies.agent_names()\n"
        "assert {'greedy', 'mcts', 'strong'} <= set(names) and {'az', 'baseline'} <= set(policies._PREFIXES)\n"
        "assert policies.BUILTINS in sys.modules and policies._RUN_READER\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def test_a_catalog_that_fails_to_load_leaves_the_registry_as_it_was(tmp_path):
    """When the module of the built-in agents raises half-way, the registry drops what it had registered: the next
    lookup raises the same error again (not "already registered"), and a working catalog then loads."""
    (tmp_path / "broken_catalog.py").write_text(
        "from blokus_agents.core.policies import register_agent\n"
        "register_agent('half', lambda env: None)\n"
        "raise RuntimeError('the catalog broke')\n"
    )
    probe = (
        "import sys\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from blokus_agents.core import policies\n"
        "real, policies.BUILTINS = policies.BUILTINS, 'broken_catalog'\n"
        "for attempt in range(2):\n"
        "    try:\n"
        "        policies.agent_names()\n"
        "    except RuntimeError as exc:\n"
        "        assert 'the catalog broke' in str(exc), exc\n"
        "    else:\n"
        "        raise AssertionError('a broken catalog loaded')\n"
        "    assert not policies._AGENTS and not policies._DECLARED, policies._AGENTS\n"
        "policies.BUILTINS = real\n"
        "assert 'greedy' in policies.agent_names()\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr


def test_az_prefix_is_registered_by_search_and_names_a_missing_run(env):
    policies.load_builtins()
    assert "az" in policies._PREFIXES and "mcts" in policies.agent_names()
    with pytest.raises(AgentSpecError, match="agent 'az:runs/x' needs a trained run.*no checkpoint in 'runs/x'"):
        resolve_agent("az:runs/x,sims=8", env)
    with pytest.raises(AgentSpecError, match="no checkpoint in 'runs/x'") as err:  # a target without options
        resolve_agent("az:runs/x", env)
    assert "--resume" not in str(err.value)
    with pytest.raises(AgentSpecError, match="bad option ''"):  # a trailing comma is still malformed
        resolve_agent("az:runs/x,", env)
    with pytest.raises(AgentSpecError, match="unknown option 'depth'"):
        resolve_agent("az:runs/x,depth=3", env)


def test_other_modules_register_agents_and_prefixes_without_editing_the_resolver(env, monkeypatch):
    policies.load_builtins()
    monkeypatch.setattr(policies, "_AGENTS", dict(policies._AGENTS))
    # blokus_agents.players.baselines has registered `baseline:`; take it out to register the reserved prefix anew
    monkeypatch.setattr(policies, "_PREFIXES", {k: v for k, v in policies._PREFIXES.items() if k != "baseline"})
    with pytest.raises(AgentSpecError, match="'baseline:' .* is not registered; register it with register_prefix"):
        resolve_agent("baseline:duo", env)
    seen = {}

    def first_legal(env, sims: int = 64, greedy: bool = True):
        seen.update(sims=sims, greedy=greedy)
        return env.sample_action

    register_agent("first_legal", first_legal)
    assert resolve_agent("first_legal:sims=128,greedy=false", env) == env.sample_action
    assert seen == {"sims": 128, "greedy": False}
    with pytest.raises(ValueError, match="already registered"):
        register_agent("first_legal", first_legal)

    def baseline(env, target: str, sims: int = 32):
        seen.update(target=target, sims=sims)
        return env.sample_action

    register_prefix("baseline", baseline)  # a reserved prefix may be registered once
    assert resolve_agent("baseline:runs/duo,sims=8", env) == env.sample_action
    assert seen["target"] == "runs/duo" and seen["sims"] == 8
    with pytest.raises(AgentSpecError, match="names no target"):
        resolve_agent("baseline:", env)


def test_adapters_resolve_opponents_with_the_same_resolver(env):
    from blokus_jax.adapters._boundary import resolve_policy

    assert callable(resolve_policy("minimax:k=2,depth=1", env))
    with pytest.raises(AgentSpecError, match="unknown agent"):
        resolve_policy("nobody", env)


# ------------------------------------------------------------------------------------------ declared option ranges
@pytest.mark.parametrize(
    "spec, message",
    [
        ("mcts:sims=1000000000", r"sims=1000000000 must be between 1 and 32768"),
        ("mcts:sims=12345678901234567890", r"sims=12345678901234567890 must be between 1 and 32768"),
        ("mcts:playouts=100000000", r"playouts=100000000 must be between 1 and 10000"),
        ("mcts:k=1373", r"k=1373 must be between 1 and 1372 \(the number of placement actions of 'simple'\)"),
        ("mcts:considered=0", r"considered=0 must be between 1"),
        ("mcts:margin=1.5", r"margin=1.5 must be between 0 and 1"),
        ("mcts:margin=-0.1", r"margin=-0.1 must be between 0 and 1"),
        ("mcts:gumbel_scale=-1", r"gumbel_scale=-1 must be between 0 and 100"),
        ("mcts:temperature=1e-300", r"temperature=1e-300 must be between 0.0001 and 10000"),
        ("mcts:playout=smart", r"playout=smart must be one of \['greedy', 'random', 'block', 'local', 'attach'\]"),
        ("az:runs/x,gumbel_scale=-0.5", r"gumbel_scale=-0.5 must be between 0 and 100"),
        ("az:runs/x,sims=99999999999999999999", r"sims=99999999999999999999 must be between 1 and 32768"),
        ("baseline:simple,gumbel_scale=-1", r"gumbel_scale=-1 must be between 0 and 100"),
        ("baseline:simple,sims=-1", r"sims=-1 must be between 0 and 32768 "),
        ("baseline:simple,k=5000", r"k=5000 must be between 1 and 1372"),
        ("mobility:k=99999", r"k=99999 must be between 1 and 1372"),
        ("minimax:depth=3", r"depth=3 must be between 1 and 2"),
        ("minimax:score_weight=10000000", r"score_weight=10000000 must be between -1000 and 1000"),
        ("corners:size_weight=1e9", r"size_weight=1e9 must be between -100 and 100"),
    ],
)
def test_every_declared_option_is_checked_for_type_and_range_before_anything_is_built(env, spec, message):
    with pytest.raises(AgentSpecError, match=message):
        resolve_agent(spec, env)


def test_an_undeclared_int_option_must_fit_an_int32(env, monkeypatch):
    policies.load_builtins()
    monkeypatch.setattr(policies, "_AGENTS", dict(policies._AGENTS))
    register_agent("plain", lambda env, n=1: env.sample_action)
    assert callable(resolve_agent("plain:n=2147483647", env))
    with pytest.raises(AgentSpecError, match="n=21474836470 must be between"):
        resolve_agent("plain:n=21474836470", env)


def test_every_option_of_every_bot_and_search_agent_is_declared():
    """A new option without a declaration would be accepted unchecked: every factory parameter must be declared."""
    policies.load_builtins()
    import inspect

    for table, skip in ((policies._AGENTS, 1), (policies._PREFIXES, 2)):
        for name, factory in table.items():
            params = list(inspect.signature(factory).parameters)[skip:]
            declared = policies._declared(factory).options
            assert set(params) == set(declared), f"{name}: undeclared options {set(params) - set(declared)}"


def test_a_budget_over_the_machine_memory_is_refused_naming_the_option_and_the_limit(env, monkeypatch):
    from blokus_agents.core import options

    monkeypatch.setattr(policies, "machine_memory", lambda: (64 * 2**20, "this machine's memory"))
    with pytest.raises(AgentSpecError, match=r"sims=30000 would need about .* more than this machine's memory "):
        resolve_agent("mcts:sims=30000", env)
    with pytest.raises(AgentSpecError, match=r"k=1000 would need .*64.0 MiB.*lower k"):
        resolve_agent("minimax:k=1000", env)
    assert callable(resolve_agent("mcts:sims=8", env))  # small budgets still fit
    # the estimate grows with the budget (the tree of mctx holds sims + 1 nodes)
    assert options.search_bytes(env, 1000, 16) > 10 * options.search_bytes(env, 50, 16)


def test_a_run_path_with_a_comma_is_given_quoted(env, tmp_path, monkeypatch):
    run = tmp_path / "runs" / "a,b"
    run.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert policies.split_target('az:"runs/a,b",sims=8') == ("runs/a,b", "sims=8")
    assert policies.split_target('az:"runs/a,b"') == ("runs/a,b", None)
    assert policies.split_target("az:runs/x,sims=8") == ("runs/x", "sims=8")
    # the quoted target reaches the loader whole: the error names the directory, not 'runs/a'
    with pytest.raises(AgentSpecError, match=r"no checkpoint in 'runs/a,b'"):
        resolve_agent('az:"runs/a,b",sims=8', env)
    with pytest.raises(AgentSpecError, match=r"contains a comma.*quote the target: az:\"runs/a,b\""):
        resolve_agent("az:runs/a,b", env)
    with pytest.raises(AgentSpecError, match="no closing"):
        resolve_agent('az:"runs/a,b,sims=8', env)
    with pytest.raises(AgentSpecError, match="after the quoted target"):
        resolve_agent('az:"runs/a,b"sims=8', env)


def test_a_run_directory_named_like_a_bot_gets_a_warning_and_an_explicit_path_plays_it(env, tmp_path, monkeypatch):
    (tmp_path / "greedy").mkdir()
    monkeypatch.chdir(tmp_path)
    with pytest.warns(UserWarning, match=r"registered agent 'greedy', not the directory.*'\./greedy'"):
        resolve_agent("greedy", env)
    with pytest.raises(AgentSpecError, match=r"no checkpoint in '\./greedy'"):  # the path goes to the run loader
        resolve_agent("./greedy", env)


def test_spec_identity_changes_when_a_run_gains_a_checkpoint(tmp_path):
    run = tmp_path / "run"
    (run / "checkpoints" / "1").mkdir(parents=True)
    first = policies.spec_identity(str(run))
    assert first == policies.spec_identity(str(run))
    assert policies.spec_identity(f"az:{run},sims=4") == first
    (run / "checkpoints" / "2").mkdir()
    assert policies.spec_identity(str(run)) != first
    assert policies.spec_identity("greedy") == () and policies.spec_identity("baseline:duo") == ()


def test_a_param_policy_called_outside_jit_runs_its_function_jitted_once():
    """A `ParamPolicy` called eagerly runs `jax.jit(fn)`, shared by every policy of the same function: new params
    reuse the compilation, and the move is the one the function gives under a user's `jit`."""
    from blokus_agents.players.networks import make_network

    env = blokus_jax.make("simple")
    network = make_network(env, channels=3, blocks=0, value_hidden=5)  # sizes no other test compiles
    state = env.init()
    first, second = (jax.jit(network.init)(jax.random.key(i), env.observe(state)) for i in (0, 1))
    policy, other = policies.network_policy(env, network, first), policies.network_policy(env, network, second)
    assert policy.fn is other.fn
    compiles = []

    def listen(event: str, seconds: float, **kwargs) -> None:
        compiles.append(event) if event == "/jax/core/compile/backend_compile_duration" else None

    key = jax.random.key(5)
    cached = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)  # every program this test needs is compiled here
    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        moves = [int(policy(key, state))]
        first = len(compiles)
        moves.append(int(other(key, state)))
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
        jax.config.update("jax_enable_compilation_cache", cached)
    assert first <= 1 and len(compiles) == first, compiles  # one program; the other params reused it
    assert moves == [int(jax.jit(policy.fn)(p.params, key, state)) for p in (policy, other)]
