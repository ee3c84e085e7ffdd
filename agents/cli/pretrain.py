"""`blokus-jax pretrain`: fit a run's network to a stronger player's games (supervised start-up), written as a run
directory that `blokus-jax train --init-from` continues from. The fitting is imported when the command runs."""

from __future__ import annotations

import argparse
import dataclasses

from blokus_agents.cli.common import Handler, output_dir
from blokus_agents.cli.train import _argtype, add_field_flag
from blokus_agents.core.options import declared_options
from blokus_agents.players.configs import PretrainSettings

NAME = "pretrain"
HELP = "fit a network to a stronger player's .blksgf games (supervised start-up for train --init-from)"

#: The network fields `blokus-jax pretrain` takes (the PPO config's flags of the same names).
NETWORK_FLAGS = ("variant", "channels", "blocks", "prior", "precision")


def setup(parser: argparse.ArgumentParser) -> Handler:
    """Add the arguments of `blokus-jax pretrain` to `parser`; returns its handler."""
    parser.add_argument(
        "--games",
        nargs="+",
        required=True,
        metavar="PATH",
        help=".blksgf records to learn from: files, folders or quoted globs (e.g. Pentobi's twogtp games)",
    )
    parser.add_argument(
        "--held-out",
        nargs="+",
        default=None,
        metavar="PATH",
        help="records kept out of the fit; their positions' recall of the teacher's move is reported every epoch",
    )
    for name in NETWORK_FLAGS:
        add_field_flag(parser, name)
    for name, option in declared_options(PretrainSettings).items():
        default = PretrainSettings.__dataclass_fields__[name].default
        parser.add_argument(
            "--" + name.replace("_", "-"),
            type=_argtype(name, option),
            default=None,
            help=f"{option.doc} (default {default:g})",
        )
    parser.add_argument("--out", required=True, type=output_dir, help="the run directory to write (must be new)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")

    def run(args: argparse.Namespace) -> int:
        from blokus_agents.players.configs import PPOConfig
        from blokus_agents.training.pretrain import pretrain_run

        config = PPOConfig(**{n: getattr(args, n) for n in NETWORK_FLAGS if getattr(args, n) is not None})
        changes = {f.name: getattr(args, f.name) for f in dataclasses.fields(PretrainSettings)}
        settings = PretrainSettings(**{k: v for k, v in changes.items() if v is not None})
        summary = pretrain_run(
            config, args.games, args.out, held_out=args.held_out, settings=settings, progress=not args.no_progress
        )
        last = summary["epochs"][-1]
        recall = (
            f"; held out: top-1 {last['held_out_top1']:.3f}, top-32 {last['held_out_top32']:.3f}"
            if "held_out_top1" in last
            else ""
        )
        print(
            f"pretrained on {summary['train_positions']:,} positions in {summary['seconds'] / 60:.1f} min{recall}\n"
            f"run directory: {args.out} (pretrain.json, checkpoints/); continue it with "
            f"'blokus-jax train --init-from {args.out} ...'"
        )
        return 0

    return run
