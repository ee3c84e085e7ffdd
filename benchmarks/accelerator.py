"""Accelerator benchmark: one Markdown file of everything that runs on device, for whatever device JAX finds first.

    bash benchmarks/accelerator.sh                        # full run, writes benchmarks/accelerator_<platform>.md
    bash benchmarks/accelerator.sh --quick --out /tmp/a.md   # tiny version of every section (about a minute on CPU)
    python benchmarks/accelerator.py --sections env search  # only some sections

Sections, each timed on ``jax.devices()[0]`` with compile time reported separately and rates the median of the
timed repeats:

1. **env**: random-play placements/s of Classic and Duo up to batch 65,536 (:func:`blokus_jax.benchmark.measure`).
2. **ppo**: PPO training env-steps/s per update (:func:`blokus_agents.training.ppo.make_train`) at a few ``num_envs``.
3. **alphazero**: AlphaZero self-play training moves/s per update (``blokus_agents.training.alphazero.make_train``), or
   a row saying "not available" when that module cannot be imported.
4. **search**: simulations/s of the ``mcts`` agent (``benchmarks/search.py``'s :func:`search_row`).
5. **network**: forward+backward of the policy-value network with the im2col and the native convolution
   (``blokus_agents.players.networks.Conv3x3``), which "auto" chooses between by backend.

The file is rewritten after every section, so a run stopped early keeps what it measured, and no new row starts
after ``--budget`` seconds (480 in a full run, so that one GPU run fits a 10-minute limit; skipped rows are listed).
The report is printed to stdout at the end; progress lines (one before every compilation) go to stderr. A section
that fails writes its error as a row and the script exits 1 after running the others. Never asserts on time.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SECTIONS = ("env", "ppo", "alphazero", "search", "network")
TITLES = {
    "env": "1. Environment throughput (random play, placements/s)",
    "ppo": "2. PPO training throughput (env-steps/s per update)",
    "alphazero": "3. AlphaZero training throughput (self-play moves/s per update)",
    "search": "4. Search simulations/s (`mcts` agent, rollout evaluator)",
    "network": "5. Network forward+backward: im2col vs native convolution",
}

#: The network precisions the PPO and AlphaZero rows are measured in (``PPOConfig.precision``; parameters stay f32).
PRECISIONS = ("f32", "bf16")

#: Sizes of the full run (sized for one large GPU, ~8 minutes) and of ``--quick`` (a 2-core CPU in about a minute).
FULL = {
    "env": dict(variants=("classic", "duo"), batches=(1024, 4096, 16384, 65536), steps=32, repeats=3),
    "ppo": dict(variant="duo", num_envs=(256, 2048), num_steps=32, repeats=3, net={}, precisions=PRECISIONS),
    "alphazero": dict(
        variant="duo",
        num_envs=(256, 1024),
        num_steps=8,
        sims=32,
        samples_per_env=2,
        repeats=2,
        extra={},
        precisions=PRECISIONS,
    ),
    "search": dict(variant="duo", batches=(256, 1024), sims=64, k=16, playouts=8, depth=8, repeats=3),
    "network": dict(variant="duo", batches=(256, 1024, 4096), repeats=5, net={}),
}
QUICK = {
    "env": dict(variants=("classic", "duo"), batches=(8, 64), steps=8, repeats=1),
    "ppo": dict(
        variant="simple", num_envs=(8,), num_steps=8, repeats=1, net=dict(channels=8, blocks=1), precisions=PRECISIONS
    ),
    "alphazero": dict(
        variant="simple",
        num_envs=(8,),
        num_steps=2,
        sims=4,
        samples_per_env=2,
        repeats=1,
        extra=dict(channels=8, blocks=1, train_steps=1),
        precisions=("bf16",),  # one compilation of the update (10 s on CPU) smokes the row; f32 is PPO's row above
    ),
    "search": dict(variant="simple", batches=(8,), sims=8, k=8, playouts=2, depth=2, repeats=1),
    "network": dict(variant="simple", batches=(8,), repeats=2, net=dict(channels=8, blocks=1)),
}


def progress(message: str) -> None:
    """One progress line on stderr (stdout carries only the final table)."""
    print(f"[accelerator] {message}", file=sys.stderr, flush=True)


#: ``perf_counter`` time after which no new row starts (``--budget``), and the rows skipped because of it.
_deadline = [math.inf]
_skipped: list[str] = []


def out_of_time(row: str) -> bool:
    """Whether the time budget is spent; if so, ``row`` is recorded as skipped (the section notes it) and logged."""
    if time.perf_counter() < _deadline[0]:
        return False
    progress(f"skipping {row}: past the time budget")
    _skipped.append(row)
    return True


def time_calls(fn: Callable, args: tuple, repeats: int, chain: bool = False) -> tuple[float, float]:
    """Compile ``fn`` for ``args`` (exactly, via ``lower().compile()`` when ``fn`` is jitted; otherwise the first
    call) and time ``repeats`` calls; returns ``(compile seconds, median seconds per call)``. With ``chain`` the
    result of a call (a ``(state, metrics)`` pair) feeds the next one, as training updates do."""
    import jax

    start = time.perf_counter()
    if hasattr(fn, "lower"):
        fn = fn.lower(*args).compile()
    else:
        out = jax.block_until_ready(fn(*args))
        args = (out[0],) if chain else args
    compile_s = time.perf_counter() - start
    times = []
    for _ in range(max(repeats, 1)):
        start = time.perf_counter()
        out = jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
        args = (out[0],) if chain else args
    return compile_s, statistics.median(times)


def _cell(value: Any) -> str:
    """A table cell: text as is, large floats with thousands separators, small floats to 3 significant digits."""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"
    return f"{value:,}"


def _table(header: list[str], rows: list[list[Any]]) -> str:
    """A Markdown table: text columns left-aligned, the others right-aligned."""
    align = ["---" if not rows or isinstance(rows[0][i], str) else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------------------- sections
def env_section(p: dict) -> str:
    """Random-play throughput via :func:`blokus_jax.benchmark.measure`, one device."""
    import jax

    from blokus_jax import make
    from blokus_jax.benchmark import format_table, measure

    rows = []
    for variant in p["variants"]:
        for batch in p["batches"]:
            if out_of_time(f"{variant} batch {batch}"):
                continue
            progress(f"env: compiling {variant} batch {batch} ({p['steps']} steps)")
            rows.append(measure(make(variant), batch, p["steps"], p["repeats"], devices=jax.devices()[:1]))
    return f"{p['steps']} auto-reset steps per timed run.\n\n" + format_table(rows)


def ppo_section(p: dict) -> str:
    """PPO updates (rollout + GAE + epochs) timed one at a time with :func:`blokus_agents.training.ppo.make_train`."""
    import jax

    from blokus_agents.players.configs import PPOConfig
    from blokus_agents.training.ppo import make_train

    rows = []
    for num_envs in p["num_envs"]:
        for precision in p["precisions"]:
            if out_of_time(f"{num_envs} envs, {precision}"):
                continue
            config = PPOConfig(
                variant=p["variant"], num_envs=num_envs, num_steps=p["num_steps"], precision=precision, **p["net"]
            )
            trainer = make_train(config)
            runner = trainer.init(jax.random.PRNGKey(0))
            progress(f"ppo: compiling {p['variant']} update, {num_envs} envs x {p['num_steps']} steps, {precision}")
            compile_s, seconds = time_calls(trainer.update, (runner,), p["repeats"], chain=True)
            rows.append(
                [
                    p["variant"],
                    f"{num_envs} x {p['num_steps']}",
                    trainer.network.conv,
                    trainer.network.precision,
                    f"{config.channels} x {config.blocks}",
                    config.steps_per_update / seconds,
                    seconds,
                    compile_s,
                    p["repeats"],
                ]
            )
    header = ["variant", "num_envs x num_steps", "conv", "precision", "channels x blocks", "env-steps/s"]
    header += ["s per update"]
    return (
        f"One update = rollout + per-seat GAE + {PPOConfig().update_epochs} epochs x "
        f"{PPOConfig().num_minibatches} minibatches.\n\n" + _table(header + ["compile s", "runs"], rows)
    )


def _benchmark_module(name: str):
    """Load ``benchmarks/<name>.py`` (the benchmarks folder is not a package) to reuse its measuring functions."""
    spec = importlib.util.spec_from_file_location(f"_benchmarks_{name}", HERE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def alphazero_section(p: dict) -> str:
    """AlphaZero updates (self-play with search, then optimiser steps) timed by ``benchmarks/training.py``'s
    :func:`alphazero_speed`; a "not available" row when ``blokus_agents.training.alphazero`` cannot be imported."""
    header = ["variant", "num_envs x num_steps", "sims", "precision", "self-play moves/s", "train samples/s"]
    header += ["self-play share", "s per update", "compile s", "runs"]
    try:
        from blokus_agents.players.configs import AZConfig
    except ImportError as exc:
        progress(f"alphazero: not available ({exc})")
        missing = [p["variant"], "not available", *["-"] * (len(header) - 3), f"({type(exc).__name__})"]
        return _table(header, [missing])

    training = _benchmark_module("training")
    rows, config = [], None
    for num_envs in p["num_envs"]:
        for precision in p["precisions"]:
            if out_of_time(f"{num_envs} envs, {precision}"):
                continue
            config = AZConfig(
                variant=p["variant"],
                num_envs=num_envs,
                num_steps=p["num_steps"],
                sims=p["sims"],
                batch_size=num_envs * p["samples_per_env"],
                total_steps=10**9,
                precision=precision,
                **p["extra"],
            )
            progress(
                f"alphazero: compiling {p['variant']} update, {num_envs} envs x {p['num_steps']} moves, {precision}"
            )
            r = training.alphazero_speed(config, p["repeats"])
            rows.append(
                [p["variant"], f"{num_envs} x {p['num_steps']}", p["sims"], precision, r["moves_per_s"]]
                + [r["samples_per_s"], f"{r['self_play_share']:.0%}", r["update_s"], r["compile_s"], p["repeats"]]
            )
    train = "" if config is None else f" (train_steps={config.train_steps}, batch_size={config.batch_size})"
    return f"One update = num_envs x num_steps self-play moves, then optimiser steps{train}.\n\n" + _table(header, rows)


def search_section(p: dict) -> str:
    """Batched ``mcts`` searches via ``benchmarks/search.py``'s :func:`search_row`."""
    search = _benchmark_module("search")
    rows = []
    for batch in p["batches"]:
        if out_of_time(f"batch {batch}"):
            continue
        progress(f"search: compiling {p['variant']} batch {batch}, {p['sims']} sims")
        r = search.search_row(p["variant"], batch, p["sims"], p["k"], p["playouts"], p["depth"], p["repeats"])
        rows.append([r[k] for k in ("variant", "batch", "sims", "k", "playouts")] + [float(r["sims_per_s"])])
        rows[-1] += [float(r["moves_per_s"]), r["seconds"], r["compile_s"], p["repeats"]]
    header = ["variant", "batch", "sims", "k", "playouts", "simulations/s", "moves/s", "s per call"]
    header += ["compile s", "runs"]
    return f"Positions after {p['depth']} random moves; compile s includes the first call.\n\n" + _table(header, rows)


def network_section(p: dict) -> str:
    """Forward+backward (``jit(grad)`` of a loss on logits and value) of the same parameters in both conv forms."""
    import jax
    import jax.numpy as jnp

    from blokus_agents.players.networks import make_network, resolve_conv
    from blokus_jax import make

    env = make(p["variant"])
    rows = []
    for batch in p["batches"]:
        if out_of_time(f"batch {batch}"):
            continue
        states = jax.vmap(env.init)(jax.random.split(jax.random.key(0), batch))
        obs = jax.vmap(env.observe)(states)
        params = None
        for conv in ("im2col", "native", "hybrid"):
            net = make_network(env, conv=conv, **p["net"])
            params = net.init(jax.random.key(0), obs) if params is None else params

            def loss(params, obs, net=net):
                logits, value = net.apply(params, obs)
                return jnp.mean(jax.nn.log_softmax(logits)[..., :-1]) + jnp.mean(value**2)

            progress(f"network: compiling forward+backward, {conv}, batch {batch}")
            compile_s, seconds = time_calls(jax.jit(jax.grad(loss)), (params, obs), p["repeats"])
            rows.append([p["variant"], conv, batch, batch / seconds, seconds * 1e3, compile_s, p["repeats"]])
    net = make_network(env, **p["net"])
    note = (
        f"`jit(grad)` of one batch, {net.channels} channels x {net.blocks} blocks; "
        f'`conv="auto"` picks **{resolve_conv("auto")}** here.\n\n'
    )
    header = ["variant", "conv", "batch", "samples/s", "ms per call", "compile s", "runs"]
    return note + _table(header, rows)


RUNNERS = {
    "env": env_section,
    "ppo": ppo_section,
    "alphazero": alphazero_section,
    "search": search_section,
    "network": network_section,
}


def header_lines(quick: bool) -> str:
    """The top of the report: device, JAX version, date and mode."""
    import jax

    device = jax.devices()[0]
    return (
        "# blokus-jax accelerator benchmark\n\n"
        f"device: {device.device_kind} ({device.platform}, {jax.device_count()} device(s), first one used)  \n"
        f"jax {jax.__version__}, {datetime.datetime.now().isoformat(timespec='minutes')}, "
        f"mode: {'quick' if quick else 'full'}\n"
    )


def budget_seconds(text: str) -> float:
    """argparse type of ``--budget``: a finite number of seconds above 0 (``nan``, ``inf``, 0 and negative numbers
    would skip every row or none and still exit 0)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds, e.g. 480") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number of seconds above 0, e.g. 480")
    return value


def markdown_path(text: str) -> str:
    """argparse type of ``--out``: a file path (not a directory) whose nearest existing folder is writable."""
    path = Path(text)
    if not text or path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a directory; give a file such as {text or '.'}/accelerator.md")
    folder = path.absolute().parent
    while not folder.exists():
        folder = folder.parent
    if not folder.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r}: {str(folder)!r} is a file, not a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{text!r}: the directory {str(folder)!r} is not writable")
    return text


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the sections in order, write the Markdown file after each and print it at the end;
    returns 0, or 1 when a section failed."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke run of every section")
    parser.add_argument(
        "--out", type=markdown_path, help="Markdown file to write (default benchmarks/accelerator_<platform>.md)"
    )
    parser.add_argument(
        "--budget",
        type=budget_seconds,
        help="seconds after which no new row starts; later rows are listed as skipped (default: 480 full, none quick)",
    )
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS), help="sections to run")
    args = parser.parse_args(argv)

    import jax

    device = jax.devices()[0]
    out = Path(args.out) if args.out else HERE / f"accelerator_{device.platform}.md"
    sizes = QUICK if args.quick else FULL
    parts, failed, start = [header_lines(args.quick)], False, time.perf_counter()
    try:  # the output is written once before any section runs: a bad --out fails now, not after a section
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(parts))
    except OSError as exc:
        parser.error(f"--out {str(out)!r} cannot be written: {exc.strerror or exc}")
    progress(f"device {device.device_kind} ({device.platform}); writing {out}")
    budget = args.budget if args.budget is not None else (math.inf if args.quick else 480.0)
    _deadline[0] = start + budget
    for name in args.sections:
        section_start = time.perf_counter()
        try:
            body = RUNNERS[name](sizes[name])
        except Exception as exc:  # a broken section must not cost the others their numbers
            failed = True
            progress(f"{name}: FAILED {type(exc).__name__}: {exc}")
            body = _table(["section", "error"], [[name, f"failed: {type(exc).__name__}: {exc}".replace("|", "/")]])
        elapsed = time.perf_counter() - section_start
        if _skipped:
            body += f"\n\n_skipped, past the time budget of {budget:.0f} s: {', '.join(_skipped)}_"
            _skipped.clear()
        parts.append(f"## {TITLES[name]}\n\n{body}\n\n_section time {elapsed:.0f} s_\n")
        progress(f"{name}: done in {elapsed:.0f} s")
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("\n".join(parts))
    parts.append(f"Total time {time.perf_counter() - start:.0f} s.\n")
    out.write_text("\n".join(parts))
    print("\n".join(parts))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
