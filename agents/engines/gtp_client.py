"""A GTP engine run as a child process, seen from the controller's side: `GtpClient` sends one command and
returns its reply, bounded in time and size; `EngineError` says how an engine failed."""

from __future__ import annotations

import queue
import shlex
import subprocess
import threading
import time
from typing import Any

from blokus_jax.errors import BlokusError

#: Longest reply read from an engine (bytes, blank lines before it included); Classic's first `all_legal` is
#: well under it. More unanswered output than this is an engine failure (`garbage`).
MAX_REPLY = 4_000_000
#: Longest line of an engine's output (bytes).
MAX_LINE = 1_000_000
#: Most blank lines an engine may write between two replies (GTP ends a reply with one).
MAX_BLANK_LINES = 1_000
#: Kinds of engine failure; a game that ends in one is an `error` game.
FAILURES = ("crash", "timeout", "garbage", "refused", "illegal", "disagreement")


class EngineError(BlokusError, RuntimeError):
    """A GTP engine that died, timed out, answered garbage, played an illegal move or disagreed on the rules.

    `kind` is one of `FAILURES`."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


class MatchError(BlokusError, ValueError):
    """Match settings that cannot be used (a bad level list, a results file of another match, ...)."""


# ------------------------------------------------------------------------------------------- GTP client
class GtpClient:
    """A GTP engine run as a child process: `send` one command, get its reply text.

    The engine's stderr goes to `stderr` (a file object, default: discarded). Every reply must come within
    `timeout` seconds, hold at most `MAX_REPLY` bytes in lines of at most `MAX_LINE` bytes, and be UTF-8 text;
    otherwise, or when the process dies, an `EngineError` is raised at once and the engine is stopped."""

    def __init__(self, command: str, timeout: float = 60.0, stderr: Any = subprocess.DEVNULL):
        self.command = command
        self.timeout = float(timeout)
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise MatchError(f"engine command {command!r} cannot be split into words: {exc}") from None
        if not argv:
            raise MatchError("the engine command is empty; give the command line that starts a GTP engine")
        try:
            self._process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        except OSError as exc:
            raise MatchError(f"cannot start engine {argv[0]!r}: {exc.strerror or exc}; check the command") from None
        # lines of text, None at the end of output, or an (kind, message) failure the reader found
        self._lines: queue.Queue[str | tuple[str, str] | None] = queue.Queue()
        self._pending = 0  # bytes read but not yet taken by send (bounded by MAX_REPLY)
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name="gtp-client-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """The reader thread: the engine's output, line by line, onto the queue. It never holds more than
        `MAX_REPLY` unread bytes nor reads a line longer than `MAX_LINE`, and decodes strictly: an over-long line,
        an overflow or bytes that are not UTF-8 end it with a `garbage` failure at once. It ends quietly when the
        pipe is closed under it."""
        stream = self._process.stdout
        assert stream is not None
        in_reply, blanks = False, 0
        try:
            while line := stream.readline(MAX_LINE + 1):
                if len(line) > MAX_LINE:
                    self._lines.put(("garbage", f"a line of the engine's output is longer than {MAX_LINE:,} bytes"))
                    return
                if not line.strip():
                    if not in_reply:  # blank lines between replies are skipped here, a bounded number of them
                        blanks += 1
                        if blanks > MAX_BLANK_LINES:
                            self._lines.put(("garbage", f"the engine wrote more than {MAX_BLANK_LINES:,} blank lines"))
                            return
                        continue
                    in_reply = False  # the blank line that ends a reply
                else:
                    in_reply, blanks = True, 0
                with self._lock:
                    self._pending += len(line)
                    overflow = self._pending > MAX_REPLY
                if overflow:
                    self._lines.put(("garbage", f"the engine wrote more than {MAX_REPLY:,} bytes without a reply"))
                    return
                try:
                    text = line.decode("utf-8")
                except UnicodeDecodeError as exc:
                    shown = line[max(0, exc.start - 20) : exc.start + 20]
                    text = f"the engine's output is not UTF-8 text (byte {exc.start} of {shown!r})"
                    self._lines.put(("garbage", text))
                    return
                self._lines.put(text)
        except (OSError, ValueError):
            pass  # the pipe was closed while reading: the engine is being stopped
        self._lines.put(None)

    @property
    def alive(self) -> bool:
        return self._process.poll() is None

    def send(self, command: str) -> str:
        """The reply to `command` (the text after `=`, stripped). Raises `EngineError` `refused` for a
        `?` reply and `crash`/`timeout`/`garbage` for a dead, slow or incomprehensible engine."""
        if not self.alive:
            raise EngineError("crash", f"the engine exited (code {self._process.returncode}) before {command!r}")
        try:
            assert self._process.stdin is not None
            self._process.stdin.write(command.encode("utf-8", "replace") + b"\n")
            self._process.stdin.flush()
        except (OSError, ValueError):
            self.close()
            raise EngineError("crash", f"the engine closed its input; it died before {command!r}") from None
        deadline = time.monotonic() + self.timeout
        lines: list[str] = []
        size = 0
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.close(kill=True)
                raise EngineError("timeout", f"no reply to {command!r} within {self.timeout:g} s") from None
            if line is None:  # the output ended: the engine exited (or closed its output, then it is stopped)
                try:
                    code = self._process.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    self.close(kill=True)
                    code = self._process.returncode
                raise EngineError("crash", f"the engine exited (code {code}) while answering {command!r}")
            if isinstance(line, tuple):  # the reader found garbage: a failure at once, no waiting for the timeout
                self.close(kill=True)
                raise EngineError(line[0], f"{line[1]} while answering {command!r}")
            taken = len(line.encode("utf-8"))
            with self._lock:
                self._pending -= taken
            size += taken
            if size > MAX_REPLY:
                self.close(kill=True)
                raise EngineError("garbage", f"the reply to {command!r} is longer than {MAX_REPLY:,} bytes")
            text = line.rstrip("\r\n")
            if not lines and not text.strip():
                continue  # blank lines before a reply
            if not text.strip():
                break
            lines.append(text)
        head = lines[0]
        if head[:1] not in "=?":
            self.close(kill=True)
            raise EngineError("garbage", f"the reply to {command!r} does not start with '=' or '?': {head[:80]!r}")
        body = "\n".join([head[1:].lstrip("0123456789").strip(), *lines[1:]]).strip()
        if head[0] == "?":
            raise EngineError("refused", f"the engine refused {command!r}: {body[:200]}")
        return body

    def known(self, command: str) -> bool:
        """Whether the engine knows `command` (`known_command`; False if it does not answer that)."""
        try:
            return self.send(f"known_command {command}").strip().lower() == "true"
        except EngineError as exc:
            if exc.kind == "refused":
                return False
            raise

    def close(self, kill: bool = False) -> None:
        """Stop the engine (`quit`, then kill; at once with `kill`, for an engine that failed), then its reader
        thread, and only then close the pipes (never under a thread still reading them)."""
        if kill and self.alive:
            self._process.kill()
        if self.alive:
            try:
                assert self._process.stdin is not None
                self._process.stdin.write(b"quit\n")
                self._process.stdin.flush()
                self._process.wait(timeout=2)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        self._reader.join(timeout=5)  # the engine is gone: its output ends (unless a child of it keeps the pipe)
        streams = [self._process.stdin] + ([] if self._reader.is_alive() else [self._process.stdout])
        for stream in streams:
            try:
                if stream is not None:
                    stream.close()
            except (OSError, ValueError):
                pass
