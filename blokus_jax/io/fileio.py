"""Safe file access: the one home for how blokus-jax writes, reads and locks files.

Everything the library writes (game records, viewer pages, training metrics, checkpoint side files, baselines) goes
through `write_atomic` / `atomic_writer`: the data is written to a *fresh* temporary file in the target's
own directory (created with `O_CREAT | O_EXCL | O_NOFOLLOW`, so a planted file or symbolic link is never opened),
flushed to disk (`fsync`), then renamed over the target in one step (`os.replace`). A write that fails half-way
(disk full, a killed process) leaves the old file as it was and no temporary file behind. A target that is a symbolic
link, a FIFO, a device or a directory is refused: nothing is ever written *through* a link. With `overwrite=False`
an existing target is never replaced, even by a racing writer (the temporary file is hard-linked into place).

Reads (`read_bytes`, `read_text`, `iter_lines`) open regular files only (a FIFO is refused instead
of blocking, `/dev/zero` instead of filling memory) and cap the bytes *actually read*, never trusting the size the
file system reports. `load_json` parses with a nesting-depth limit. `exclusive_lock` is an atomic
inter-process lock (`fcntl.flock`) on a lock file, whose recorded pid serves messages only.

Every failure raises the caller's error class (a `BlokusError` subclass, e.g.
`RecordError` or `CheckpointError`) with a one-line message naming the file; the `OSError` is chained.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import socket
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NoReturn

from blokus_jax.errors import BlokusError

#: Default nesting limit of `load_json` (blokus-jax's own files nest a few levels deep).
MAX_JSON_DEPTH = 64
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def _kind_of(mode: int) -> str:
    """A file type in words (for messages)."""
    for test, name in (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def check_target(path: str | os.PathLike, *, what: str = "file", error: type[Exception] = BlokusError) -> bool:
    """Whether `path` exists, after checking that writing it is safe: it is absent or a regular file, never a
    symbolic link (not even one to a regular file), FIFO, device or directory. Raises `error` otherwise.

    Args:
        path: The file about to be written.
        what: What the file is, named in messages (e.g. `"SVG picture"`).
        error: The exception class raised on failure (a `BlokusError` subclass).

    Returns:
        `True` when `path` exists (a regular file), `False` when it does not.

    Raises:
        error: `path` is not a regular file, or its status cannot be read.
    """
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise error(f"cannot write {what} {str(path)!r}: {_reason(exc)}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise error(
            f"refusing to write {what} {str(path)!r}: it is {_kind_of(info.st_mode)}, not a regular file; "
            f"remove it or choose another path"
        )
    return True


@contextlib.contextmanager
def atomic_writer(
    path: str | os.PathLike, *, overwrite: bool = True, what: str = "file", error: type[Exception] = BlokusError
) -> Iterator[IO[bytes]]:
    """A binary file to write `path`'s new content into; when the `with` block ends without an exception the
    content is flushed, synced and renamed over `path` in one step. On any failure (in the block or while
    finishing) `path` is left as it was, the temporary file is removed and `error` is raised for an `OSError`.

    Args:
        path: The file to write (absent or a regular file, see `check_target`).
        overwrite: Replace an existing `path`; `False` raises `error` when it exists (checked again
            atomically at the rename).
        what: What the file is, named in messages (e.g. `"SVG picture"`).
        error: The exception class raised on failure (a `BlokusError` subclass).

    Yields:
        The temporary file, open for binary writing, in `path`'s folder.

    Raises:
        error: `path` is not safe to write (`check_target`), exists while `overwrite` is `False`, or an `OSError`
            occurred in the block or while finishing.
    """
    path = Path(path)
    existed = check_target(path, what=what, error=error)
    if existed and not overwrite:
        raise error(f"{what} {str(path)!r} already exists; refusing to replace it (remove it or choose another name)")
    folder = path.parent
    tmp = folder / f".{path.name}.{secrets.token_hex(8)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666)
    except OSError as exc:
        raise error(f"cannot write {what} {str(path)!r}: {_reason(exc)} (in {str(folder)!r})") from exc
    try:
        with os.fdopen(fd, "wb") as f:
            if existed:
                with contextlib.suppress(OSError):
                    os.fchmod(f.fileno(), stat.S_IMODE(os.stat(path, follow_symlinks=False).st_mode))
            yield f
            f.flush()
            os.fsync(f.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            _link_new(tmp, path, what, error)
        _sync_dir(folder)
    except OSError as exc:
        raise error(
            f"cannot write {what} {str(path)!r}: {_reason(exc)}; the previous file (if any) is unchanged"
        ) from exc
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _link_new(tmp: Path, path: Path, what: str, error: type[Exception]) -> None:
    """Put `tmp` in place as `path` only if `path` does not exist (a hard link fails atomically if it does)."""
    try:
        os.link(tmp, path, follow_symlinks=False)
    except FileExistsError:
        raise error(
            f"{what} {str(path)!r} already exists; refusing to replace it (remove it or choose another name)"
        ) from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        # no hard links on this file system: reserve the name exclusively, then rename over the reservation
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o666))
        except FileExistsError:
            raise error(f"{what} {str(path)!r} already exists; refusing to replace it") from None
        os.replace(tmp, path)


def _sync_dir(folder: Path) -> None:
    """fsync a directory so that a rename in it survives a crash (best effort: not every platform allows it)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | _CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def write_atomic(
    path: str | os.PathLike,
    data: bytes | str,
    *,
    overwrite: bool = True,
    what: str = "file",
    error: type[Exception] = BlokusError,
) -> Path:
    """Write `data` (`str` as UTF-8) to `path` safely and atomically (see `atomic_writer`).

    Args:
        path: The file to write.
        data: The content; a `str` is encoded as UTF-8.
        overwrite: Replace an existing `path`; `False` raises `error` when it exists.
        what: What the file is, named in messages (e.g. `"SVG picture"`).
        error: The exception class raised on failure (a `BlokusError` subclass).

    Returns:
        `path`, as a `Path`.

    Raises:
        error: As `atomic_writer`: an unsafe target, an existing one without `overwrite`, or a failed write.
    """
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    with atomic_writer(path, overwrite=overwrite, what=what, error=error) as f:
        view = memoryview(payload)
        while view:
            written = os.write(f.fileno(), view)
            view = view[written:]
    return Path(path)


def append_text(
    path: str | os.PathLike, text: str, *, what: str = "file", error: type[Exception] = BlokusError
) -> None:
    """Append `text` (UTF-8) to `path`, creating it if needed; refuses a symbolic link or any file that is not
    regular (opened with `O_NOFOLLOW`, checked on the open descriptor).

    Args:
        path: The file to append to.
        text: The text to append, encoded as UTF-8.
        what: What the file is, named in messages (e.g. `"SVG picture"`).
        error: The exception class raised on failure (a `BlokusError` subclass).

    Raises:
        error: `path` is a symbolic link or not a regular file, or it cannot be opened or written.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o666)
    except OSError as exc:
        _raise_open(path, exc, what, error, "write")
    try:
        _require_regular(fd, path, what, error, "write")
        view = memoryview(text.encode("utf-8"))
        while view:
            view = view[os.write(fd, view) :]
    except OSError as exc:
        raise error(f"cannot write {what} {str(path)!r}: {_reason(exc)}") from exc
    finally:
        os.close(fd)


@contextlib.contextmanager
def open_append(
    path: str | os.PathLike, *, what: str = "file", error: type[Exception] = BlokusError
) -> Iterator[IO[bytes]]:
    """`path` opened for appending bytes (created if missing) without following a symbolic link, checked on the
    open descriptor to be a regular file (a FIFO is refused without blocking); for a log that stays open.

    Args:
        path: The file to append to.
        what: What the file is, named in messages (e.g. `"SVG picture"`).
        error: The exception class raised on failure (a `BlokusError` subclass).

    Yields:
        The unbuffered binary file, open for appending; it is closed when the `with` block ends.

    Raises:
        error: `path` is a symbolic link or not a regular file, or it cannot be opened.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o666)
    except OSError as exc:
        _raise_open(path, exc, what, error, "write")
    try:
        _require_regular(fd, path, what, error, "write")
        f = os.fdopen(fd, "ab", buffering=0)
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f


def make_dir(path: str | os.PathLike, *, what: str = "folder", error: type[Exception] = BlokusError) -> Path:
    """Create folder `path` (and its parents) if missing and return it.

    Args:
        path: The folder.
        what: What the folder is, named in messages.
        error: The exception class raised on failure (a `BlokusError` subclass).

    Returns:
        `path`, as a `Path`.

    Raises:
        error: `path` is a symbolic link (even to a folder: files written in it would land elsewhere), a file or
            anything but a folder, or it cannot be created.
    """
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        pass  # not a folder (or a dangling link): said below
    except OSError as exc:
        if not os.path.islink(path):
            raise error(f"cannot create {what} {str(path)!r}: {_reason(exc)}") from exc
    try:
        info = os.lstat(path)
    except OSError as exc:
        raise error(f"cannot create {what} {str(path)!r}: {_reason(exc)}") from exc
    if not stat.S_ISDIR(info.st_mode):
        raise error(
            f"refusing to write into {what} {str(path)!r}: it is {_kind_of(info.st_mode)}, not a folder; remove it "
            f"or choose another path"
        )
    return path


def _raise_open(path: Any, exc: OSError, what: str, error: type[Exception], verb: str) -> NoReturn:
    if exc.errno == errno.ELOOP:
        raise error(f"refusing to {verb} {what} {str(path)!r}: it is a symbolic link; remove it") from exc
    if exc.errno == errno.ENXIO:
        raise error(f"refusing to {verb} {what} {str(path)!r}: it is not a regular file (a FIFO or socket)") from exc
    raise error(f"cannot {verb} {what} {str(path)!r}: {_reason(exc)}") from exc


def _require_regular(fd: int, path: Any, what: str, error: type[Exception], verb: str) -> os.stat_result:
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise error(
            f"{'cannot read' if verb == 'read' else 'refusing to ' + verb} {what} {str(path)!r}: it is "
            f"{_kind_of(info.st_mode)}, not a regular file; give a regular file"
        )
    return info


@contextlib.contextmanager
def open_regular(
    path: str | os.PathLike, *, what: str = "file", error: type[Exception] = BlokusError, follow: bool = True
) -> Iterator[IO[bytes]]:
    """`path` opened for binary reading after checking (on the open descriptor) that it is a regular file: a FIFO
    is refused without blocking, a device without reading it.

    Args:
        path: The file to read.
        what: What the file is, named in messages (e.g. `"SVG picture"`).
        error: The exception class raised on failure (a `BlokusError` subclass).
        follow: Follow a symbolic link; `False` refuses one.

    Yields:
        The file, open for binary reading; it is closed when the `with` block ends.

    Raises:
        error: `path` cannot be opened, is not a regular file, or is a symbolic link while `follow` is `False`.
    """
    flags = os.O_RDONLY | _NONBLOCK | _CLOEXEC | (0 if follow else _NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        _raise_open(path, exc, what, error, "read")
    try:
        _require_regular(fd, path, what, error, "read")
        if _NONBLOCK:
            import fcntl

            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f


def _read_fd(fd: int, size: int) -> bytes:
    """One `os.read` (the only place file contents are read; tests count the bytes that pass here)."""
    return os.read(fd, size)


def read_bytes(
    path: str | os.PathLike, limit: int, *, what: str = "file", error: type[Exception] = BlokusError
) -> bytes:
    """The bytes of regular file `path`. A file whose size is over `limit` is refused before reading, and at most
    `limit` + 1 bytes are ever read, whatever size the file system reports.

    Args:
        path: The file to read.
        limit: The most bytes the file may hold.
        what: What the file is, named in messages (e.g. `"SVG picture"`).
        error: The exception class raised on failure (a `BlokusError` subclass).

    Returns:
        The file's content.

    Raises:
        error: `path` is not a regular file, cannot be read, or holds more than `limit` bytes.
    """
    too_big = f"{what} {str(path)!r} is larger than allowed (over the {limit:,}-byte limit), so it is not one"
    with open_regular(path, what=what, error=error) as f:
        if os.fstat(f.fileno()).st_size > limit:
            raise error(too_big)
        chunks, total = [], 0
        try:
            while total <= limit:
                chunk = _read_fd(f.fileno(), min(1 << 20, limit + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
        except OSError as exc:
            raise error(f"cannot read {what} {str(path)!r}: {_reason(exc)}") from exc
    if total > limit:
        raise error(too_big)
    return b"".join(chunks)


def read_text(path: str | os.PathLike, limit: int, *, what: str = "file", error: type[Exception] = BlokusError) -> str:
    """`read_bytes` decoded as UTF-8 (a leading byte order mark dropped).

    Args:
        path: The file to read.
        limit: The most bytes the file may hold.
        what: What the file is, named in messages (e.g. `"SVG picture"`).
        error: The exception class raised on failure (a `BlokusError` subclass).

    Returns:
        The file's text.

    Raises:
        error: As `read_bytes`, or the bytes are not UTF-8.
    """
    data = read_bytes(path, limit, what=what, error=error)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise error(f"{what} {str(path)!r} is not UTF-8 text (byte {exc.start})") from None


def iter_lines(
    path: str | os.PathLike,
    max_line: int,
    *,
    what: str = "file",
    error: type[Exception] = BlokusError,
    follow: bool = True,
) -> Iterator[tuple[int, bytes, bool]]:
    """Stream the lines of regular file `path`. Memory stays bounded by `max_line` whatever the file's size.

    Args:
        path: The file to read.
        max_line: The most bytes a line may hold, without its newline.
        what: What the file is, named in messages (e.g. `"SVG picture"`).
        error: The exception class raised on failure (a `BlokusError` subclass).
        follow: Follow a symbolic link; `False` refuses one.

    Yields:
        `(number from 1, bytes without the newline, ended)`, where `ended` says whether a newline followed (false
        only for a last line cut short).

    Raises:
        error: As `open_regular`, a read fails, or a line is over `max_line` bytes (the message names it).
    """
    with open_regular(path, what=what, error=error, follow=follow) as f:
        number = 0
        while True:
            try:
                line = f.readline(max_line + 2)
            except OSError as exc:
                raise error(f"cannot read {what} {str(path)!r}: {_reason(exc)}") from exc
            if not line:
                return
            number += 1
            ended = line.endswith(b"\n")
            body = line[:-1] if ended else line
            if len(body) > max_line:
                raise error(f"{what} {str(path)!r}, line {number}: longer than {max_line:,} bytes; it is corrupt")
            yield number, body, ended


def json_depth(value: Any) -> int:
    """The nesting depth of parsed JSON `value` (0 for a scalar), computed without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def load_json(
    text: str | bytes,
    *,
    max_depth: int = MAX_JSON_DEPTH,
    what: str = "JSON",
    error: type[Exception] = BlokusError,
) -> Any:
    """Parse JSON `text` (bytes must be UTF-8), refusing malformed text, non-UTF-8 bytes, numbers of more than
    Python's digit limit and nesting deeper than `max_depth` with `error` (never a `RecursionError`).

    Args:
        text: The JSON text; bytes are decoded as UTF-8 (a leading byte order mark dropped).
        max_depth: The deepest nesting allowed (see `json_depth`).
        what: What the text is, named in messages.
        error: The exception class raised on failure (a `BlokusError` subclass).

    Returns:
        The parsed value.

    Raises:
        error: Bytes that are not UTF-8, text that is not valid JSON, or nesting deeper than `max_depth` (or than
            the parser's recursion allows).
    """
    if isinstance(text, (bytes, bytearray)):
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise error(f"{what} is not UTF-8 text (byte {exc.start})") from None
    try:
        value = json.loads(text)
    except RecursionError:
        raise error(f"{what} is nested too deeply (more than {max_depth} levels)") from None
    except ValueError as exc:
        raise error(f"{what} is not valid JSON ({str(exc)[:160]})") from None
    opened = text.count("[") + text.count("{")  # a cheap bound: no walk when it cannot be too deep
    if opened > max_depth and json_depth(value) > max_depth:
        raise error(f"{what} is nested too deeply (more than {max_depth} levels)")
    return value


def _owner_text(fd: int) -> str:
    """What the lock file's holder wrote (`"pid N on HOST"`), for messages only; garbage is shown harmlessly."""
    try:
        raw = os.pread(fd, 200, 0)
    except OSError:
        return "unknown process"
    words = raw.decode("utf-8", "replace").split()
    pid = words[0] if words and words[0].isascii() and words[0].isdigit() and len(words[0]) <= 12 else None
    host = "".join(ch for ch in words[1] if ch.isprintable())[:64] if len(words) > 1 else ""
    if pid is None:
        return "unknown process"
    return f"pid {pid}" + (f" on {host}" if host and host != socket.gethostname() else "")


@contextlib.contextmanager
def exclusive_lock(
    path: str | os.PathLike, *, what: str = "lock", error: type[Exception] = BlokusError, busy: str = ""
) -> Iterator[None]:
    """Hold an exclusive `fcntl.flock` lock on `path` (created if missing; a symbolic link or non-regular file is
    refused) for the `with` block, and remove the file when done. Taking it is atomic among processes; the kernel
    releases it when its holder dies, so a lock file left by a dead process is simply taken.

    Args:
        path: The lock file.
        what: What the lock is, named in messages.
        error: The exception class raised on failure (a `BlokusError` subclass).
        busy: The message when another process holds the lock, its `{owner}` replaced by the holder the file
            names (`"pid N on HOST"`; messages only); default one naming `what` and `path`.

    Yields:
        Nothing; the lock is held for the `with` block.

    Raises:
        error: Another process holds the lock, the file cannot be opened or is not a regular file, or other
            processes keep replacing it.
    """
    import fcntl

    path = Path(path)
    for _ in range(16):  # the file can be removed and recreated by a holder finishing in between
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o666)
        except OSError as exc:
            _raise_open(path, exc, what, error, "open")
        try:
            mine = _require_regular(fd, path, what, error, "lock")
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                owner = _owner_text(fd)
                text = busy or f"{what} {str(path)!r} is held by another process ({{owner}})"
                raise error(text.replace("{owner}", owner)) from None  # no str.format: paths may hold braces
            try:
                now = os.stat(path, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            if now is not None and (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino):
                break  # the file we locked is still the one at the path
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    else:
        raise error(f"could not take {what} {str(path)!r}: other processes keep replacing it")
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)
    except OSError:
        pass  # the pid is for messages only
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)  # while still holding it, so no one can lock the file being removed unnoticed
        os.close(fd)


__all__ = [
    "MAX_JSON_DEPTH",
    "append_text",
    "atomic_writer",
    "check_target",
    "exclusive_lock",
    "iter_lines",
    "json_depth",
    "load_json",
    "make_dir",
    "open_append",
    "open_regular",
    "read_bytes",
    "read_text",
    "write_atomic",
]
