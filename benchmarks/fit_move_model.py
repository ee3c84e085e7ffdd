"""Collect positions labelled by a strong player's moves and fit the move model of `blokus_agents.move_model`.

Collection (``collect``): Pentobi plays itself at one level (its opening book on, one core, 100 games a file, each
file with its own seeds) through its ``twogtp`` tool; the games land as ``.blksgf`` files. Pentobi is an opponent
and a source of labels on your own machine only: build it with ``bash benchmarks/build_pentobi.sh --dest /tmp/pentobi``.

    taskset -c 1 python benchmarks/fit_move_model.py collect --level 6 --files 15 --out benchmarks/data/prior

Fitting (``fit``): every position with a choice in the fit files, its legal placements' features (with the network's
logit), softmax regression with optax; the held-out files stay out of the fit and give the recall in the provenance.

    python benchmarks/fit_move_model.py fit --data benchmarks/data/prior --held-out 'l6_chunk01*' \
        --network baseline:duo --out agents/search/move_model_duo.json

The model a policy network carries (``--prior model`` of ``blokus-jax train``) sees only the mover's observation:

    python benchmarks/fit_move_model.py fit --data benchmarks/data/prior --files 'l6_chunk02*' --max-games 100 \
        --held-out 'l6_chunk01*' --l2 1e-4 --steps 200 --inputs observation --network '' \
        --out agents/search/move_model_duo_observation.json

Recall of any spec on the held-out positions: ``benchmarks/prior_recall.py``.
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import os
import platform
import shlex
import subprocess
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

PENTOBI = Path("/tmp/pentobi")
#: Candidate slots kept per position for the fit: the legal placements (all of them up to this many; beyond it a
#: random subset that always holds the chosen one).
SLOTS = 768


def collect(args: argparse.Namespace) -> None:
    """Pentobi self-play games at ``args.level``, ``args.games`` a file, ``args.files`` files, into ``args.out``."""
    gtp = PENTOBI / "build/pentobi_gtp/pentobi-gtp"
    twogtp = PENTOBI / "build/twogtp/twogtp"
    book = PENTOBI / f"src/opening_books/book_{args.game}.blksgf"
    for tool in (gtp, twogtp, book):
        if not tool.exists():
            sys.exit(f"{tool} is missing: build Pentobi with bash benchmarks/build_pentobi.sh --dest /tmp/pentobi")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for i in range(1, args.files + 1):
        name = out / f"l{args.level}_chunk{i:02d}"
        if Path(f"{name}.blksgf").exists():
            continue
        engine = f"{gtp} --game {args.game} --level {args.level} --threads 1 --noresign --quiet --book {book}"
        seed = args.seed + 2 * i
        command = [
            str(twogtp),
            "--black",
            f"{engine} --seed {seed}",
            "--white",
            f"{engine} --seed {seed + 1}",
            "--game",
            args.game,
            "--nugames",
            str(args.games),
            "--file",
            str(name),
            "--quiet",
        ]
        print(f"[{i}/{args.files}] {shlex.join(command)}", flush=True)
        subprocess.run(command, check=True)


def candidates(
    env, model_network, positions, slots: int = SLOTS, batch: int = 32, seed: int = 0, inputs: str = "state"
):
    """``(features f16[N, slots, F], legal bool[N, slots], chosen int32[N], phase int32[N])`` of ``positions``,
    the features over ``inputs`` planes (``blokus_agents.search.move_features.INPUTS``)."""
    from blokus_agents.search.move_features import DEFAULT_PHASES, move_features, phase_of

    tables = env.tables
    apply = None
    if model_network is not None:
        network, params = model_network

        def apply(state):
            return network.apply(params, env.observe(state))[0]

    def one(key, state, chosen):
        logits = apply(state) if apply is not None else None
        features = move_features(tables, state, logits, inputs)
        legal = state.legal_action_mask[:-1]
        rank = legal.astype(jnp.float32) + jax.random.uniform(key, legal.shape) * 0.5
        rank = rank.at[chosen].set(2.0)
        _, index = jax.lax.top_k(rank, slots)
        slot = jnp.argmax(index == chosen)
        return features[index].astype(jnp.float16), legal[index], slot, phase_of(DEFAULT_PHASES, state)

    fn = jax.jit(jax.vmap(one))
    n = len(positions)
    outs = []
    start = time.perf_counter()
    for lo in range(0, n, batch):
        idx = np.arange(lo, min(n, lo + batch))
        pad = batch - len(idx)
        idx_full = np.concatenate([idx, np.full(pad, idx[0])]) if pad else idx
        sub = positions.take(idx_full)
        keys = jax.random.split(jax.random.key(seed + lo), len(idx_full))
        res = fn(keys, sub.states, jnp.asarray(sub.chosen))
        outs.append([np.asarray(x)[: len(idx)] for x in res])
        done = lo + len(idx)
        rate = done / (time.perf_counter() - start)
        print(f"\r  features {done}/{n} positions, {rate:.0f}/s, ETA {(n - done) / rate:.0f} s", end="", flush=True)
    print()
    return tuple(np.concatenate([o[i] for o in outs]) for i in range(4))


def _slot_scores(weights, features, legal, phase, batch: int = 1024) -> np.ndarray:
    """Scores of the candidate slots under ``weights`` (``-inf`` on empty slots), a batch of positions at a time."""
    out = []
    for lo in range(0, len(features), batch):
        f = np.asarray(features[lo : lo + batch], np.float32)
        out.append(np.einsum("nlf,nf->nl", f, weights[phase[lo : lo + batch]]))
    return np.where(legal, np.concatenate(out), -np.inf)


def _files(data: str, pattern: str | None, exclude: str | None) -> list[Path]:
    paths = sorted(Path(data).glob("*.blksgf"))
    if pattern:
        paths = [p for p in paths if fnmatch.fnmatch(p.name, pattern)]
    if exclude:
        paths = [p for p in paths if not fnmatch.fnmatch(p.name, exclude)]
    return paths


def network_of(env, spec: str | None):
    """``(network, params)`` of ``baseline:NAME`` or ``az:RUN`` (``None`` for no network)."""
    if not spec:
        return None
    prefix, _, target = spec.partition(":")
    if prefix == "baseline":
        from blokus_agents.players.baselines import load_baseline

        network, params, _ = load_baseline(target, env)
        return network, params
    if prefix == "az":
        from blokus_agents.core.policies import load_network

        return load_network(target, env)
    sys.exit(f"--network must be baseline:NAME or az:RUN, got {spec!r}")


def fit_command(args: argparse.Namespace) -> None:
    """Fit the move model and write it with its provenance."""
    import blokus_jax
    from blokus_agents.search.move_features import DEFAULT_PHASES, feature_names
    from blokus_agents.search.move_fit import fit, recall_at
    from blokus_agents.search.move_model import MoveModel
    from blokus_agents.search.positions import labelled_positions

    env = blokus_jax.make(args.variant)
    fit_files = _files(args.data, args.files, args.held_out)
    held_files = _files(args.data, args.held_out, None)
    if not fit_files or not held_files:
        sys.exit(f"need fit and held-out files in {args.data} (fit {len(fit_files)}, held-out {len(held_files)})")
    print(f"reading {len(fit_files)} fit files and {len(held_files)} held-out files", flush=True)
    train = labelled_positions(env, fit_files)
    if args.max_games:
        train = train.take(np.flatnonzero(train.game < args.max_games))
    held = labelled_positions(env, held_files, first_game=int(train.game.max()) + 1)
    print(f"{len(train)} fit positions ({len(set(train.game.tolist()))} games), {len(held)} held-out", flush=True)
    if args.inputs == "observation" and args.network:
        sys.exit("--inputs observation takes no --network (the policy network that carries the model adds its own)")
    net = network_of(env, args.network)
    features, legal, chosen, phase = candidates(env, net, train, inputs=args.inputs)
    # validation: the last tenth of the fit games, for choosing the L2 weight
    games = np.unique(train.game)
    val_games = set(games[-max(1, len(games) // 10) :].tolist())
    val = np.isin(train.game, list(val_games))
    best = None
    for l2 in args.l2:
        w = fit(
            features[~val],
            legal[~val],
            chosen[~val],
            phase[~val],
            len(DEFAULT_PHASES),
            l2=l2,
            steps=args.steps,
            progress=lambda s, loss: print(f"  l2={l2:g} step {s} loss {loss:.4f}", flush=True),
        )
        r = recall_at(_slot_scores(w, features[val], legal[val], phase[val]), chosen[val], (1, 32))
        print(f"  l2={l2:g}: validation top-1 {r[1]:.3f} top-32 {r[32]:.3f}", flush=True)
        if best is None or r[32] + r[1] > best[0]:
            best = (r[32] + r[1], l2)
    l2 = best[1]
    weights = fit(features.astype(np.float32), legal, chosen, phase, len(DEFAULT_PHASES), l2=l2, steps=args.steps)
    names = feature_names(env.tables, net is not None)
    provenance = {
        "command": shlex.join(["python", *sys.argv]),
        "date": datetime.date.today().isoformat(),
        "machine": f"{platform.machine()} {os.cpu_count()} cores, JAX {jax.__version__} ({jax.default_backend()})",
        "labels": args.labels,
        "fit_games": int(len(games)),
        "fit_positions": int(len(train)),
        "held_out_files": [p.name for p in held_files],
        "held_out_positions": int(len(held)),
        "l2": l2,
        "steps": args.steps,
    }
    model = MoveModel(
        env.variant.name,
        names,
        DEFAULT_PHASES,
        tuple(tuple(float(x) for x in row) for row in weights),
        args.network or "",
        provenance,
        args.inputs,
    )
    # held-out recall over every action (not just the candidate slots)
    from prior_recall import spec_recall  # noqa: E402 (benchmarks/ sibling)

    table = spec_recall(env, model, held)
    provenance["held_out_recall"] = table
    Path(args.out).write_text(MoveModel(**{**model.__dict__, "provenance": provenance}).to_json() + "\n")
    print(f"wrote {args.out}; held-out recall {table}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="Pentobi self-play games as labelled positions")
    c.add_argument("--game", default="duo")
    c.add_argument("--level", type=int, default=6)
    c.add_argument("--files", type=int, default=15)
    c.add_argument("--games", type=int, default=100, help="games a file")
    c.add_argument("--seed", type=int, default=1000)
    c.add_argument("--out", default="benchmarks/data/prior")
    f = sub.add_parser("fit", help="fit the move model")
    f.add_argument("--variant", default="duo")
    f.add_argument("--data", default="benchmarks/data/prior")
    f.add_argument("--files", default=None, help="glob of the fit files (default: all but the held-out ones)")
    f.add_argument("--max-games", type=int, default=0, help="fit on the first N games of the fit files (0: all)")
    f.add_argument("--held-out", default="l6_chunk01*", help="glob of the held-out files")
    f.add_argument("--network", default="baseline:duo", help="baseline:NAME or az:RUN whose logit is a feature")
    f.add_argument(
        "--inputs",
        choices=("state", "observation"),
        default="state",
        help="planes of the whole position (the search's prior) or of the mover's observation (a policy network's; "
        "give --network '')",
    )
    f.add_argument("--l2", type=float, nargs="+", default=[1e-4, 1e-3])
    f.add_argument("--steps", type=int, default=400)
    f.add_argument("--labels", default="Pentobi level 6 self-play, book on")
    f.add_argument("--out", default="agents/search/move_model_duo.json")
    args = parser.parse_args(argv)
    if args.command == "collect":
        collect(args)
    else:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        fit_command(args)


if __name__ == "__main__":
    main()
