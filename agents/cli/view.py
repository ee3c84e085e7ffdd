"""`blokus-jax view`: a game record as a self-contained HTML viewer page."""

from __future__ import annotations

import argparse
import os
import webbrowser
from pathlib import Path

from blokus_agents.cli.common import (
    Handler,
    say,
)
from blokus_jax.errors import BlokusError

NAME = "view"
HELP = "write (and optionally open) a self-contained HTML viewer for a .blksgf or .json game record"


def setup(parser: argparse.ArgumentParser) -> Handler:
    """Add the arguments of `blokus-jax view` to `parser`; returns its handler."""
    parser.add_argument("file", help="a .blksgf (Pentobi) or .json game record")
    parser.add_argument("--out", help="where to write the page, ending in .html (default: FILE with the suffix .html)")
    parser.add_argument("--open", action="store_true", help="open the page in the default browser")
    parser.add_argument(
        "--force", action="store_true", help="replace an existing viewer page even if it shows another record"
    )

    def run(args: argparse.Namespace) -> int:
        from blokus_jax.io import records, viewer

        # Load and check the record, write the viewer page next to it (or to --out), print the page's path. The
        # output path is checked first: never the input itself, never a file that is not a viewer page, and not
        # another record's page unless --force.
        source = Path(args.file)
        target = Path(args.out) if args.out is not None else source.with_suffix(".html")
        if target.suffix.lower() not in (".html", ".htm"):
            raise BlokusError(f"--out {str(target)!r}: the viewer page must be an .html file")
        if source.exists() and (
            source.resolve() == target.resolve() or (target.exists() and os.path.samefile(source, target))
        ):
            raise BlokusError(
                f"the viewer page {str(target)!r} would overwrite its input file; give another path with --out"
            )
        if target.is_dir():
            raise BlokusError(f"--out {str(target)!r} is a directory; give a file name such as {target}/game.html")
        folder = target.absolute().parent
        while not folder.exists():
            folder = folder.parent
        if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
            raise BlokusError(
                f"cannot write the viewer page {str(target)!r}: {str(folder)!r} is not a writable "
                f"directory; choose another path with --out"
            )
        if target.exists():
            shown = viewer.page_source(target)
            if shown is None:
                raise BlokusError(
                    f"{str(target)!r} exists and is not a blokus-jax viewer page; refusing to "
                    f"overwrite it (choose another path with --out)"
                )
            if shown and shown != str(source.resolve()) and not args.force:
                raise BlokusError(
                    f"{str(target)!r} is the viewer page of another record ({shown}); choose "
                    f"another path with --out, or add --force to replace it"
                )
        record = records.load(source)
        try:
            viewer.write_viewer(record, target, title=source.name, source=str(source.resolve()))
        except OSError as exc:
            raise BlokusError(f"cannot write the viewer page {str(target)!r}: {exc}") from exc
        print(target)
        if args.open and not _open_in_browser(target.resolve().as_uri()):
            say(f"--open: no web browser found on this machine; open {target.resolve()} in a browser yourself")
        return 0

    return run


def _open_in_browser(uri: str) -> bool:
    """Open `uri` in the default browser; `False` when there is none (`webbrowser` finds no usable one, as on
    a server without a display)."""
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return bool(webbrowser.open(uri))
