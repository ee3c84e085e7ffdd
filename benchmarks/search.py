"""Search throughput: simulations/s and moves/s of the ``mcts`` agent against batch size, and the playout engine's
placements/s beside the bare env's.

    python benchmarks/search.py                                   # duo + classic, batch 1/64/256/1024, defaults
    python benchmarks/search.py --variants duo --batch-sizes 1 64 --sims 64 --k 32 --playouts 8 --repeats 3
    python benchmarks/search.py --batch1 "mcts:sims=128,k=16,playouts=8" "mcts:sims=512,playouts=1" \
        --old-tree /tmp/old-checkout                                  # batch-1 simulations/s, old code beside new

Each row times one batched search call (``make_search`` with the ``rollout`` evaluator) on positions reached by
``--depth`` uniformly random moves; compile time is reported separately and rates are the median of ``--repeats``
timed calls. ``sims/s`` counts simulations (tree expansions, each with ``playouts`` playouts), ``moves/s`` searches.

The playout table compares, at the same batch size and from the same positions, placements/s of the fast playout
(``blokus_agents.search.playouts.playout``, greedy policy) with the bare env playing the same greedy games through
``Env.step`` and with the bare env's random play (``Env.step`` + ``Env.sample_action``, the throughput benchmark's
number).
``in search`` estimates the playout placements made per second inside the search (playout placements per search,
measured from the root positions, times searches/s).

``--batch1 SPEC ...`` measures what ``play`` and a match against an outside engine see: one search at a time
(batch 1) of each agent spec (``mcts:sims=N,...``), on positions of one game at every phase (after 0, 4, ..., 28
random moves), after compilation; simulations/s = sims x positions / seconds, best of ``--repeats`` passes over the
positions (the minimum is the least disturbed by other load on the machine). ``--old-tree DIR`` runs the same
measurement again in a subprocess on another checkout of the project (e.g. ``git worktree add DIR <commit>``),
alternating old and new ``--repeats`` times, so old and new code are compared in one run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def _timed(fn, args, repeats: int) -> tuple[float, float]:
    """``(compile + first call seconds, median seconds of ``repeats`` further calls)``."""
    import jax

    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    compile_s = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - start)
    return compile_s, statistics.median(times)


def positions(env, batch: int, depth: int, seed: int = 0):
    """``batch`` states after ``depth`` uniformly random moves."""
    import jax

    step, sample = jax.jit(jax.vmap(env.step)), jax.jit(jax.vmap(env.sample_action))
    states = jax.vmap(env.init)(jax.random.split(jax.random.key(seed), batch))
    for t in range(depth):
        states = step(states, sample(jax.random.split(jax.random.key(1000 + t), batch), states))
    return states


def search_row(variant: str, batch: int, sims: int, k: int, playouts: int, depth: int, repeats: int) -> dict:
    """One row of the search table."""
    import jax

    from blokus_agents.search.gumbel import make_search, rollout_evaluator
    from blokus_jax import make

    env = make(variant)
    states = positions(env, batch, depth)
    search = jax.jit(make_search(env, rollout_evaluator(env, playouts=playouts), sims=sims, k=k))
    compile_s, seconds = _timed(lambda key: search(None, key, states).action, (jax.random.key(0),), repeats)
    return {
        "variant": variant,
        "batch": batch,
        "sims": sims,
        "k": k,
        "playouts": playouts,
        "compile_s": round(compile_s, 2),
        "seconds": round(seconds, 4),
        "sims_per_s": round(batch * sims / seconds, 1),
        "moves_per_s": round(batch / seconds, 2),
        "s_per_move_call": round(seconds, 4),
    }


def playout_row(variant: str, batch: int, depth: int, repeats: int) -> dict:
    """Placements/s of the fast playout, of the same greedy games through ``Env.step``, and of bare random play."""
    import jax
    import jax.numpy as jnp

    from blokus_agents.players.bots import greedy_bot
    from blokus_agents.search import playouts
    from blokus_jax import make

    env = make(variant)
    states = positions(env, batch, depth)
    greedy = greedy_bot(env)
    placed0 = jnp.sum(states.pieces_placed)

    def fast(keys, states):
        def one(key, s):
            remaining, _ = playouts.playout(env.tables, key, s)
            return jnp.sum(s.remaining.astype(jnp.int32) - remaining)

        return jnp.sum(jax.vmap(one)(keys, states))

    def through_env(policy):
        def run(keys, states):
            def one(key, s):
                def body(c):
                    s, key = c
                    key, sub = jax.random.split(key)
                    return env.step(s, policy(sub, s)), key

                final, _ = jax.lax.while_loop(lambda c: ~c[0].terminated, body, (s, key))
                return final

            return jnp.sum(jax.vmap(one)(keys, states).pieces_placed) - placed0

        return run

    keys = jax.random.split(jax.random.key(1), batch)
    row = {"variant": variant, "batch": batch}
    for name, fn in (
        ("fast_playout", fast),
        ("env_greedy", through_env(greedy)),
        ("env_random", through_env(env.sample_action)),
    ):
        fn = jax.jit(fn)
        placements = int(fn(keys, states))
        _, seconds = _timed(fn, (keys, states), repeats)
        row[name] = round(placements / seconds)
        if name == "fast_playout":
            row["placements_per_playout"] = round(placements / batch, 1)
    return row


def batch1_rows(variant: str, specs: list[str], repeats: int) -> list[dict]:
    """Batch-1 simulations/s of each ``mcts:sims=N,...`` spec on one game's positions (see the module doc)."""
    import importlib
    import os

    import jax

    # A checkout from before the agents/ folder was installed as blokus_agents names its package "agents".
    resolve_agent = importlib.import_module(os.environ.get("BLOKUS_AGENTS_PACKAGE", "blokus_agents") + ".policies")
    resolve_agent = resolve_agent.resolve_agent
    from blokus_jax import make

    env = make(variant)
    step, sample = jax.jit(env.step), jax.jit(env.sample_action)
    state, positions = env.init(jax.random.key(0)), []
    for t in range(29):
        if t % 4 == 0 and not bool(state.terminated):
            positions.append(state)
        state = step(state, sample(jax.random.key(10 + t), state))
    rows = []
    for spec in specs:
        options = dict(item.split("=") for item in spec.partition(":")[2].split(",") if "=" in item)
        sims = int(options.get("sims", 128))
        policy = jax.jit(resolve_agent(spec, env))
        start = time.perf_counter()
        jax.block_until_ready(policy(jax.random.key(0), positions[0]))
        compile_s = time.perf_counter() - start
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            for i, p in enumerate(positions):
                jax.block_until_ready(policy(jax.random.key(i), p))
            best = min(best, time.perf_counter() - start)
        rows.append(
            {
                "spec": spec,
                "variant": variant,
                "sims": sims,
                "positions": len(positions),
                "compile_s": round(compile_s, 1),
                "s_per_move": round(best / len(positions), 4),
                "sims_per_s": round(sims * len(positions) / best, 1),
            }
        )
    return rows


def _batch1_main(args) -> int:
    """``--batch1``: new code here, old code (``--old-tree``) in subprocesses, alternating."""
    import os
    import subprocess

    results: dict[tuple[str, str], list[dict]] = {}
    trees = [("new", None)] + ([("old", args.old_tree)] if args.old_tree else [])
    for _ in range(args.repeats):
        for label, tree in trees:
            command = [sys.executable, os.path.abspath(__file__), "--batch1-worker", args.variants[0], *args.batch1]
            env = dict(os.environ)
            if tree:  # the old checkout's packages first on the path
                env["PYTHONPATH"] = tree
                env["BLOKUS_AGENTS_PACKAGE"] = "agents" if os.path.isdir(os.path.join(tree, "agents")) else ""
            out = subprocess.run(command, env=env, capture_output=True, text=True, check=True, cwd=tree or None)
            for row in json.loads(out.stdout.strip().splitlines()[-1]):
                results.setdefault((label, row["spec"]), []).append(row)
                print(label, row, file=sys.stderr, flush=True)
    print(f"\nbatch-1 search on {args.variants[0]} ({len(next(iter(results.values())))} alternating runs; best)\n")
    print("| code | agent spec | sims | s per move | simulations/s | compile s |")
    print("|---|---|---:|---:|---:|---:|")
    for (label, spec), rows in results.items():
        best = max(rows, key=lambda r: r["sims_per_s"])
        print(
            f"| {label} | `{spec}` | {best['sims']} | {best['s_per_move']:.3f} | {best['sims_per_s']:,.0f} "
            f"| {best['compile_s']:.0f} |"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, run the benchmark, print the tables (and write JSON if asked)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", nargs="+", default=["duo", "classic"])
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 64, 256, 1024])
    parser.add_argument("--sims", type=int, default=64, help="simulations per search (default 64)")
    parser.add_argument("--k", type=int, default=32, help="candidates per node (default 32)")
    parser.add_argument("--playouts", type=int, default=8, help="playouts per evaluation (default 8)")
    parser.add_argument("--depth", type=int, default=8, help="random moves before the searched positions")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per row; the median is reported")
    parser.add_argument("--json", help="also write the rows to this JSON file")
    parser.add_argument("--batch1", nargs="+", metavar="SPEC", help="batch-1 simulations/s of these agent specs")
    parser.add_argument("--old-tree", help="with --batch1: also measure this checkout of the project")
    parser.add_argument("--batch1-worker", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.batch1_worker:
        print(json.dumps(batch1_rows(args.batch1_worker[0], args.batch1_worker[1:], 1)))
        return 0
    if args.batch1:
        return _batch1_main(args)

    import jax

    device = jax.devices()[0]
    print(f"jax {jax.__version__}, backend {jax.default_backend()}, device {device.device_kind}", file=sys.stderr)
    rows, playout_rows = [], []
    for variant in args.variants:
        for batch in args.batch_sizes:
            row = search_row(variant, batch, args.sims, args.k, args.playouts, args.depth, args.repeats)
            prow = playout_row(variant, batch, args.depth, args.repeats)
            row["playout_placements_per_s_in_search"] = round(
                row["moves_per_s"] * args.sims * args.playouts * prow["placements_per_playout"]
            )
            rows.append(row)
            playout_rows.append(prow)
            print(row, prow, file=sys.stderr, flush=True)
    print(
        f"\nsearch ({device.device_kind}; sims={args.sims}, k={args.k}, playouts={args.playouts}, "
        f"positions after {args.depth} random moves)\n"
    )
    print("| variant | batch | compile s | s per call | simulations/s | moves/s | playout placements/s in search |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['variant']} | {r['batch']} | {r['compile_s']:.1f} | {r['seconds']:.3f} | {r['sims_per_s']:,.0f} "
            f"| {r['moves_per_s']:,.1f} | {r['playout_placements_per_s_in_search']:,} |"
        )
    print("\nplayout engines, placements/s from the same positions\n")
    print("| variant | batch | fast playout (greedy) | env.step greedy | env.step random (bare env) | fast / bare |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in playout_rows:
        print(
            f"| {r['variant']} | {r['batch']} | {r['fast_playout']:,} | {r['env_greedy']:,} | {r['env_random']:,} "
            f"| {r['fast_playout'] / r['env_random']:.1f}x |"
        )
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device.device_kind, "search": rows, "playouts": playout_rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
