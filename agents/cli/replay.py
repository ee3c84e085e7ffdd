"""`blokus-jax replay`: a game record printed move by move in the terminal."""

from __future__ import annotations

import argparse
from pathlib import Path

from blokus_agents.cli.common import (
    Handler,
)

NAME = "replay"
HELP = "print a recorded game (.blksgf or .json) move by move in the terminal"


def setup(parser: argparse.ArgumentParser) -> Handler:
    """Add the arguments of `blokus-jax replay` to `parser`; returns its handler."""
    parser.add_argument("file", help="a .blksgf (Pentobi) or .json game record")
    parser.add_argument("--ansi", action="store_true", help="colour the boards with ANSI escape codes")
    parser.add_argument("--boards", action="store_true", help="print the board after every placement")

    def run(args: argparse.Namespace) -> int:
        from blokus_jax.env import make
        from blokus_jax.io import records, render

        # The game as terminal text: one line per action (colour, piece and Pentobi cells or the pass, and the
        # player), the board after every placement with --boards, then the final board and the result.
        # Strings from the file are printed with control characters escaped, so a name cannot drive the terminal.
        def text(value: str) -> str:
            return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in str(value))

        record = records.load(args.file)
        variant = record.variant
        env = make(variant)
        names = render.color_names(variant)
        movers = record.movers()
        players = [text(p) for p in record.players]
        lines = [
            f"{text(Path(args.file).name)}: {text(variant.name)}, {' vs '.join(players)}, "
            f"{len(record.moves)} placements"
        ]
        lines += [f"  {text(k)}: {text(v)}" for k, v in record.metadata.items()]
        for k, (action, color, cells) in enumerate(zip(record.actions, record.colors, record.cells), start=1):
            if len(cells) == 0:
                lines.append(f"{k:4d}. {names[color]:<7} pass")
                continue
            piece = variant.pieces[env.decode_action(action)[0]]
            lines.append(
                f"{k:4d}. {names[color]:<7} {text(piece.name):<3} {render.cells_text(variant, cells)}  "
                f"({players[movers[k - 1]]})"
            )
            if args.boards:
                lines.append(render.to_text(record.state_at(k), variant, ansi=args.ansi, pieces=False))
        lines.append(render.to_text(record.replay(), variant, ansi=args.ansi))
        scores = ", ".join(f"{name} {score}" for name, score in zip(players, record.player_scores))
        lines.append(f"result: {text(record.result)} ({scores})")
        print("\n".join(lines))
        return 0

    return run
