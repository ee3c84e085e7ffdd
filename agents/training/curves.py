"""The learning curve of a training run: the network's win rates against fixed bots during training (arena games
with intervals), those rates as text for the progress bar, and the plot `win_rate.png`. The loop that calls them is
`blokus_agents.training.train`.
"""

from __future__ import annotations

import functools
import io
import math
import os
from collections.abc import Sequence
from typing import Any

import jax
import numpy as np

from blokus_agents.core.policies import network_policy, resolve_agent
from blokus_agents.engines.arena import play_match, wilson_interval
from blokus_jax.errors import CheckpointError
from blokus_jax.io import fileio

PLOT_FILE = "win_rate.png"


def evaluate(trainer: Any, params: Any, opponents: Sequence[str], games: int, key: jax.Array) -> dict:
    """Win rate (ties count half) of the network with `params` against each bot in `opponents` over `games`
    arena games with seat rotation, on this process's first device.

    Args:
        trainer: The run's trainer (its `env` and `network`).
        params: The network's parameters; the network plays greedily.
        opponents: The agent specs of the bots to play.
        games: Games against each bot.
        key: The PRNG key; the match against bot `i` uses `fold_in(key, i)`.

    Returns:
        `{"win_rate_vs_<bot>": float, "win_rate_ci_vs_<bot>": [lo, hi]}` (Wilson 95 % intervals) and
        `"eval_games"`, the games per bot.
    """
    agent = network_policy(trainer.env, trainer.network, jax.device_get(params), greedy=True)
    out: dict[str, Any] = {}
    for i, name in enumerate(opponents):
        result = play_match(
            trainer.env,
            (agent, _bot(trainer.env, name)),
            ("agent", name),
            games,
            jax.random.fold_in(key, i),
            progress=False,
        )
        credit = np.asarray(result.credit[:, 0])
        out[f"win_rate_vs_{name}"] = float(credit.mean())
        out[f"win_rate_ci_vs_{name}"] = [round(x, 4) for x in wilson_interval(float(credit.sum()), len(credit))]
        out["eval_games"] = len(credit)
    return out


def win_rates_text(record: dict, sep: str = ", ") -> str:
    """The win rates of an evaluation record as `vs_greedy=0.73 [0.61-0.83] n=64` items joined by `sep`."""
    items = []
    for key, value in record.items():
        if key.startswith("win_rate_vs_"):
            lo, hi = record.get("win_rate_ci_" + key.removeprefix("win_rate_"), (math.nan, math.nan))
            name = key.removeprefix("win_rate_")
            items.append(f"{name}={value:.2f} [{lo:.2f}-{hi:.2f}] n={record.get('eval_games')}")
    return sep.join(items)


@functools.lru_cache(maxsize=16)
def _bot(env, name: str):
    """One policy per (env, spec), so that repeated evaluations hit the arena's compiled-match cache."""
    return resolve_agent(name, env)


def teacher_handover(records: list[dict]) -> int | None:
    """The environment steps at the end of the last update a teacher played (`by_teacher` 1) when a later
    update was played by the network's own search (`by_teacher` 0): where an AlphaZero run with `--teacher`
    handed over. `None` for a run without a teacher or one that has not handed over yet."""
    last_taught = None
    for record in records:
        taught = record.get("by_teacher")
        if taught == 1:
            last_taught = record["env_steps"]
        elif taught == 0 and last_taught is not None:
            return last_taught
    return None


def plot_win_rates(records: list[dict], path: str | os.PathLike, title: str) -> Any:
    """Save a PNG of every `win_rate_vs_<bot>` series in `records` against environment steps to `path`, each
    with its 95 % interval as a shaded band where the records have one (`win_rate_ci_vs_<bot>`), and a dashed line
    where a teacher handed over to the network (`teacher_handover`).

    Args:
        records: The run's metric records (each with `env_steps`).
        path: The PNG file to write (atomically, never through a symbolic link).
        title: The plot's title.

    Returns:
        The matplotlib `Figure`.

    Raises:
        CheckpointError: `path` is a symbolic link or not a regular file, or writing it fails.
    """
    from matplotlib.figure import Figure  # no pyplot: the caller's backend (e.g. a notebook's) is kept

    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    names = sorted({k for r in records for k in r if k.startswith("win_rate_vs_")})
    for name in names:
        points = [(r["env_steps"], r[name]) for r in records if name in r]
        (line,) = ax.plot(*zip(*points), marker="o", label=name.removeprefix("win_rate_"))
        ci = "win_rate_ci_" + name.removeprefix("win_rate_")
        bands = [(r["env_steps"], *r[ci]) for r in records if name in r and _is_interval(r.get(ci))]
        if bands:
            steps, low, high = zip(*bands)
            ax.fill_between(steps, low, high, color=line.get_color(), alpha=0.2, linewidth=0)
    handover = teacher_handover(records)
    if handover is not None:
        ax.axvline(handover, color="grey", linestyle="--", label="teacher hands over")
    ax.set(xlabel="environment steps", ylabel="win rate (ties half)", ylim=(-0.02, 1.02), title=title)
    ax.grid(alpha=0.3)
    if names or handover is not None:
        ax.legend()
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    fileio.write_atomic(path, buffer.getvalue(), what="plot", error=CheckpointError)  # never through a link
    return fig


def _is_interval(value: Any) -> bool:
    """Whether `value` is a `[low, high]` pair of finite numbers (a record's win-rate interval)."""
    return (
        isinstance(value, (list, tuple))
        and len(value) == 2
        and all(type(v) in (int, float) and math.isfinite(v) for v in value)
    )
