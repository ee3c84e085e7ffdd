"""``blokus-jax train``: a new or resumed PPO or AlphaZero run, its config from the flags, and the summary table at
the end. The trainer is imported when the command runs."""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from blokus_agents.cli.common import (
    Handler,
    nonnegative_float,
    nonnegative_int,
    output_dir,
    output_file,
    positive_float,
    positive_int,
    print_table,
    unit_float,
)
from blokus_agents.training.rundir import DISTRIBUTED_TIMEOUT
from blokus_jax.errors import CheckpointError, ConfigError
from blokus_jax.variants import variant_names

#: ``blokus-jax train``'s own defaults for the host-loop settings of a new run (a resumed run keeps its saved ones).
_TRAIN_DEFAULTS = {
    "eval_every": 25,
    "eval_games": 64,
    "checkpoint_every": 50,
    "checkpoint_minutes": 5.0,
    "evals": 10,
    "minutes": 5.0,
}


#: ``--precision``'s choices: ``blokus_agents.players.networks.PRECISION_CHOICES``, written out so that ``--help``
#: imports no JAX (a test keeps the two equal).
PRECISION_CHOICES = ("auto", "f32", "bf16")


NAME = "train"
HELP = "train a self-play agent, PPO or AlphaZero (checkpoints, metrics.jsonl and a win-rate plot in --out)"


def setup(parser: argparse.ArgumentParser) -> Handler:
    """Add the arguments of ``blokus-jax train`` to ``parser``; returns its handler."""
    parser.add_argument("--variant", default=None, choices=variant_names(), help="variant to learn (default simple)")
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
        help="train for this many minutes of wall time (default 5), the whole run's budget: a resumed run continues "
        "its clock, so give a larger --minutes with --resume to train longer",
    )
    budget.add_argument("--total-steps", type=positive_int, help="train for this many environment steps instead")
    parser.add_argument("--num-envs", type=positive_int, help="games played in parallel (default 64)")
    parser.add_argument(
        "--num-steps", type=positive_int, help="moves per game per update (default 32 for ppo, 8 for alphazero)"
    )
    parser.add_argument(
        "--sims", type=positive_int, help="alphazero: search simulations per self-play move (default 16)"
    )
    parser.add_argument(
        "--batch-size",
        type=positive_int,
        help="alphazero: positions per optimiser step, a multiple of --num-envs (default 4 x --num-envs)",
    )
    parser.add_argument(
        "--teacher",
        metavar="SPEC",
        help="alphazero: an mcts agent spec (e.g. mcts:sims=64,playouts=4) whose search plays the self-play moves "
        "and gives the policy targets for the first --teacher-updates updates; then the network's own search plays",
    )
    parser.add_argument(
        "--teacher-updates",
        type=positive_int,
        metavar="N",
        help="alphazero, with --teacher: the updates the teacher plays before it hands over to the network",
    )
    parser.add_argument(
        "--root-value",
        type=unit_float,
        metavar="B",
        help="alphazero, two players: value targets blend the search's root value in, (1-B) x game result + B x "
        "root value (default 0: the game result); a teacher's root value includes its playouts' score margin "
        "(its margin option, 0.5 by default)",
    )
    parser.add_argument(
        "--reflect",
        type=unit_float,
        metavar="P",
        help="alphazero, on Duo or Junior: train on each replayed position's reflection in the board's diagonal with "
        "probability P (0.5 doubles the positions; default 0)",
    )
    _add_run_flags(parser)

    def run(args: argparse.Namespace) -> int:
        from blokus_agents.training import scaffold
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
        if scaffold.is_primary():
            _print_summary(summary, config, out, args.json)
        return 130 if summary.get("interrupted") else 0

    return run


def _add_run_flags(parser: argparse.ArgumentParser) -> None:
    """The flags of ``blokus-jax train`` beyond the algorithm's settings: network size, seed, run directory,
    evaluation and checkpoints, devices and hosts."""
    parser.add_argument(
        "--init-from",
        metavar="RUN_DIR",
        help="start from the network of another run (e.g. a PPO run for alphazero) or of a shipped baseline "
        "(baseline:NAME, e.g. baseline:duo); its variant and network size are used unless given",
    )
    parser.add_argument("--channels", type=positive_int, help="conv channels of the network (default 32)")
    parser.add_argument("--blocks", type=nonnegative_int, help="residual blocks of the network (default 2)")
    parser.add_argument(
        "--precision",
        choices=PRECISION_CHOICES,
        help="the network's compute dtype: bf16 (parameters and optimiser stay f32), f32, or auto (default: bf16 on "
        "GPU/TPU, f32 on CPU); a resumed run may change it",
    )
    parser.add_argument("--lr", type=positive_float, help="initial learning rate (default 1e-3)")
    parser.add_argument(
        "--seed",
        type=nonnegative_int,
        help="seed; the same seed and settings give the same run on CPU (with the same number of devices)",
    )
    parser.add_argument(
        "--out",
        default=None,
        type=output_dir,
        help="run directory (default runs/<variant>; for alphazero runs/az_<variant>); a resumed run keeps the "
        "--eval-every, --eval-games, --checkpoint-every and --minutes it was started with unless given",
    )
    parser.add_argument("--resume", action="store_true", help="continue the run in --out from its newest checkpoint")
    parser.add_argument("--eval-every", type=nonnegative_int, help="updates between evaluations (0: never; default 25)")
    parser.add_argument(
        "--evals",
        type=nonnegative_int,
        metavar="N",
        help="with --minutes, also evaluate each time another 1/N of the budget has passed, so the learning curve has "
        "about N points at any speed (0: by --eval-every only; default 10)",
    )
    parser.add_argument("--eval-games", type=positive_int, help="games per evaluation against each bot (default 64)")
    parser.add_argument(
        "--checkpoint-every", type=nonnegative_int, help="updates between checkpoints (0: only at the end; default 50)"
    )
    parser.add_argument(
        "--checkpoint-minutes",
        type=nonnegative_float,
        metavar="M",
        help="also save a checkpoint when M minutes have passed since the last one (0: off; default 5); Ctrl-C or "
        "SIGTERM always saves one before stopping",
    )
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
        type=positive_int,
        default=DISTRIBUTED_TIMEOUT,
        metavar="SECONDS",
        help=f"--distributed: how long a process waits for the others to join (default {DISTRIBUTED_TIMEOUT})",
    )


def _start_jax(args: argparse.Namespace) -> None:
    """Before JAX runs anything: one CPU device per core (or ``--cpu-devices``), then, with ``--distributed`` (or
    any of its three flags), join the other processes."""
    from blokus_agents.training import scaffold

    scaffold.use_cpu_cores(args.cpu_devices)
    flags = (args.coordinator, args.num_processes, args.process_id)
    if args.distributed or any(f is not None for f in flags):
        scaffold.start_distributed(*flags, timeout=args.distributed_timeout)


def _default_out(algo: str | None, variant: str | None) -> str:
    """The default run directory: ``runs/<variant>`` for PPO, ``runs/az_<variant>`` for AlphaZero."""
    return f"runs/{'az_' if algo == 'alphazero' else ''}{variant or 'simple'}"


def _given_fields(args: argparse.Namespace) -> dict[str, Any]:
    """The config fields set by flags (name -> value)."""
    given = {
        "variant": args.variant,
        "num_envs": args.num_envs,
        "num_steps": args.num_steps,
        "channels": args.channels,
        "blocks": args.blocks,
        "precision": args.precision,
        "learning_rate": args.lr,
        "seed": args.seed,
        "total_steps": args.total_steps,
        "sims": args.sims,
        "batch_size": args.batch_size,
        "teacher": args.teacher,
        "teacher_updates": args.teacher_updates,
        "root_value": args.root_value,
        "reflect": args.reflect,
    }
    return {k: v for k, v in given.items() if v is not None}


def _resumed_config(args: argparse.Namespace, out: str) -> Any:
    """The config of the run in ``out`` with the flags' changes (only ``--total-steps`` may differ; the trainer
    lists any other difference)."""
    from blokus_agents.training import checkpoint

    if args.init_from:
        raise CheckpointError("--init-from starts a new run; it cannot be combined with --resume")
    checkpoint.require_resumable(out)
    saved = checkpoint.load_config(out)
    if args.algo is not None and args.algo != saved.algorithm:
        raise CheckpointError(f"{out!r} was trained with {saved.algorithm!r}; resume it with --algo {saved.algorithm}")
    return saved.replace(**_known_fields(saved, _given_fields(args), "--resume"))


#: ``--init-from baseline:NAME`` starts from shipped baseline ``NAME``; any other value is a run directory.
BASELINE_PREFIX = "baseline:"


def _init_source(init_from: str | None) -> Any:
    """What ``--init-from`` names: ``None``, a run directory (as given), or for ``baseline:NAME`` the baseline's
    training config and parameters as a :class:`~blokus_agents.training.train.InitNetwork` (``CheckpointError`` for an
    unknown or unusable baseline)."""
    if not init_from or not init_from.startswith(BASELINE_PREFIX):
        return init_from
    from blokus_agents.players.baselines import baseline_source  # networks load only when a run starts from one
    from blokus_agents.training.train import InitNetwork

    config, params = baseline_source(init_from.removeprefix(BASELINE_PREFIX))
    return InitNetwork(init_from, config, params)


def _new_config(args: argparse.Namespace, init: Any = None) -> Any:
    """The config of a new run: the algorithm's defaults (an open-ended ``total_steps`` unless given), the network
    size and variant of ``--init-from`` (``init``, as :func:`_init_source` gives it), then the flags."""
    from blokus_agents.training import checkpoint, checkpoint_index
    from blokus_agents.training.configs import config_class
    from blokus_agents.training.train import InitNetwork

    algo, given = args.algo or "ppo", _given_fields(args)
    if init is not None:
        if isinstance(init, InitNetwork):
            source = init.config
        else:
            checkpoint_index.require_init_source(init)
            source = checkpoint.load_config(init)
        given = {"variant": source.variant, **{f: getattr(source, f) for f in _NETWORK_FIELDS}, **given}
    defaults = config_class(algo)(**{"variant": "simple", "total_steps": 10**12})
    given = _known_fields(defaults, given, f"--algo {algo}")
    if algo == "alphazero" and "batch_size" not in given and "num_envs" in given:
        given["batch_size"] = 4 * given["num_envs"]  # every game contributes 4 positions per step
    return defaults.replace(**given)


def _refuse_to_overwrite(out: str, args: argparse.Namespace) -> None:
    """A new run never writes into a run directory that holds checkpoints (in the CLI's words)."""
    from blokus_agents.training import checkpoint_index

    if checkpoint_index.latest_step(out) is None:
        return
    why = "" if args.out else " (the default --out of this --algo and --variant)"
    raise CheckpointError(
        f"{out!r}{why} already holds a run's checkpoints; add --resume to continue that run, or give another --out"
    )


def _session_settings(args: argparse.Namespace, out: str) -> dict[str, Any]:
    """The host-loop settings to pass to ``train.run``: the flags given; for a new run (or one saved before runs
    kept their settings) ``blokus-jax train``'s defaults for the others, for a resumed run ``None`` (keep the
    saved ones). ``--total-steps`` on a resumed run drops its time limit."""
    from blokus_agents.training import train as trainer

    fresh = not args.resume or trainer.read_settings(out) is None
    settings = {
        "eval_every": args.eval_every,
        "eval_games": args.eval_games,
        "checkpoint_every": args.checkpoint_every,
        "checkpoint_minutes": args.checkpoint_minutes,
        "evals": args.evals,
        "minutes": args.minutes if args.total_steps is None else math.inf,
    }
    if fresh:
        settings = {k: _TRAIN_DEFAULTS[k] if v is None else v for k, v in settings.items()}
    return settings


def _print_summary(summary: dict, config: Any, out: str, json_path: str | None) -> None:
    """The end of ``blokus-jax train``: a short table (updates, steps, time, speed, final win rates with their 95 %
    intervals), the run directory, and the summary as JSON in ``json_path`` when given."""
    opponents = [k.removeprefix("win_rate_vs_") for k in summary if k.startswith("win_rate_vs_")]
    seconds = summary["seconds"]
    rows = [
        ["updates", "env steps", "time", "env-steps/s", *[f"vs {o}" for o in opponents]],
        [
            f"{summary['updates']:,}",
            f"{summary['env_steps']:,}",
            f"{seconds / 60:.1f} min" if seconds >= 60 else f"{seconds:.0f} s",
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
        with open(json_path, "w") as f:
            json.dump(summary, f, indent=1)
    print(
        f"run directory: {out} (metrics.jsonl, win_rate.png, checkpoints/); evaluate it with "
        f"'blokus-jax eval --agents {out} greedy'"
    )


#: Config fields that fix the network's shape (copied from an ``--init-from`` run unless given).
_NETWORK_FIELDS = ("channels", "blocks", "value_hidden")


def _known_fields(config: Any, given: dict[str, Any], context: str) -> dict[str, Any]:
    """``given`` restricted to fields of ``config``; a flag that ``config``'s algorithm does not take (``--sims``
    for PPO) is a ``ConfigError`` naming it."""
    fields = set(config.to_dict())
    unknown = sorted(set(given) - fields)
    if unknown:
        flags = ", ".join("--" + name.replace("_", "-") for name in unknown)
        raise ConfigError(f"{flags} does not apply to {context} ({config.algorithm}); drop it or choose --algo")
    return given
