"""`blokus-jax train`: a new or resumed PPO or AlphaZero run, its config from the flags, and the summary table at
the end. The trainer is imported when the command runs."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from blokus_agents.cli.common import (
    Handler,
    int_range,
    nonnegative_float,
    nonnegative_int,
    output_dir,
    output_file,
    positive_float,
    positive_int,
    print_table,
    seed_int,
    unit_float,
)
from blokus_agents.core.options import Option, declared_options
from blokus_agents.players.configs import AZConfig, PPOConfig, RunConfig
from blokus_agents.training.rundir import DISTRIBUTED_TIMEOUT, MAX_DISTRIBUTED_TIMEOUT, Settings
from blokus_jax.errors import CheckpointError, ConfigError
from blokus_jax.io import fileio
from blokus_jax.variants import variant_names

#: Without `--total-steps`, a new run of `blokus-jax train` is open-ended (`total_steps` 10**12) and stops after
#: this many minutes of wall time (the library's `Settings` has no time limit by default).
COMMAND_MINUTES = 5.0
#: The config fields `blokus-jax train` sets from flags, each with its flag when that is not `--FIELD-NAME`.
CONFIG_FLAGS: dict[str, str] = {
    "variant": "--variant",
    "num_envs": "--num-envs",
    "num_steps": "--num-steps",
    "sims": "--sims",
    "k": "--k",
    "considered": "--considered",
    "batch_size": "--batch-size",
    "train_steps": "--train-steps",
    "teacher": "--teacher",
    "teacher_updates": "--teacher-updates",
    "root_value": "--root-value",
    "reflect": "--reflect",
    "channels": "--channels",
    "blocks": "--blocks",
    "precision": "--precision",
    "prior": "--prior",
    "reward": "--reward",
    "learning_rate": "--lr",
    "seed": "--seed",
    "total_steps": "--total-steps",
    "update_epochs": "--update-epochs",
    "num_minibatches": "--num-minibatches",
    "ent_coef": "--ent-coef",
    "kl_coef": "--kl-coef",
    "opponent": "--opponent",
}
#: The host-loop settings `blokus-jax train` sets from flags (`Settings`' fields, flags `--FIELD-NAME`).
SETTINGS_FLAGS = ("eval_every", "evals", "eval_games", "checkpoint_every", "checkpoint_minutes", "keep_checkpoints")


NAME = "train"
HELP = "train a self-play agent, PPO or AlphaZero (checkpoints, metrics.jsonl and a win-rate plot in --out)"


def setup(parser: argparse.ArgumentParser) -> Handler:
    """Add the arguments of `blokus-jax train` to `parser`; returns its handler."""
    parser.add_argument(
        "--variant", default=None, choices=variant_names(), help=f"variant to learn (default {PPOConfig.variant})"
    )
    parser.add_argument(
        "--algo",
        choices=("ppo", "alphazero"),
        default=None,
        help="training algorithm: ppo (default; fast, no search) or alphazero (self-play with search, stronger per "
        "move played; see docs/training.md)",
    )
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument(
        "--minutes",
        type=positive_float,
        help=f"train for this many minutes of wall time (default {COMMAND_MINUTES:g}), the whole run's budget: a "
        "resumed run continues its clock, so give a larger --minutes with --resume to train longer",
    )
    add_field_flag(budget, "total_steps", help="train for this many environment steps instead")
    for name in ("num_envs", "num_steps", "sims", "k", "considered", "batch_size", "teacher", "teacher_updates"):
        add_field_flag(parser, name)
    for name in ("train_steps", "root_value", "reflect"):
        add_field_flag(parser, name)
    for name in ("update_epochs", "num_minibatches", "ent_coef", "kl_coef", "opponent"):
        add_field_flag(parser, name)
    _add_run_flags(parser)

    def run(args: argparse.Namespace) -> int:
        from blokus_agents.training import distributed
        from blokus_agents.training import train as trainer  # the trainer and its dependencies load only here

        if (args.teacher is None) != (args.teacher_updates is None):
            raise ConfigError(
                "--teacher SPEC and --teacher-updates N go together: the teacher plays the first N updates, then "
                "hands over to the network's own search; give both or neither"
            )
        _start_jax(args)
        out = args.out or _default_out(args.algo, args.variant)
        init = None if args.resume else _init_source(args.init_from)  # --resume refuses --init-from below
        config = _resumed_config(args, out) if args.resume else _new_config(args, init)
        if not args.resume and args.out is None:
            out = _default_out(config.algorithm, config.variant)
        output_dir(out)
        if not args.resume:
            _refuse_to_overwrite(out, args)
        summary = trainer.run(
            config,
            out,
            resume=args.resume,
            progress=not args.no_progress,
            init_from=init,
            **_session_settings(args, out),
        )
        if distributed.is_primary():
            _print_summary(summary, config, out, args.json)
        return 130 if summary.get("interrupted") else 0

    return run


def _option(name: str) -> tuple[Option, str]:
    """The declaration of config field or setting `name` and its default in words (per algorithm where they
    differ), read from the dataclasses."""
    declared = {cls.algorithm: cls for cls in (PPOConfig, AZConfig) if name in cls.options()}
    if not declared:
        return declared_options(Settings)[name], f"{getattr(Settings(), name):g}"
    option = next(iter(declared.values())).options()[name]
    defaults = {algo: cls.__dataclass_fields__[name].default for algo, cls in declared.items()}
    shown = {algo: repr(v) if isinstance(v, str) else f"{v:g}" for algo, v in defaults.items()}
    if len(set(shown.values())) == 1:
        return option, next(iter(shown.values()))
    return option, ", ".join(f"{v} for {algo}" for algo, v in shown.items())


def _argtype(name: str, option: Option) -> Any:
    """The argparse type of a declared option: its kind with its declared range, so that a flag refuses at once
    what the config would refuse (a whole number from `low` to `high`; the seed as every command's `--seed`,
    `seed_int`, whose range is the field's; a number in [0, 1] for shares; a learning rate above 0)."""
    if name == "learning_rate":
        return positive_float
    if name == "seed":
        return seed_int
    if option.kind is int:
        if isinstance(option.high, int):
            return int_range(option.low, option.high)
        return positive_int if option.low == 1 else nonnegative_int
    if option.kind is float:
        if option.low == 0.0 and option.high == 1.0:
            return unit_float
        return nonnegative_float if option.low == 0.0 else positive_float
    return str


def add_field_flag(parser: Any, name: str, help: str | None = None) -> None:
    """Add the flag of config field or run setting `name` to `parser`: its type, help and default in the help
    text from the field's declaration (`blokus_agents.core.options.setting`); the flag's own default is `None`
    (the dataclass fills it in). A field only one algorithm has says which (`alphazero:` or `ppo:`).

    Args:
        parser: The `argparse` parser.
        name: The config field or run setting.
        help: The help text; default the field's declared doc and default.
    """
    option, default = _option(name)
    flag = CONFIG_FLAGS.get(name, "--" + name.replace("_", "-"))
    only = "alphazero: " if name in AZConfig.options() and name not in PPOConfig.options() else ""
    only = "ppo: " if name in PPOConfig.options() and name not in AZConfig.options() else only
    text = help or f"{only}{option.doc} (default {default})"
    parser.add_argument(flag, dest=name, type=_argtype(name, option), choices=option.choices, default=None, help=text)


def _add_run_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of `blokus-jax train` beyond the algorithm's settings: network size, seed, run directory,
    evaluation and checkpoints, devices and hosts."""
    parser.add_argument(
        "--init-from",
        metavar="RUN_DIR",
        help="start from the network of another run (e.g. a PPO run for alphazero) or of a shipped baseline "
        "(baseline:NAME, e.g. baseline:duo); its variant and network size are used unless given",
    )
    for name in ("channels", "blocks", "precision", "prior", "reward", "learning_rate", "seed"):
        add_field_flag(parser, name)
    parser.add_argument(
        "--out",
        default=None,
        type=output_dir,
        help="run directory (default runs/<variant>; for alphazero runs/az_<variant>); a resumed run keeps the "
        "--eval-every, --eval-games, --checkpoint-every and --minutes it was started with unless given",
    )
    parser.add_argument("--resume", action="store_true", help="continue the run in --out from its newest checkpoint")
    for name in SETTINGS_FLAGS:
        add_field_flag(parser, name)
    parser.epilog = "Every default above is read from PPOConfig, AZConfig and rundir.Settings."
    parser.add_argument("--json", metavar="PATH", type=output_file, help="also write the summary as JSON to PATH")
    parser.add_argument(
        "--no-progress", action="store_true", help="hide the progress bar (the compile and evaluation lines stay)"
    )
    devices = parser.add_argument_group("devices and hosts", "see docs/training.md, 'Several devices and hosts'")
    devices.add_argument(
        "--cpu-devices",
        type=positive_int,
        help="on CPU: XLA devices to split the games over (default: one per core; 1 turns the split off)",
    )
    devices.add_argument(
        "--distributed",
        action="store_true",
        help="one run over several processes (hosts): start every process with the same flags; without the three "
        "flags below JAX detects SLURM, TPU pods and Open MPI",
    )
    devices.add_argument("--coordinator", metavar="HOST:PORT", help="--distributed: address of process 0")
    devices.add_argument("--num-processes", type=positive_int, help="--distributed: number of processes")
    devices.add_argument("--process-id", type=nonnegative_int, help="--distributed: this process, 0 to N-1")
    devices.add_argument(
        "--distributed-timeout",
        "--init-timeout",
        type=int_range(1, MAX_DISTRIBUTED_TIMEOUT),
        default=DISTRIBUTED_TIMEOUT,
        metavar="SECONDS",
        help=f"--distributed: how long a process waits for the others to join (default {DISTRIBUTED_TIMEOUT}, at "
        f"most {MAX_DISTRIBUTED_TIMEOUT})",
    )


def _start_jax(args: argparse.Namespace) -> None:
    """Before JAX runs anything: one CPU device per core (or `--cpu-devices`), then, with `--distributed` (or
    any of its three flags), join the other processes."""
    from blokus_agents.training import distributed

    distributed.use_cpu_cores(args.cpu_devices)
    flags = (args.coordinator, args.num_processes, args.process_id)
    if args.distributed or any(f is not None for f in flags):
        distributed.start_distributed(*flags, timeout=args.distributed_timeout)


def _default_out(algo: str | None, variant: str | None) -> str:
    """The default run directory: `runs/<variant>` for PPO, `runs/az_<variant>` for AlphaZero."""
    return f"runs/{'az_' if algo == 'alphazero' else ''}{variant or 'simple'}"


def _given_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The config fields set by flags (name -> value)."""
    given = {name: getattr(args, name) for name in CONFIG_FLAGS}
    return {k: v for k, v in given.items() if v is not None}


def _resumed_config(args: argparse.Namespace, out: str) -> RunConfig:
    """The config of the run in `out` with the flags' changes (only `--total-steps` may differ; the trainer
    lists any other difference)."""
    from blokus_agents.players import checkpoint_read
    from blokus_agents.training import checkpoint

    if args.init_from:
        raise CheckpointError("--init-from starts a new run; it cannot be combined with --resume")
    checkpoint.require_resumable(out)
    saved = checkpoint_read.load_config(out)
    if args.algo is not None and args.algo != saved.algorithm:
        raise CheckpointError(f"{out!r} was trained with {saved.algorithm!r}; resume it with --algo {saved.algorithm}")
    return saved.replace(**_known_fields(saved, _given_fields(args), "--resume"))


#: `--init-from baseline:NAME` starts from shipped baseline `NAME`; any other value is a run directory.
BASELINE_PREFIX = "baseline:"


def _init_source(init_from: str | None) -> Any:
    """What `--init-from` names: `None`, a run directory (as given), or for `baseline:NAME` the baseline's
    training config and parameters as a `InitNetwork` (`CheckpointError` for an
    unknown or unusable baseline)."""
    if not init_from or not init_from.startswith(BASELINE_PREFIX):
        return init_from
    from blokus_agents.players.baselines import baseline_source  # networks load only when a run starts from one
    from blokus_agents.training.train import InitNetwork

    config, params = baseline_source(init_from.removeprefix(BASELINE_PREFIX))
    return InitNetwork(init_from, config, params)


def _new_config(args: argparse.Namespace, init: Any = None) -> RunConfig:
    """The config of a new run: the algorithm's defaults (an open-ended `total_steps` unless given), the network
    size and variant of `--init-from` (`init`, as `_init_source` gives it), then the flags."""
    from blokus_agents.players import checkpoint_index, checkpoint_read
    from blokus_agents.players.configs import config_class
    from blokus_agents.training.train import InitNetwork

    algo, given = args.algo or "ppo", _given_fields(args)
    if init is not None:
        if isinstance(init, InitNetwork):
            source = init.config
        else:
            checkpoint_index.require_init_source(init)
            source = checkpoint_read.load_config(init)
        given = {"variant": source.variant, **{f: getattr(source, f) for f in _NETWORK_FIELDS}, **given}
    cls = config_class(algo)
    given = _known_fields(cls(), given, f"--algo {algo}")
    return cls(**{"total_steps": 10**12, **given})  # derived defaults (AZConfig.batch_size) follow the flags


def _refuse_to_overwrite(out: str, args: argparse.Namespace) -> None:
    """A new run never writes into a run directory that holds checkpoints (in the CLI's words)."""
    from blokus_agents.players import checkpoint_index

    if checkpoint_index.latest_step(out) is None:
        return
    why = "" if args.out else " (the default --out of this --algo and --variant)"
    raise CheckpointError(
        f"{out!r}{why} already holds a run's checkpoints; add --resume to continue that run, or give another --out"
    )


def _session_settings(args: argparse.Namespace, out: str) -> dict[str, Any]:
    """The host-loop settings to pass to `train.run`: the flags given, `None` for the others (a new run takes
    `Settings`' defaults, a resumed run keeps its saved ones); a new run without `--total-steps` gets
    `COMMAND_MINUTES`, and `--total-steps` on a resumed run drops its time limit."""
    from blokus_agents.training import train as trainer

    fresh = not args.resume or trainer.read_settings(out) is None
    settings = {name: getattr(args, name) for name in SETTINGS_FLAGS}
    settings["minutes"] = args.minutes if args.total_steps is None else math.inf
    if fresh and settings["minutes"] is None:
        settings["minutes"] = COMMAND_MINUTES
    return settings


def _print_summary(summary: dict, config: RunConfig, out: str, json_path: str | None) -> None:
    """The end of `blokus-jax train`: a short table (updates, steps, time, speed, final win rates with their 95 %
    intervals), the run directory, and the summary as JSON in `json_path` when given."""
    opponents = [k.removeprefix("win_rate_vs_") for k in summary if k.startswith("win_rate_vs_")]
    session = summary["seconds"]
    total = summary.get("run_seconds", session)

    def duration(seconds: float) -> str:
        return f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s"

    time_text = duration(total) if abs(total - session) < 1 else f"{duration(total)} ({duration(session)} this session)"
    rows = [
        ["updates", "env steps", "time (whole run)", "env-steps/s", *[f"vs {o}" for o in opponents]],
        [
            f"{summary['updates']:,}",
            f"{summary['env_steps']:,}",
            time_text,
            f"{summary['steps_per_s']:,.0f}" if math.isfinite(summary["steps_per_s"]) else "-",
            *[
                f"{summary[f'win_rate_vs_{o}']:.2f} [{lo:.2f}, {hi:.2f}]"
                for o in opponents
                for lo, hi in [summary[f"win_rate_ci_vs_{o}"]]
            ],
        ],
    ]
    name = {"ppo": "PPO", "alphazero": "AlphaZero"}[config.algorithm]
    games = f"; win rates over {summary['eval_games']} games each, 95 % intervals" if opponents else ""
    print_table(rows, f"{name} on {config.variant}{games}", sys.stdout)
    if json_path:
        # atomic, never through a symbolic link (a link as the target is refused)
        fileio.write_atomic(json_path, json.dumps(summary, indent=1), what="--json summary", error=CheckpointError)
    print(
        f"run directory: {out} (metrics.jsonl, win_rate.png, checkpoints/); evaluate it with "
        f"'blokus-jax eval --agents {out} greedy'"
    )


#: Config fields that fix the network's shape (copied from an `--init-from` run unless given).
_NETWORK_FIELDS = ("channels", "blocks", "value_hidden", "prior")


def _known_fields(config: RunConfig, given: dict[str, Any], context: str) -> dict[str, Any]:
    """`given` restricted to fields of `config`; a flag that `config`'s algorithm does not take (`--sims`
    for PPO) is a `ConfigError` naming it."""
    fields = set(config.to_dict())
    unknown = sorted(set(given) - fields)
    if unknown:
        flags = ", ".join(CONFIG_FLAGS.get(name, "--" + name.replace("_", "-")) for name in unknown)
        raise ConfigError(f"{flags} does not apply to {context} ({config.algorithm}); drop it or choose --algo")
    return given
