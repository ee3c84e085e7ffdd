"""The host-side training loop around a trainer's `update` (PPO, `blokus_agents.training.ppo`, or AlphaZero,
`blokus_agents.training.alphazero`; chosen by the config's class): progress bar, metrics, evaluation, checkpoints and
the final learning-curve plot.

Design notes: `docs/design.md`.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from tqdm import TqdmWarning

from blokus_agents.players import checkpoint_index, checkpoint_read
from blokus_agents.players.configs import RunConfig
from blokus_agents.training import checkpoint, distributed, optim, rundir
from blokus_agents.training.algorithms import make_trainer
from blokus_agents.training.checks import check_trainable
from blokus_agents.training.curves import (
    PLOT_FILE,
    evaluate,
    plot_win_rates,
    win_rates_text,
)
from blokus_agents.training.mesh import default_mesh
from blokus_agents.training.rundir import (
    Settings,
    _write_settings,
    read_metrics,
    read_settings,
    resolve_settings,
)
from blokus_jax import _extras
from blokus_jax.errors import CheckpointError, ConfigError

with warnings.catch_warnings():  # a notebook without ipywidgets falls back to text bars quietly
    warnings.simplefilter("ignore", TqdmWarning)
    from tqdm.auto import tqdm


@dataclass(frozen=True)
class InitNetwork:
    """A network to start a new run from that is not a run directory (`--init-from baseline:NAME`): `label` names
    it in messages, `config` is the config it was trained with (its variant and network size), `params` its
    parameters."""

    label: str
    config: RunConfig
    params: Any


def warm_start(trainer: Any, runner: Any, run_dir: str | os.PathLike | InitNetwork) -> Any:
    """`runner` with the network of the newest checkpoint of `run_dir` (any algorithm; or an `InitNetwork`) and a fresh
    optimiser state, placed like the originals. When only the value head's size differs (a PPO run's scalar critic
    warm-starting AlphaZero's per-seat head with 3-4 players, `value_dim`), everything but the value head's output
    layer is copied and that layer keeps its fresh initialisation.

    Args:
        trainer: The new run's trainer (its config, environment and optimiser).
        runner: The new run's fresh runner, whose placement the result keeps.
        run_dir: The run directory to start from, or an `InitNetwork`.

    Returns:
        The runner with the copied parameters and a fresh optimiser state (and, for PPO, the KL term's reference
        parameters set to them).

    Raises:
        CheckpointError: That run is of another variant or its network has another shape (`--channels`,
            `--blocks` and `value_hidden` must match), or it has no checkpoint.
    """
    if isinstance(run_dir, InitNetwork):
        source, params, run_dir = run_dir.config, run_dir.params, run_dir.label
    else:
        checkpoint_index.require_init_source(run_dir)
        source, params = checkpoint_read.load_params(run_dir)
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
    if source.value_dim(trainer.env.num_players) != config.value_dim(trainer.env.num_players):
        params = _with_fresh_value_output(jax.device_get(params), jax.device_get(runner.params), run_dir)
    params = jax.device_put(params, jax.tree.map(lambda x: x.sharding, runner.params))
    shardings = jax.tree.map(lambda x: x.sharding, runner.opt_state)
    opt_state = jax.jit(trainer.optimizer.init, out_shardings=shardings)(params)
    runner = runner.replace(params=params, opt_state=opt_state)
    if getattr(runner, "ref_params", None) is not None:  # PPO's KL term holds the run near the network it starts from
        runner = runner.replace(ref_params=jax.tree.map(jnp.copy, params))  # its own buffers: update donates both
    return runner


def _with_fresh_value_output(source_params: Any, fresh_params: Any, run_dir: str | os.PathLike) -> Any:
    """`source_params` (of the `--init-from` run `run_dir`) with the value head's output layer taken from
    `fresh_params`, a network of the same sizes but another value size: that layer's kernel and bias are the only
    parameters whose shapes differ (`CheckpointError` otherwise)."""
    paths = jax.tree_util.tree_flatten_with_path(source_params)[0]
    fresh = dict(jax.tree_util.tree_flatten_with_path(fresh_params)[0])
    differ = {path for path, leaf in paths if path not in fresh or fresh[path].shape != leaf.shape}
    if len(differ) != 2 or len(fresh) != len(paths):
        raise CheckpointError(
            f"--init-from {str(run_dir)!r}: its network differs from this run's in more than the value head's size"
        )
    return jax.tree_util.tree_map_with_path(lambda path, leaf: fresh[path] if path in differ else leaf, source_params)


def _tensorboard(out_dir: Path):
    """A tensorboardX `SummaryWriter` under `out_dir/tb` when tensorboardX is installed, else `None`."""
    try:
        from tensorboardX import SummaryWriter
    except ImportError:
        return None
    return SummaryWriter(str(out_dir / "tb"))


def _estimated_horizon(config: RunConfig, update: int, seconds_left: float, seconds_per_update: float) -> int:
    """Updates the run will reach: `update` so far plus what fits in the time left, capped by
    `config.num_updates`."""
    return int(min(config.num_updates, update + seconds_left / max(seconds_per_update, 1e-9)))


def run(
    config: RunConfig,
    out_dir: str | os.PathLike,
    *,
    minutes: float | None = None,
    resume: bool = False,
    eval_every: int | None = None,
    eval_games: int | None = None,
    opponents: Sequence[str] | None = None,
    checkpoint_every: int | None = None,
    checkpoint_minutes: float | None = None,
    evals: int | None = None,
    keep_checkpoints: int | None = None,
    until_update: int | None = None,
    progress: bool = True,
    mesh: Any = "auto",
    init_from: str | os.PathLike | InitNetwork | None = None,
) -> dict:
    """Train `config` (a `PPOConfig` trains PPO, an `AZConfig` AlphaZero) until `config.total_steps` env steps,
    `minutes` of wall time on the run's clock (which does not count compiling the update: a resumed run that misses
    the compilation cache loses none of its budget to it) or update number `until_update`, whichever comes first,
    writing metrics, checkpoints and the plot to `out_dir`.

    The host-loop settings (a new run takes the defaults of `blokus_agents.training.rundir.Settings`, e.g.
    `eval_every` 25, `eval_games` 64, `minutes` none: no time limit) are kept in
    `out_dir/settings.json`: with `resume` each one left at `None` keeps its saved value (`minutes=math.inf`
    drops a saved time limit), and those that change are printed. With `resume` the newest checkpoint in
    `out_dir` is continued exactly (its config must equal `config` except for `total_steps` and `precision`);
    records of `metrics.jsonl` after that checkpoint (from a killed run) are dropped first, and the run's clock
    (`time_s`) continues from that checkpoint's record: `minutes` is the budget of the whole run, not of each call.

    The learning rate decays linearly over the run: over `config.num_updates` updates, or, in a time-limited call
    (new or resumed), over the updates it expects to reach by its deadline, fitted from the wall time of its updates
    so far (logging, evaluations and checkpoints included) on its updates 2, 4, 8, ..., so that the rate reaches its
    final fraction when the time is up (a resumed call may thus step it up). Evaluation runs before a new run, every
    `eval_every` updates, with a time budget each time another `1/evals` of it has passed (`evals` 0: never by
    time), and on the last update (`eval_games` games per opponent, any agent spec; none when `eval_every` is 0).
    A checkpoint is saved every `checkpoint_every` updates, when `checkpoint_minutes` have passed since the last
    one, and on the last update; the newest `keep_checkpoints` are kept (0: all of them, for a learning curve). A
    non-finite loss or parameter norm stops the run with a `ConfigError` (nothing of that update is saved; earlier
    checkpoints are kept).

    SIGINT (Ctrl-C) or SIGTERM stops the run after the update under way: its checkpoint, metrics and plot are
    written and the summary (`interrupted` true) is returned; the line printed says how to resume. A second signal
    stops at once (`KeyboardInterrupt`), keeping the earlier checkpoints.

    With several processes (`blokus_agents.training.distributed.start_distributed`) every process calls `run` with the
    same arguments; process 0 holds the lock, writes the metrics, settings and plot and prints; checkpoints are
    written and read by all together. A lock file keeps a second trainer out of `out_dir`.

    Args:
        config: The run's config: a `PPOConfig` trains PPO, an `AZConfig` AlphaZero.
        out_dir: The run directory: metrics, settings, checkpoints and the plot.
        minutes: The wall-time budget of the whole run, on the run's clock (`math.inf` drops a saved one).
        resume: Continue the newest checkpoint in `out_dir`.
        eval_every: Updates between evaluations (0: never).
        eval_games: Games per evaluation against each opponent.
        opponents: The agent specs evaluated against.
        checkpoint_every: Updates between checkpoints (0: only at the end).
        checkpoint_minutes: Also save a checkpoint when this many minutes have passed since the last one (0: off).
        evals: With a time budget, also evaluate each time another `1/evals` of it has passed (0: never by time).
        keep_checkpoints: The newest checkpoints kept (0: all of them).
        until_update: Stop at this update number.
        progress: Show the progress bar (process 0 prints its lines of text, compiling and the first
            evaluation, either way).
        mesh: `"auto"` (`blokus_agents.training.mesh.default_mesh` of `config.num_envs`: every device of every
            process with several processes, else as many local devices as the games split evenly over), `None`
            or a `make_mesh` mesh.
        init_from: Start from the newest network of that run directory (either algorithm, same variant and
            network size), or of an `InitNetwork`, with a fresh optimiser (a new run only); that network is
            saved as checkpoint 0.

    Returns:
        A summary dict: updates, env steps, seconds (this session's; `run_seconds`: the run's clock, earlier
        sessions included), compile seconds, mean env-steps/s of the updates, and the final win rates with their
        intervals and game count (those of the last evaluation).

    Raises:
        CheckpointError: `out_dir` is a file, `init_from` is combined with `resume`, or the run directory, its
            lock or its checkpoints cannot be used.
        ConfigError: A config or setting the run cannot train with (`blokus_agents.training.checks.check_trainable`),
            processes started with different settings, or a non-finite loss or parameter norm.
        KeyboardInterrupt: A second stop signal.
    """
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise CheckpointError(f"output directory {str(out)!r} is a file; choose a directory for the run")
    if resume and init_from is not None:
        raise CheckpointError("init_from (--init-from) starts a new run; it cannot be combined with resume (--resume)")
    given = dict(
        minutes=minutes,
        eval_every=eval_every,
        eval_games=eval_games,
        opponents=opponents,
        checkpoint_every=checkpoint_every,
        checkpoint_minutes=checkpoint_minutes,
        evals=evals,
        keep_checkpoints=keep_checkpoints,
    )
    given = {k: v for k, v in given.items() if v is not None}
    settings, changed = resolve_settings(read_settings(out) if resume else None, given)
    # types, ranges, the replay ring and the memory estimate, before anything is written
    check_trainable(config, eval_games=settings.eval_games if settings.eval_every > 0 else 0)
    checkpoint_index.check_run_dir(out)  # a `checkpoints` that is a file, a misnamed checkpoint: before any compiling
    _check_same_run(config, settings, out, resume, until_update)
    with _process_lock(out), StopSignals() as stop:
        session = _Session(config, out, settings, progress, mesh, until_update, stop)
        try:
            return session.run(resume, init_from, changed)
        finally:
            session.close()


class StopSignals:
    """While entered (in the main thread), SIGINT and SIGTERM ask a training run to stop cleanly instead of
    killing it: the first one sets `received` (the signal's name), which the loop checks after each update; a
    second one raises `KeyboardInterrupt` at once. The previous handlers are restored on exit. Elsewhere than in
    the main thread (where Python cannot install handlers) it does nothing."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.received: str | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in self.SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def _handle(self, signum: int, frame: Any) -> None:
        if self.received is not None:
            self.__exit__()
            raise KeyboardInterrupt(
                f"{signal.Signals(signum).name} received twice: stopped at once (the newest complete checkpoint stays)"
            )
        self.received = signal.Signals(signum).name


def _check_same_run(config: RunConfig, settings: Settings, out: Path, resume: bool, until_update: int | None) -> None:
    """With several processes, raise `ConfigError` in every one of them unless all were started with the same
    config, host-loop settings, run directory and resume flag (process 0's are compared with each process's own)."""
    if jax.process_count() == 1:
        return
    text = json.dumps([config.to_dict(), settings.to_dict(), str(out), resume, until_update], sort_keys=True)
    digest = int(hashlib.sha256(text.encode()).hexdigest()[:7], 16)  # 28 bits: an int32 on every device
    if distributed.any_process(int(distributed.agree(digest)) != digest):
        raise ConfigError(
            "the processes of this run were started with different settings: start every process with the same "
            "flags (--variant, --out, --num-envs, --minutes, --resume, ...) but its own --process-id"
        )


@contextmanager
def _process_lock(out: Path) -> Iterator[None]:
    """Claim `out` (`blokus_agents.training.rundir.claim`: create it and hold its run lock) in process 0 for the whole
    run; with several processes the others learn whether process 0 got it, and all stop together when it did not."""
    if jax.process_count() == 1:
        with rundir.claim(out):
            yield
        return
    error: CheckpointError | None = None
    with ExitStack() as stack:
        if distributed.is_primary():
            try:
                stack.enter_context(rundir.claim(out))
            except CheckpointError as exc:
                error = exc
        if not distributed.agree(error is None):
            raise error or CheckpointError(
                f"process 0 could not take the lock of {str(out)!r} (another trainer uses it; see process 0's message)"
            )
        yield


class _Session:
    """One call of `run`, in the order it happens: `start` (a new, warm-started or restored runner),
    `compile`, the first evaluation, `train` (the loop of updates, evaluations and checkpoints), then
    `finish` (the last checkpoint, the plot and the summary). Only process 0 writes files and prints."""

    #: The clock of the session (seconds, monotonic); tests may replace it.
    clock = staticmethod(time.perf_counter)

    def __init__(
        self,
        config: RunConfig,
        out: Path,
        settings: Settings,
        progress: bool,
        mesh: Any,
        until_update: int | None,
        stop: StopSignals | None = None,
    ):
        self.config, self.out, self.settings = config, out, settings
        self.stop = stop or StopSignals()
        self.interrupted = False
        self.primary = distributed.is_primary()
        self.begin = self.clock()
        self.clock0 = 0.0  # the run's clock when this session began (seconds trained by earlier sessions)
        self.deadline = None if settings.minutes is None else self.begin + 60.0 * settings.minutes
        self.last_save = self.begin
        self.next_eval = math.inf  # the run's clock (seconds) at which the next evaluation by time is due
        self.verbose = self.primary  # lines of text (compiling, the first evaluation) are shown even without a bar
        self.progress = progress and self.primary
        self.trainer = make_trainer(config, default_mesh(config.num_envs) if mesh == "auto" else mesh)
        self.last = config.num_updates if until_update is None else min(config.num_updates, until_update)
        self.eval_key = jax.random.fold_in(jax.random.PRNGKey(config.seed), 1)
        self.name = {"ppo": "PPO", "alphazero": "AlphaZero"}[config.algorithm]
        self.writer = _tensorboard(out) if self.primary else None
        self.bar: Any = None
        self.rates: list[float] = []
        self.compile_s = math.nan

    def say(self, text: str) -> None:
        """Print a line for the user on stderr (process 0)."""
        if self.verbose:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        """Close the progress bar and the TensorBoard writer (also after an error)."""
        if self.bar is not None:
            self.bar.close()
        if self.writer is not None:
            self.writer.close()
            self.writer = None

    def elapsed(self) -> float:
        """The run's clock: seconds of training so far, earlier sessions included (`time_s` of the metrics)."""
        return self.clock0 + self.clock() - self.begin

    def out_of_time(self) -> bool:
        """Whether the deadline has passed, as process 0 sees it (the same answer in every process)."""
        return bool(distributed.agree(self.deadline is not None and self.clock() >= self.deadline))

    def stopping(self) -> bool:
        """Whether a stop signal reached any process (`StopSignals`); announced once, on process 0."""
        if not self.interrupted and distributed.any_process(self.stop.received is not None):
            self.interrupted = True
            self.say(
                f"\n{self.stop.received or 'a stop signal'} received: stopping after this update and saving a "
                f"checkpoint (send it again to stop at once without saving)"
            )
        return self.interrupted

    # 1. the runner
    def start(self, resume: bool, init_from: str | os.PathLike | InitNetwork | None, changed: list[str]) -> Any:
        """The runner to train: restored from the newest checkpoint (`resume`), else new (optionally with the
        network of `init_from`). Writes the session's settings once the run is accepted."""
        trainer, out = self.trainer, self.out
        if resume:
            for name in checkpoint.remove_partial(out) if self.primary else []:
                self.say(f"removed {name!r}, a checkpoint whose save was cut short (the finished ones are kept)")
            runner = checkpoint.restore(out, trainer)
            update = int(runner.update)
            if self.primary:
                rundir.truncate_metrics(out, update)
            self.clock0 = float(distributed.agree(rundir.run_clock(out, update) if self.primary else 0.0))
            if self.deadline is not None:
                self.deadline -= self.clock0
            horizon = min(self.config.num_updates, optim.MAX_HORIZON)
            if self.deadline is None and optim.lr_horizon(runner) != horizon:
                changed.append(f"learning-rate horizon {horizon} updates (was {optim.lr_horizon(runner)})")
                runner = optim.with_lr_horizon(runner, horizon)
            self.say(f"resumed from update {update}{self.budget_text()}")
            for line in changed:
                self.say(f"resumed with {line}")
        else:
            if checkpoint_index.latest_step(out) is not None:
                raise CheckpointError(
                    f"{str(out)!r} already holds checkpoints; pass resume=True to continue that run or choose another "
                    f"output directory"
                )
            runner = trainer.init(np.asarray(jax.random.PRNGKey(self.config.seed)))
            if init_from is not None:
                runner = warm_start(trainer, runner, init_from)
            if self.primary:  # metrics of a run killed before its first checkpoint, once this run is accepted
                rundir.truncate_metrics(out, -1)
        if self.primary:
            _write_settings(out, self.settings)
        if init_from is not None:
            # checkpoint 0 holds the network the run starts from, so that the run directory alone says where it
            # began (a learning curve's first point) and a run stopped before its first save resumes from there
            checkpoint.save(out, runner, self.config, keep=self.settings.keep_checkpoints or None)
        return runner

    def budget_text(self) -> str:
        """How much of the run's time budget is used and left, for the resume line (empty without a budget)."""
        minutes = self.settings.minutes
        if minutes is None:
            return ""
        used = self.clock0 / 60
        if used >= minutes:
            return (
                f", its time budget is spent ({used:.1f} of --minutes {minutes:g}, the whole run's budget): give a "
                f"larger --minutes to train longer, e.g. --minutes {math.ceil(used + minutes):g}"
            )
        return f" at {used:.1f} of {minutes:g} minutes ({minutes - used:.1f} min left)"

    # 2. compile
    def compile(self, runner: Any) -> Any:
        """The compiled update (timed and announced)."""
        c = self.config
        mesh = self.trainer.mesh
        if mesh is not None:
            where = f", over {mesh.size} {mesh.devices.flat[0].platform} devices"
        else:
            platform, count = jax.local_devices()[0].platform, jax.local_device_count()
            where = f", on 1 of {count} {platform} devices" if count > 1 else f", on 1 {platform} device"
        self.say(f"compiling the {self.name} update ({c.variant}, {c.num_envs} games x {c.num_steps} steps{where})...")
        t0 = self.clock()
        update_fn = self.trainer.update.lower(runner).compile()
        self.compile_s = self.clock() - t0
        self.say(f"compiled in {self.compile_s:.1f} s")
        # Compiling is not training: the run's clock (and so its time budget) stops while the update compiles.
        self.begin, self.last_save = self.begin + self.compile_s, self.last_save + self.compile_s
        if self.deadline is not None:
            self.deadline += self.compile_s
        return update_fn

    def log(self, record: dict) -> None:
        """Append `record` to `metrics.jsonl` (and TensorBoard); process 0 only."""
        if not self.primary:
            return
        rundir.append_metrics(self.out, record)
        if self.writer is not None:
            for k, v in record.items():
                if isinstance(v, (int, float)) and k not in ("update", "env_steps", "eval_games"):
                    self.writer.add_scalar(k, v, record["env_steps"])

    def evaluate(self, params: Any, update: int) -> dict:
        """Win rates of `params` against the opponents (process 0; `{}` elsewhere), also shown on the bar."""
        if not self.primary:
            return {}
        s = self.settings
        result = evaluate(self.trainer, params, s.opponents, s.eval_games, jax.random.fold_in(self.eval_key, update))
        if self.bar is not None and not self.bar.disable:
            self.bar.set_postfix_str(win_rates_text(result), refresh=True)
            self.bar.unpause()  # the bar's rate is training speed: the evaluation's time is left out
        return result

    # 3. the loop
    def open_bar(self, runner: Any) -> None:
        """The progress bar: seconds of the time budget, or environment steps to go."""
        desc, minutes = f"train {self.config.variant}", self.settings.minutes
        if minutes:
            self.bar = tqdm(
                total=round(60 * minutes),
                initial=min(round(self.elapsed()), round(60 * minutes)),
                disable=not self.progress,
                desc=desc,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {n:.0f}/{total:.0f} s{postfix}",
            )
        else:
            total = max(0, self.last - int(runner.update)) * self.config.steps_per_update
            self.bar = tqdm(total=total, disable=not self.progress, unit="step", unit_scale=True, desc=desc)

    def check_finite(self, metrics: dict, update: int) -> None:
        """Stop with a `ConfigError` when an update's loss or parameter norm is not finite (training diverged)."""
        bad = [k for k, v in metrics.items() if not math.isfinite(v)]
        if not bad:
            return
        saved = checkpoint_index.latest_step(self.out)
        keep = (
            f"the last checkpoint (update {saved}) is kept: continue from its network with --init-from "
            f"{str(self.out)!r} and a new --out"
            if saved is not None
            else "no checkpoint was written before it"
        )
        raise ConfigError(
            f"training diverged at update {update}: {', '.join(bad)} not finite (learning rate "
            f"{metrics.get('learning_rate', math.nan):.3g}); nothing of that update was saved and {keep}; "
            f"train again with a lower --lr (learning_rate), now {self.config.learning_rate:g}"
        )

    def fit_horizon(self, runner: Any, seconds_per_update: float) -> Any:
        """`runner` with its learning rate decaying to the final fraction by the deadline (agreed horizon), at
        `seconds_per_update` of wall time an update."""
        update = int(runner.update)
        horizon = _estimated_horizon(self.config, update, self.deadline - self.clock(), seconds_per_update)
        return optim.with_lr_horizon(runner, int(distributed.agree(max(horizon, update))))

    def eval_period(self) -> float | None:
        """Seconds of the run's clock between evaluations by time (`evals` over the budget), or `None`."""
        s = self.settings
        return 60.0 * s.minutes / s.evals if s.evals > 0 and s.minutes and s.eval_every > 0 else None

    def schedule_eval(self) -> None:
        """Set the next evaluation by time to the next multiple of `eval_period` on the run's clock."""
        period = self.eval_period()
        if period is not None:
            self.next_eval = (math.floor(self.elapsed() / period) + 1) * period

    def eval_due(self, update: int, done: bool) -> bool:
        """Whether update `update` is evaluated: every `eval_every` updates, the last one (unless stopped by a
        signal), or once the run's clock reaches the next evaluation by time (process 0's clock decides)."""
        s = self.settings
        if s.eval_every <= 0:
            return False
        if update % s.eval_every == 0 or (done and not self.interrupted):
            return True
        return self.eval_period() is not None and bool(distributed.agree(self.elapsed() >= self.next_eval))

    def save_due(self, update: int, done: bool) -> bool:
        """Whether update `update` is checkpointed: the last one, every `checkpoint_every` updates, or
        `checkpoint_minutes` after the last save (process 0's clock decides for all)."""
        s = self.settings
        if done or (s.checkpoint_every > 0 and update % s.checkpoint_every == 0):
            return True
        late = s.checkpoint_minutes > 0 and self.clock() - self.last_save >= 60 * s.checkpoint_minutes
        return bool(distributed.agree(late))

    def train(self, runner: Any, update_fn: Any) -> Any:
        """Run updates until the last one, the deadline or a stop signal: log each, evaluate and checkpoint on
        schedule."""
        s, spu = self.settings, self.config.steps_per_update
        done = int(runner.update) >= self.last or self.out_of_time() or self.stopping()
        session_updates, loop_start = 0, self.clock()
        self.schedule_eval()
        while not done:
            t0 = self.clock()
            runner, metrics = update_fn(runner)
            metrics = {k: float(v) for k, v in jax.device_get(metrics).items()}
            seconds = max(self.clock() - t0, 1e-9)
            update = int(runner.update)
            self.check_finite(metrics, update)
            self.rates.append(spu / seconds)
            session_updates += 1
            if self.deadline is not None and session_updates & (session_updates - 1) == 0 and session_updates > 1:
                # updates 2, 4, 8, ...: wall time an update so far, with its logging, evaluations and checkpoints
                runner = self.fit_horizon(runner, (t0 - loop_start) / (session_updates - 1))
            done = update >= self.last or self.out_of_time() or self.stopping()  # decided once, for all processes
            record = {
                "update": update,
                "env_steps": update * spu,
                "time_s": self.elapsed(),
                "steps_per_s": spu / seconds,
                **metrics,
            }
            if self.eval_due(update, done):
                record.update(self.evaluate(runner.params, update))
                self.schedule_eval()
            self.log(record)  # before the checkpoint: a resume drops what comes after it
            if self.save_due(update, done):
                checkpoint.save(self.out, runner, self.config, keep=self.settings.keep_checkpoints or None)
                self.last_save = self.clock()
            if s.minutes:
                self.bar.update(min(self.bar.total, round(self.elapsed())) - self.bar.n)
            else:
                self.bar.update(spu)
        return runner

    # 4. the end
    def finish(self, runner: Any) -> dict:
        """Save the last checkpoint, draw the plot and return the summary."""
        self.close()
        update = int(runner.update)
        checkpoint.save(self.out, runner, self.config, keep=self.settings.keep_checkpoints or None)
        if self.interrupted:
            self.say(
                f"{self.stop.received or 'a stop signal'}: training stopped at update {update}; its checkpoint and "
                f"metrics are saved in {str(self.out)!r}; continue with: blokus-jax train --out {self.out} --resume"
            )
        final: dict[str, Any] = {}
        if self.primary:
            records = read_metrics(self.out)
            if _extras.available("train", f"the win-rate plot {PLOT_FILE}", ("matplotlib",)):
                plot_win_rates(records, self.out / PLOT_FILE, f"{self.name} self-play on {self.config.variant}")
            evaluated = [r for r in records if any(k.startswith("win_rate_vs_") for k in r)]
            keep = ("win_rate_vs_", "win_rate_ci_vs_", "eval_games")
            final = {k: v for k, v in (evaluated[-1] if evaluated else {}).items() if k.startswith(keep)}
        return {
            "updates": update,
            "env_steps": update * self.config.steps_per_update,
            "seconds": self.clock() - self.begin,
            "run_seconds": self.elapsed(),
            "compile_s": self.compile_s,
            "steps_per_s": float(np.mean(self.rates[1:] or self.rates)) if self.rates else math.nan,
            "interrupted": self.interrupted,
            **final,
        }

    def run(self, resume: bool, init_from: str | os.PathLike | InitNetwork | None, changed: list[str]) -> dict:
        """The session from start to summary."""
        runner = self.start(resume, init_from, changed)
        if self.stopping():  # a signal while starting: save the runner as it is (update 0 of a new run)
            return self.finish(runner)
        update_fn = self.compile(runner)
        s = self.settings
        if not resume and s.eval_every > 0 and not self.stopping():
            self.say(f"evaluating the initial network against {', '.join(s.opponents)} ({s.eval_games} games each)...")
            result = self.evaluate(runner.params, 0)
            self.log({"update": 0, "env_steps": 0, "time_s": self.elapsed(), **result})
            self.say(f"initial network: {win_rates_text(result)}")
        if int(runner.update) >= self.last:
            self.say(f"nothing to train: the run is at update {int(runner.update)} of {self.last}")
        self.open_bar(runner)
        runner = self.train(runner, update_fn)
        return self.finish(runner)
