"""Accelerator readiness without an accelerator: every hot path, at its realistic batch, lowers with ``jax.export``
for ``cuda`` and ``tpu`` to a module with no host callbacks and no custom call a GPU or TPU could not run.

The hot paths (batched ``step`` / ``step_autoreset`` rollouts of ``classic`` and ``duo``, one PPO update, one
AlphaZero update, one batched ``mcts`` search) are defined once, in ``benchmarks/hot_paths.py``, which also measures
their memory per game. Lowering traces and emits StableHLO only: nothing is compiled or run.
"""

from __future__ import annotations

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import ROOT, load_script
from jax import export

PLATFORMS = ("cuda", "tpu")

#: Custom calls a module may hold: sharding annotations, which every backend's partitioner consumes. Anything else
#: (a host callback, a LAPACK or other CPU-only kernel, a vendor library call) must be checked on GPU and TPU before
#: it is added here.
ALLOWED_CUSTOM_CALLS = frozenset({"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape"})


def _load_hot_paths():
    """``benchmarks/hot_paths.py`` as a module (the benchmarks folder is not a package)."""
    return load_script(ROOT / "benchmarks" / "hot_paths.py", "_benchmarks_hot_paths")


hot_paths = _load_hot_paths()


def custom_call_targets(module_text: str) -> set[str]:
    """The ``call_target_name`` of every ``stablehlo.custom_call`` in a module's text (pretty-printed form
    ``stablehlo.custom_call @target(...)``, or the generic form with ``call_target_name = "target"``)."""
    return set(re.findall(r"custom_call @([\w.$-]+)", module_text)) | set(
        re.findall(r'call_target_name = "([^"]+)"', module_text)
    )


def accelerator_problems(exported: export.Exported) -> list[str]:
    """What would stop an exported module from running on its platforms: custom calls outside
    :data:`ALLOWED_CUSTOM_CALLS` and side effects (host callbacks, prints); empty when there are none."""
    targets = custom_call_targets(exported.mlir_module()) - ALLOWED_CUSTOM_CALLS
    problems = [f"custom call {t!r}" for t in sorted(targets)]
    effects = [*exported.ordered_effects, *exported.unordered_effects]
    return problems + [f"effect {e!r}" for e in effects]


@pytest.mark.parametrize("name", list(hot_paths.HOT_PATHS))
def test_hot_path_lowers_for_gpu_and_tpu_without_host_callbacks_or_cpu_only_calls(name):
    path = hot_paths.build(name)
    assert path.games == hot_paths.HOT_PATHS[name][0] >= 1024  # the realistic batch, not a toy one
    exported = export.export(path.fn, platforms=PLATFORMS)(*path.args)
    assert exported.platforms == PLATFORMS
    assert exported.nr_devices == 1
    assert accelerator_problems(exported) == [], f"{name} would not run on {PLATFORMS}"
    assert exported.mlir_module_serialized  # portable StableHLO bytecode, what a machine with the device loads
    leading = {a.shape[0] for a in jax.tree.leaves((exported.in_avals, exported.out_avals)) if a.shape}
    assert path.games in leading  # per-game arrays at the realistic batch went in or came out


def test_the_checks_find_cpu_only_custom_calls_and_refuse_host_callbacks():
    """The checks above can fail: a CPU lowering of an eigensolver holds a LAPACK custom call, and a host callback
    or a ``jax.debug.print`` cannot even be exported (for an accelerator or at all)."""
    spec = jax.ShapeDtypeStruct((3, 3), jnp.float32)
    eigh = export.export(jax.jit(lambda x: jnp.linalg.eigh(x)[0]), platforms=("cpu",))(spec)
    assert any(p.startswith("custom call 'lapack_") for p in accelerator_problems(eigh))

    def host(x):
        return jax.pure_callback(lambda a: np.asarray(a) * 2, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

    def noisy(x):
        jax.debug.print("x = {}", x)
        return x * 2

    for fn in (host, noisy):
        for platform in PLATFORMS:
            with pytest.raises((NotImplementedError, ValueError)):
                export.export(jax.jit(fn), platforms=(platform,))(spec)


def test_accelerator_networks_build_the_native_convolution_and_restore_the_default():
    from blokus_agents.players import networks
    from blokus_jax import make

    env = make("simple")
    default = networks.make_network(env).conv
    with hot_paths.accelerator_networks():
        assert networks.make_network(env).conv == "native"
        assert networks.make_network(env, conv="im2col").conv == "im2col"  # an explicit form is kept
    assert networks.make_network(env).conv == default == networks.resolve_conv("auto")
