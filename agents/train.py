"""The host-side training loop around a trainer's ``update`` (PPO, :mod:`blokus_agents.ppo`, or AlphaZero,
:mod:`blokus_agents.alphazero`; chosen by the config's class): progress bar, metrics, evaluation, checkpoints and the
final learning-curve plot.

A run directory (``out_dir``) receives ``metrics.jsonl`` (one JSON object per update: loss terms, entropy, approx-KL,
explained variance, learning rate, env-steps/s (AlphaZero: policy and value loss, games finished, buffer size); plus
``win_rate_vs_<bot>`` on evaluation updates), TensorBoard events under ``tb/`` when ``tensorboardX`` is installed,
``checkpoints/<update>/`` (see :mod:`blokus_agents.checkpoint`) and, at the end, ``win_rate.png``: win rate against the
fixed bots over environment steps. Evaluation plays the current network (argmax of the masked policy, no search, for
either algorithm) against each bot in the arena (:func:`blokus_agents.arena.play_match`, seats rotated), on device.

The loop compiles the update once up front (and says how long that took), then runs one update per iteration of the
trainer (:func:`blokus_agents.algorithms.make_trainer`). A new run may start from another run's network (``init_from``:
e.g. AlphaZero warm-started from a PPO run). ``train.lock`` keeps a second trainer out of a run directory; a resumed run
first drops the records of ``metrics.jsonl`` written after its checkpoint, so each update is logged exactly once.
"""

from __future__ import annotations

import functools
import io
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

from blokus_agents import checkpoint, rundir
from blokus_agents.algorithms import make_trainer
from blokus_agents.arena import play_match, tqdm
from blokus_agents.configs import check_trainable
from blokus_agents.policies import network_policy, resolve_agent
from blokus_agents.ppo import make_mesh, with_lr_horizon
from blokus_agents.rundir import LOCK_FILE, METRICS_FILE, read_metrics, run_lock  # noqa: F401 (public names)
from blokus_jax import fileio
from blokus_jax.errors import CheckpointError

PLOT_FILE = "win_rate.png"


def default_mesh(config: Any):
    """A data-parallel mesh over every local device when there is more than one and ``config.num_envs`` splits
    evenly over them; ``None`` (plain single-device jit) otherwise."""
    count = jax.local_device_count()
    return make_mesh() if count > 1 and config.num_envs % count == 0 else None


def evaluate(trainer: Any, params: Any, opponents: Sequence[str], games: int, key: jax.Array) -> dict:
    """Win rate (ties count half) of the network with ``params`` against each bot in ``opponents`` over ``games``
    arena games with seat rotation; returns ``{"win_rate_vs_<bot>": float}``."""
    agent = network_policy(trainer.env, trainer.network, params, greedy=True)
    out = {}
    for i, name in enumerate(opponents):
        result = play_match(
            trainer.env,
            (agent, _bot(trainer.env, name)),
            ("agent", name),
            games,
            jax.random.fold_in(key, i),
            progress=False,
        )
        out[f"win_rate_vs_{name}"] = float(result.credit[:, 0].mean())
    return out


def warm_start(trainer: Any, runner: Any, run_dir: str | os.PathLike) -> Any:
    """``runner`` with the network of the newest checkpoint of ``run_dir`` (any algorithm) and a fresh optimiser
    state, placed like the originals. Raises ``CheckpointError`` when that run is of another variant or its network
    has another shape (``--channels``/``--blocks``/value size must match), or it has no checkpoint."""
    checkpoint.require_init_source(run_dir)
    source, params = checkpoint.load_params(run_dir)
    config = trainer.config
    if source.variant != config.variant:
        raise CheckpointError(
            f"--init-from {str(run_dir)!r} was trained on {source.variant!r}, this run is {config.variant!r}"
        )
    shape = ("channels", "blocks", "value_hidden")
    if any(getattr(source, f) != getattr(config, f) for f in shape):
        raise CheckpointError(
            f"--init-from {str(run_dir)!r} has a network of "
            f"{', '.join(f'{f}={getattr(source, f)}' for f in shape)}; this run has "
            f"{', '.join(f'{f}={getattr(config, f)}' for f in shape)}; give the same sizes"
        )
    params = jax.device_put(params, jax.tree.map(lambda x: x.sharding, runner.params))
    shardings = jax.tree.map(lambda x: x.sharding, runner.opt_state)
    opt_state = jax.jit(trainer.optimizer.init, out_shardings=shardings)(params)
    return runner.replace(params=params, opt_state=opt_state)


@functools.lru_cache(maxsize=16)
def _bot(env, name: str):
    """One policy per (env, spec), so that repeated evaluations hit the arena's compiled-match cache."""
    return resolve_agent(name, env)


def _tensorboard(out_dir: Path):
    """A tensorboardX ``SummaryWriter`` under ``out_dir/tb`` when tensorboardX is installed, else ``None``."""
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(out_dir / "tb"))


def plot_win_rates(records: list[dict], path: str | os.PathLike, title: str) -> None:
    """Save a PNG of every ``win_rate_vs_<bot>`` series in ``records`` against environment steps to ``path``."""
    from matplotlib.figure import Figure  # no pyplot: the caller's backend (e.g. a notebook's) is kept

    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    names = sorted({k for r in records for k in r if k.startswith("win_rate_vs_")})
    for name in names:
        points = [(r["env_steps"], r[name]) for r in records if name in r]
        ax.plot(*zip(*points), marker="o", label=name.removeprefix("win_rate_"))
    ax.set(xlabel="environment steps", ylabel="win rate (ties half)", ylim=(-0.02, 1.02), title=title)
    ax.grid(alpha=0.3)
    if names:
        ax.legend()
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    fileio.write_atomic(path, buffer.getvalue(), what="plot", error=CheckpointError)  # never through a link


def _estimated_horizon(config: Any, runner: Any, seconds_left: float, seconds_per_update: float) -> int:
    """Updates the run will reach: done so far plus what fits in the time left, capped by ``config.num_updates``."""
    return int(min(config.num_updates, int(runner.update) + seconds_left / max(seconds_per_update, 1e-9)))


def run(
    config: Any,
    out_dir: str | os.PathLike,
    *,
    minutes: float | None = None,
    resume: bool = False,
    eval_every: int = 10,
    eval_games: int = 32,
    opponents: Sequence[str] = ("random", "greedy"),
    checkpoint_every: int = 50,
    until_update: int | None = None,
    progress: bool = True,
    mesh: Any = "auto",
    init_from: str | os.PathLike | None = None,
) -> dict:
    """Train ``config`` (a :class:`~blokus_agents.ppo.PPOConfig` trains PPO, an
    :class:`~blokus_agents.alphazero.AZConfig` AlphaZero) until ``config.total_steps`` env steps, ``minutes`` of wall
    time or update number ``until_update``, whichever comes first, writing metrics, checkpoints and the plot to
    ``out_dir``.

    With ``resume`` the newest checkpoint in ``out_dir`` is continued exactly (its config must equal ``config``
    except for ``total_steps``); records of ``metrics.jsonl`` after that checkpoint (from a killed run) are dropped
    first. In a new time-limited run the learning-rate schedule is fitted to the time, measured on the second update.
    Evaluation runs before training, every ``eval_every`` updates and on the last update (``eval_games`` games per
    opponent, any agent spec). The last update is always checkpointed. ``mesh``: ``"auto"`` (all local devices when
    there are several), ``None`` or a :func:`~blokus_agents.ppo.make_mesh` mesh. A lock file keeps a second trainer out
    of ``out_dir``. ``init_from`` (a new run only): start from the newest network of that run directory (either
    algorithm, same variant and network size) with a fresh optimiser. Returns a summary dict: updates, env steps,
    seconds, compile seconds, mean env-steps/s of the updates, and the final win rates (those of the last
    evaluation, as on the progress bar).
    """
    out = Path(out_dir)
    # types, ranges, the replay ring and the memory estimate, before anything is written
    check_trainable(config, eval_games=eval_games if eval_every > 0 else 0)
    with rundir.claim(out):
        return _run(
            config,
            out,
            minutes,
            resume,
            eval_every,
            eval_games,
            tuple(opponents),
            checkpoint_every,
            until_update,
            progress,
            mesh,
            init_from,
        )


def _run(
    config: Any,
    out: Path,
    minutes: float | None,
    resume: bool,
    eval_every: int,
    eval_games: int,
    opponents: tuple[str, ...],
    checkpoint_every: int,
    until_update: int | None,
    progress: bool,
    mesh: Any,
    init_from: str | os.PathLike | None,
) -> dict:
    start = time.perf_counter()
    deadline = None if minutes is None else start + 60.0 * minutes
    say = (lambda text: print(text, file=sys.stderr, flush=True)) if progress else (lambda text: None)
    trainer = make_trainer(config, default_mesh(config) if mesh == "auto" else mesh)
    if resume and init_from is not None:
        raise CheckpointError("init_from (--init-from) starts a new run; it cannot be combined with resume (--resume)")
    if resume:
        runner = checkpoint.restore(out, trainer)
        rundir.truncate_metrics(out, int(runner.update))
    else:
        if checkpoint.latest_step(out) is not None:
            raise CheckpointError(
                f"{str(out)!r} already holds checkpoints; pass resume=True (--resume) "
                f"to continue that run or choose another output directory"
            )
        runner = trainer.init(jax.random.PRNGKey(config.seed))
        if init_from is not None:
            runner = warm_start(trainer, runner, init_from)
        rundir.truncate_metrics(out, -1)  # metrics of a run killed before its first checkpoint, once accepted
    last = config.num_updates if until_update is None else min(config.num_updates, until_update)
    eval_key = jax.random.fold_in(jax.random.PRNGKey(config.seed), 1)
    writer = _tensorboard(out)
    spu = config.steps_per_update

    name = {"ppo": "PPO", "alphazero": "AlphaZero"}[config.algorithm]
    say(f"compiling the {name} update ({config.variant}, {config.num_envs} games x {config.num_steps} steps)...")
    t0 = time.perf_counter()
    update_fn = trainer.update.lower(runner).compile()
    compile_s = time.perf_counter() - t0
    say(f"compiled in {compile_s:.1f} s")

    def log(record: dict) -> None:
        rundir.append_metrics(out, record)
        if writer is not None:
            for k, v in record.items():
                if isinstance(v, (int, float)) and k not in ("update", "env_steps"):
                    writer.add_scalar(k, v, record["env_steps"])

    bar = None

    def evaluation(params: Any, update: int) -> dict:
        result = evaluate(trainer, params, opponents, eval_games, jax.random.fold_in(eval_key, update))
        if bar is not None:
            bar.set_postfix({k.removeprefix("win_rate_"): f"{v:.2f}" for k, v in result.items()}, refresh=True)
        return result

    if not resume and eval_every > 0:
        say(f"evaluating the initial network against {', '.join(opponents)} ({eval_games} games each)...")
        log({"update": 0, "env_steps": 0, "time_s": time.perf_counter() - start, **evaluation(runner.params, 0)})
    if minutes:
        bar = tqdm(
            total=round(60 * minutes),
            initial=min(round(time.perf_counter() - start), round(60 * minutes)),
            disable=not progress,
            desc=f"train {config.variant}",
            bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} s{postfix}",
        )
    else:
        bar = tqdm(
            total=(last - int(runner.update)) * spu,
            disable=not progress,
            unit="step",
            unit_scale=True,
            desc=f"train {config.variant}",
        )
    rates: list[float] = []
    out_of_time = lambda: deadline is not None and time.perf_counter() >= deadline  # noqa: E731
    done = int(runner.update) >= last or out_of_time()
    while not done:
        t0 = time.perf_counter()
        runner, metrics = update_fn(runner)
        metrics = {k: float(v) for k, v in jax.device_get(metrics).items()}
        seconds = time.perf_counter() - t0
        update = int(runner.update)
        rates.append(spu / seconds)
        if deadline is not None and update == 2 and not resume:
            horizon = _estimated_horizon(config, runner, deadline - time.perf_counter(), seconds)
            runner = with_lr_horizon(runner, max(horizon, update))
        done = update >= last or out_of_time()  # decided once: the last update is evaluated and saved
        record = {
            "update": update,
            "env_steps": update * spu,
            "time_s": time.perf_counter() - start,
            "steps_per_s": spu / seconds,
            **metrics,
        }
        if eval_every > 0 and (update % eval_every == 0 or done):
            record.update(evaluation(runner.params, update))
        log(record)  # before the checkpoint: a resume drops what comes after it
        if done or (checkpoint_every > 0 and update % checkpoint_every == 0):
            checkpoint.save(out, runner, config)
        bar.update(min(bar.total, round(time.perf_counter() - start)) - bar.n if minutes else spu)
    bar.close()
    update = int(runner.update)
    checkpoint.save(out, runner, config)
    if writer is not None:
        writer.close()
    records = rundir.read_evaluations(out)
    from blokus_jax import _extras  # a missing matplotlib skips the plot with a warning; the run is kept

    if _extras.available("train", f"the win-rate plot {PLOT_FILE}", ("matplotlib",)):
        plot_win_rates(records, out / PLOT_FILE, f"{name} self-play on {config.variant}")
    evaluated = [r for r in records if any(k.startswith("win_rate_vs_") for k in r)]
    final = {k: v for k, v in (evaluated[-1] if evaluated else {}).items() if k.startswith("win_rate_vs_")}
    return {
        "updates": update,
        "env_steps": update * spu,
        "seconds": time.perf_counter() - start,
        "compile_s": compile_s,
        "steps_per_s": float(np.mean(rates[1:] or rates)) if rates else math.nan,
        **final,
    }
