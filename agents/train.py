"""The host-side training loop around :meth:`agents.ppo.PPOTrainer.update`: progress bar, metrics, evaluation,
checkpoints and the final learning-curve plot.

A run directory (``out_dir``) receives ``metrics.jsonl`` (one JSON object per update: loss terms, entropy, approx-KL,
explained variance, learning rate, env-steps/s; plus ``win_rate_vs_<bot>`` on evaluation updates), TensorBoard
events under ``tb/`` when ``tensorboardX`` is installed, ``checkpoints/<update>/`` (see :mod:`agents.checkpoint`)
and, at the end, ``win_rate.png``: win rate against the fixed bots over environment steps. Evaluation plays the
current network (argmax of the masked policy) against each bot in the arena (:func:`agents.arena.play_match`, seats
rotated), on device.
"""

from __future__ import annotations

import functools
import json
import math
import os
import time
from pathlib import Path
from typing import Any, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from tqdm.auto import tqdm

from agents import checkpoint
from agents.arena import play_match
from agents.bots import get_bot
from agents.ppo import PPOConfig, PPOTrainer, Runner, make_mesh
from blokus_jax.errors import CheckpointError

METRICS_FILE = "metrics.jsonl"
PLOT_FILE = "win_rate.png"


def default_mesh(config: PPOConfig):
    """A data-parallel mesh over every local device when there is more than one and ``config.num_envs`` splits
    evenly over them; ``None`` (plain single-device jit) otherwise."""
    count = jax.local_device_count()
    return make_mesh() if count > 1 and config.num_envs % count == 0 else None


def evaluate(trainer: PPOTrainer, params: Any, opponents: Sequence[str], games: int, key: jax.Array) -> dict:
    """Win rate (ties count half) of the network with ``params`` against each bot in ``opponents`` over ``games``
    arena games with seat rotation; returns ``{"win_rate_vs_<bot>": float}``."""
    agent = trainer.policy(params, greedy=True)
    out = {}
    for i, name in enumerate(opponents):
        result = play_match(trainer.env, (agent, _bot(trainer.env, name)), ("agent", name), games,
                            jax.random.fold_in(key, i), progress=False)
        out[f"win_rate_vs_{name}"] = float(result.credit[:, 0].mean())
    return out


@functools.lru_cache(maxsize=16)
def _bot(env, name: str):
    """One bot function per (env, name), so that repeated evaluations hit the arena's compiled-match cache."""
    return get_bot(name, env)


def _tensorboard(out_dir: Path):
    """A tensorboardX ``SummaryWriter`` under ``out_dir/tb`` when tensorboardX is installed, else ``None``."""
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(out_dir / "tb"))


def read_metrics(out_dir: str | os.PathLike) -> list[dict]:
    """The records of ``out_dir/metrics.jsonl`` (every update of the run, resumed parts included)."""
    path = Path(out_dir) / METRICS_FILE
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def plot_win_rates(records: list[dict], path: str | os.PathLike, title: str) -> None:
    """Save a PNG of every ``win_rate_vs_<bot>`` series in ``records`` against environment steps to ``path``."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    names = sorted({k for r in records for k in r if k.startswith("win_rate_vs_")})
    for name in names:
        points = [(r["env_steps"], r[name]) for r in records if name in r]
        ax.plot(*zip(*points), marker="o", label=name.removeprefix("win_rate_"))
    ax.set(xlabel="environment steps", ylabel="win rate (ties half)", ylim=(-0.02, 1.02), title=title)
    ax.grid(alpha=0.3)
    if names:
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _estimated_horizon(config: PPOConfig, runner: Runner, seconds_left: float, seconds_per_update: float) -> int:
    """Updates the run will reach: done so far plus what fits in the time left, capped by ``config.num_updates``."""
    return int(min(config.num_updates, int(runner.update) + seconds_left / max(seconds_per_update, 1e-9)))


def run(config: PPOConfig, out_dir: str | os.PathLike, *, minutes: float | None = None, resume: bool = False,
        eval_every: int = 10, eval_games: int = 32, opponents: Sequence[str] = ("random", "greedy"),
        checkpoint_every: int = 50, until_update: int | None = None, progress: bool = True,
        mesh: Any = "auto") -> dict:
    """Train with PPO self-play until ``config.total_steps`` env steps, ``minutes`` of wall time or update number
    ``until_update``, whichever comes first, writing metrics, checkpoints and the plot to ``out_dir``.

    With ``resume`` the newest checkpoint in ``out_dir`` is continued exactly (its config must equal ``config`` except
    for ``total_steps``). In a new time-limited run the learning-rate schedule is fitted to the time, measured on
    the second update. Evaluation runs before training, every ``eval_every`` updates and at the end (``eval_games``
    games per bot). ``mesh``: ``"auto"`` (all local devices when there are several), ``None`` or a
    :func:`~agents.ppo.make_mesh` mesh. Returns a summary dict: updates, env steps, seconds, mean env-steps/s of the
    updates after the first (which compiles), and the final win rates.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    trainer = PPOTrainer(config, default_mesh(config) if mesh == "auto" else mesh)
    if resume:
        runner = checkpoint.restore(out, trainer)
    else:
        if checkpoint.latest_step(out) is not None:
            raise CheckpointError(f"{str(out)!r} already holds checkpoints; pass resume=True (--resume) "
                                  f"to continue that run or choose another output directory")
        runner = trainer.init(jax.random.PRNGKey(config.seed))
    last = config.num_updates if until_update is None else min(config.num_updates, until_update)
    start = time.perf_counter()
    deadline = None if minutes is None else start + 60.0 * minutes
    eval_key = jax.random.fold_in(jax.random.PRNGKey(config.seed), 1)
    writer = _tensorboard(out)
    spu = config.steps_per_update
    bar = tqdm(total=int(60 * minutes) if minutes else (last - int(runner.update)) * spu, disable=not progress,
               unit="s" if minutes else "step", unit_scale=not minutes, desc=f"train {config.variant}")
    rates: list[float] = []
    compiled = False
    record: dict[str, Any] = {}

    def log(record: dict) -> None:
        with open(out / METRICS_FILE, "a") as f:
            f.write(json.dumps(record) + "\n")
        if writer is not None:
            for k, v in record.items():
                if isinstance(v, (int, float)) and k not in ("update", "env_steps"):
                    writer.add_scalar(k, v, record["env_steps"])

    def evaluation(params: Any, update: int) -> dict:
        result = evaluate(trainer, params, opponents, eval_games, jax.random.fold_in(eval_key, update))
        bar.set_postfix({k.removeprefix("win_rate_"): f"{v:.2f}" for k, v in result.items()}, refresh=False)
        return result

    if not resume and eval_every > 0:
        log({"update": 0, "env_steps": 0, "time_s": 0.0, **evaluation(runner.params, 0)})
    while int(runner.update) < last and (deadline is None or time.perf_counter() < deadline):
        t0 = time.perf_counter()
        runner, metrics = trainer.update(runner)
        metrics = {k: float(v) for k, v in jax.device_get(metrics).items()}
        seconds = time.perf_counter() - t0
        update = int(runner.update)
        if compiled:
            rates.append(spu / seconds)
        compiled = True                      # the first update of a process includes compilation
        if deadline is not None and update == 2 and not resume:
            horizon = _estimated_horizon(config, runner, deadline - time.perf_counter(), seconds)
            runner = runner.replace(lr_horizon=jnp.int32(max(horizon, update)))
        record = {"update": update, "env_steps": update * spu, "time_s": time.perf_counter() - start,
                  "steps_per_s": spu / seconds, **metrics}
        if eval_every > 0 and update % eval_every == 0:
            record.update(evaluation(runner.params, update))
        if checkpoint_every > 0 and update % checkpoint_every == 0:
            checkpoint.save(out, runner, config)
        log(record)
        bar.update(min(bar.total, int(time.perf_counter() - start)) - bar.n if minutes else spu)
    bar.close()
    update = int(runner.update)
    if eval_every > 0 and record.get("update") == update and f"win_rate_vs_{opponents[0]}" not in record:
        log({"update": update, "env_steps": update * spu, "time_s": time.perf_counter() - start,
             **evaluation(runner.params, update)})
    checkpoint.save(out, runner, config)
    if writer is not None:
        writer.close()
    records = read_metrics(out)
    plot_win_rates(records, out / PLOT_FILE, f"PPO self-play on {config.variant}")
    final = {k: v for r in records for k, v in r.items() if k.startswith("win_rate_vs_")}
    return {"updates": update, "env_steps": update * spu, "seconds": time.perf_counter() - start,
            "steps_per_s": float(np.mean(rates)) if rates else math.nan, **final}
