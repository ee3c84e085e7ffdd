"""The hot paths at realistic accelerator sizes, defined once: lowered for GPU and TPU by
tests/benchmarks/test_lowering.py, and their device memory per game measured here from the compiled modules' own
memory analysis.

    python benchmarks/hot_paths.py                          # the bytes-per-game table (compiles every path twice)
    python benchmarks/hot_paths.py --paths ppo_update_duo   # some paths only
    python benchmarks/hot_paths.py --scale 0.25             # each path at a quarter of its batch (and 1/16 of it)

Each hot path is a jitted function with abstract arguments (``jax.ShapeDtypeStruct``s from ``jax.eval_shape``, so
nothing is allocated): batched ``step`` and ``step_autoreset`` rollouts of ``classic`` and ``duo``
(:func:`blokus_jax.rollout.make_rollout`), one PPO update, one AlphaZero update (self-play with search, then the
optimiser steps) and one batched ``mcts`` search. Networks are built in their accelerator form (the native
convolution that ``conv="auto"`` picks on a GPU or TPU), whatever machine builds them.

The table: each path is compiled for the local backend (CPU here) at its batch ``B`` and at ``B/4``; a compiled
module's peak is ``argument + output + temp - alias`` bytes (XLA's buffer assignment, nothing run). Bytes per game
is the slope between the two, the fixed part (parameters, optimiser state, code constants) what is left at ``B``;
the largest batch in ``M`` bytes is ``(M - fixed) / bytes per game``. The GPU compiler assigns buffers differently
from the CPU one, so take these as estimates, and mind that JAX preallocates 75 % of a GPU's memory by default
(``XLA_PYTHON_CLIENT_MEM_FRACTION``).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import platform
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import jax

#: Device memory sizes the table is computed for (bytes, decimal): an 80 GB A100/H100 and a 141 GB H200.
MEMORY_SIZES = {"80 GB": 80e9, "141 GB": 141e9}


@dataclass(frozen=True)
class HotPath:
    """One hot path: the jitted ``fn`` (as the project calls it), its abstract ``args`` and the ``games`` (batch) it
    plays per call; ``what`` says what one call does."""

    name: str
    games: int
    fn: Any
    args: tuple
    what: str


@contextlib.contextmanager
def accelerator_networks() -> Iterator[None]:
    """Inside: networks built with ``conv="auto"`` take the form they take on a GPU or TPU (the native convolution),
    so that what is lowered or measured on a CPU is what an accelerator runs."""
    from blokus_agents.players import networks

    resolve = networks.resolve_conv
    networks.resolve_conv = lambda conv="auto", backend=None: resolve(conv, "gpu" if backend is None else backend)
    try:
        yield
    finally:
        networks.resolve_conv = resolve


def _key_spec(raw: bool = False) -> jax.ShapeDtypeStruct:
    """The abstract PRNG key: a typed key, or a raw ``uint32[2]`` one (what the trainers' ``init`` takes)."""
    return jax.eval_shape(lambda: jax.random.PRNGKey(0) if raw else jax.random.key(0))


def _rollout(variant: str, autoreset: bool) -> Callable[[int], HotPath]:
    def build(batch: int) -> HotPath:
        from blokus_jax import make
        from blokus_jax.rollout import make_rollout

        steps = 16
        fn = jax.jit(make_rollout(make(variant), batch, steps, autoreset=autoreset))
        kind = "step_autoreset" if autoreset else "step"
        name = f"{'autoreset' if autoreset else 'step'}_rollout_{variant}"
        return HotPath(name, batch, fn, (_key_spec(),), f"{steps} random-play `{kind}` steps of every game")

    return build


def _ppo_update(batch: int) -> HotPath:
    from blokus_agents.players.configs import PPOConfig
    from blokus_agents.training.ppo import make_train

    config = PPOConfig(variant="duo", num_envs=batch, num_steps=32)
    with accelerator_networks():
        trainer = make_train(config)
    runner = jax.eval_shape(trainer.init_pure, _key_spec(raw=True))
    what = f"{config.num_steps} self-play steps of every game, then {config.update_epochs} epochs x "
    what += f"{config.num_minibatches} minibatches (network {config.channels} x {config.blocks})"
    return HotPath("ppo_update_duo", batch, trainer.update, (runner,), what)


def _alphazero_update(batch: int) -> HotPath:
    from blokus_agents.players.configs import AZConfig
    from blokus_agents.training.alphazero import make_train

    config = AZConfig(variant="duo", num_envs=batch, num_steps=8, sims=32, batch_size=2 * batch)
    with accelerator_networks():
        trainer = make_train(config)
    runner = jax.eval_shape(trainer.init_pure, _key_spec(raw=True))
    what = f"{config.num_steps} self-play moves of every game ({config.sims} simulations each), then "
    what += f"{config.train_steps} optimiser steps of {config.batch_size} positions (network {config.channels} x "
    what += f"{config.blocks}; {config.games_per_env} buffered games per env)"
    return HotPath("alphazero_update_duo", batch, trainer.update, (runner,), what)


def _mcts_search(batch: int) -> HotPath:
    from blokus_agents.search.gumbel import make_search, rollout_evaluator
    from blokus_jax import make

    env = make("duo")
    sims, k, playouts = 64, 16, 8
    fn = jax.jit(make_search(env, rollout_evaluator(env, playouts=playouts), sims=sims, k=k))
    states = jax.eval_shape(lambda key: jax.vmap(env.init)(jax.random.split(key, batch)), _key_spec())
    what = f"one `mcts` move of every game: {sims} simulations over the top {k} candidates, {playouts} playouts each"
    return HotPath("mcts_search_duo", batch, fn, (None, _key_spec(), states), what)


#: Every hot path: its name, its realistic batch (games per call) and the function that builds it at a batch.
HOT_PATHS: dict[str, tuple[int, Callable[[int], HotPath]]] = {
    "step_rollout_classic": (4096, _rollout("classic", autoreset=False)),
    "step_rollout_duo": (4096, _rollout("duo", autoreset=False)),
    "autoreset_rollout_classic": (4096, _rollout("classic", autoreset=True)),
    "autoreset_rollout_duo": (4096, _rollout("duo", autoreset=True)),
    "ppo_update_duo": (2048, _ppo_update),
    "alphazero_update_duo": (1024, _alphazero_update),
    "mcts_search_duo": (1024, _mcts_search),
}


def build(name: str, batch: int | None = None) -> HotPath:
    """The hot path ``name`` at ``batch`` games (default: its realistic batch in :data:`HOT_PATHS`)."""
    default, builder = HOT_PATHS[name]
    return builder(default if batch is None else batch)


def peak_bytes(path: HotPath) -> int:
    """Peak device bytes of ``path`` compiled for the local backend: arguments + outputs + temporaries - aliased
    (donated) buffers, from XLA's memory analysis."""
    stats = path.fn.lower(*path.args).compile().memory_analysis()
    return (
        stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes - stats.alias_size_in_bytes
    )


def memory_row(name: str, scale: float = 1.0) -> dict:
    """Bytes per game, fixed bytes and the largest batch per memory size of hot path ``name`` at ``scale`` times its
    realistic batch (compiled at that batch and a quarter of it)."""
    big = max(4, int(HOT_PATHS[name][0] * scale)) // 4 * 4
    small = big // 4
    start = time.perf_counter()
    path = build(name, big)
    peak_big, peak_small = peak_bytes(path), peak_bytes(build(name, small))
    per_game = (peak_big - peak_small) / (big - small)
    fixed = max(peak_big - per_game * big, 0.0)
    row = {
        "path": name,
        "what": path.what,
        "batch": big,
        "peak_bytes": peak_big,
        "bytes_per_game": per_game,
        "fixed_bytes": fixed,
    }
    row.update({size: int((limit - fixed) // per_game) for size, limit in MEMORY_SIZES.items()})
    row["compile_s"] = time.perf_counter() - start
    return row


def table(rows: list[dict]) -> str:
    """The Markdown table of :func:`memory_row` rows."""
    sizes = list(MEMORY_SIZES)
    lines = [
        "| hot path | batch | peak MB at batch | KB per game | fixed MB | "
        + " | ".join(f"largest batch in {s}" for s in sizes)
        + " |",
        "|---|---:|---:|---:|---:|" + "---:|" * len(sizes),
    ]
    for r in rows:
        cells = [r["path"], f"{r['batch']:,}", f"{r['peak_bytes'] / 1e6:,.0f}", f"{r['bytes_per_game'] / 1e3:,.1f}"]
        cells += [f"{r['fixed_bytes'] / 1e6:,.1f}"] + [f"{r[s]:,}" for s in sizes]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Print the memory table (and what each path does) for the chosen hot paths."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--paths", nargs="+", choices=list(HOT_PATHS), default=list(HOT_PATHS))
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every path's batch by this")
    args = parser.parse_args(argv)
    if not args.scale > 0:
        parser.error(f"--scale must be positive, got {args.scale}")
    device = jax.devices()[0]
    print(
        f"memory analysis of {device.platform} compilations ({device.device_kind}, {platform.machine()}), "
        f"jax {jax.__version__}, {datetime.date.today().isoformat()}\n"
    )
    rows = []
    for name in args.paths:
        rows.append(memory_row(name, args.scale))
        print(f"{name}: {rows[-1]['compile_s']:.0f} s to compile twice", flush=True)
    print()
    print(table(rows))
    print()
    for r in rows:
        print(f"* `{r['path']}`: {r['what']}")


if __name__ == "__main__":
    main()
