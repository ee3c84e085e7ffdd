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

#: Longest reply read from an engine (characters); Classic's first `all_legal` is well under it.
MAX_REPLY = 4_000_000
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
    `timeout` seconds and hold at most `MAX_REPLY` characters; otherwise, or when the process dies, an
    `EngineError` is raised and the engine is stopped."""

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
            self._process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, text=True, bufsize=1
            )
        except OSError as exc:
            raise MatchError(f"cannot start engine {argv[0]!r}: {exc.strerror or exc}; check the command") from None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self._process.stdout
        assert stream is not None
        while line := stream.readline(MAX_REPLY + 1):
            self._lines.put(line)
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
            self._process.stdin.write(command + "\n")
            self._process.stdin.flush()
        except (BrokenPipeError, OSError):
            self.close()
            raise EngineError("crash", f"the engine closed its input; it died before {command!r}") from None
        deadline = time.monotonic() + self.timeout
        lines: list[str] = []
        size = 0
        while True:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.close()
                raise EngineError("timeout", f"no reply to {command!r} within {self.timeout:g} s") from None
            if line is None:
                code = self._process.wait()
                raise EngineError("crash", f"the engine exited (code {code}) while answering {command!r}")
            size += len(line)
            if size > MAX_REPLY:
                self.close()
                raise EngineError("garbage", f"the reply to {command!r} is longer than {MAX_REPLY} characters")
            text = line.rstrip("\r\n")
            if not lines and not text.strip():
                continue  # blank lines before a reply
            if not text.strip():
                break
            lines.append(text)
        head = lines[0]
        if head[:1] not in "=?":
            self.close()
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

    def close(self) -> None:
        """Stop the engine (`quit`, then terminate, then kill)."""
        if self.alive:
            try:
                assert self._process.stdin is not None
                self._process.stdin.write("quit\n")
                self._process.stdin.flush()
                self._process.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                self._process.kill()
                self._process.wait()
        for stream in (self._process.stdin, self._process.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
