"""The GTP client under a misbehaving engine's output: bytes that are not UTF-8, floods of blank lines, over-long
lines and replies are each an engine failure at once (``garbage``, not a wait for the timeout), with no thread
traceback and no read on a closed pipe; the reader stops before the pipes are closed."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from blokus_agents.engines import gtp_client
from blokus_agents.engines.gtp_client import EngineError, GtpClient

TINY = f"{sys.executable} {Path(__file__).parent / 'tiny_gtp_engine.py'}"


@pytest.fixture
def thread_errors(monkeypatch) -> list[BaseException]:
    """Exceptions raised in any thread during the test (a reader's traceback would land here)."""
    seen: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: seen.append(args.exc_value))
    return seen


@pytest.mark.parametrize(
    "mode, message",
    [("badutf8", "not UTF-8"), ("flood", "blank lines"), ("longline", "longer than"),
     ("chatty", "longer than 4,000,000 bytes")],
)  # fmt: skip
def test_bad_output_is_an_engine_failure_at_once(mode, message, thread_errors) -> None:
    client = GtpClient(f"{TINY} {mode}", timeout=120.0)  # a wait for the timeout would fail the kind check below
    assert client.send("name") == ""
    with pytest.raises(EngineError) as caught:
        client.send("genmove b")
    assert caught.value.kind == "garbage" and message in str(caught.value), caught.value
    assert not client.alive and not client._reader.is_alive()  # the reader stopped before the pipes were closed
    assert client._process.stdout.closed and client._process.stdin.closed
    with pytest.raises(EngineError) as again:
        client.send("name")
    assert again.value.kind == "crash"
    client.close()  # closing twice is harmless
    assert thread_errors == []


def test_the_reader_holds_a_bounded_amount_of_output(monkeypatch, thread_errors) -> None:
    monkeypatch.setattr(gtp_client, "MAX_REPLY", 100_000)
    client = GtpClient(f"{TINY} chatty", timeout=120.0)
    with pytest.raises(EngineError, match="(longer|more) than 100,000 bytes") as caught:
        client.send("genmove b")
    assert caught.value.kind == "garbage"
    assert client._lines.qsize() <= 100_000 // 3 + 2  # lines of 3 bytes: what the reader queued stays bounded
    assert thread_errors == []


def test_a_well_behaved_engine_still_answers_and_closes(thread_errors) -> None:
    client = GtpClient(f"{TINY} resign", timeout=120.0)
    assert client.send("name") == "" and client.send("genmove b") == "resign"
    client.close()
    assert not client.alive and not client._reader.is_alive()
    assert thread_errors == []


def test_a_match_against_an_engine_writing_garbage_counts_each_game_apart(tmp_path, thread_errors) -> None:
    from blokus_agents.engines import ladder

    results = tmp_path / "r.jsonl"
    rows = ladder.play_match("greedy", f"{TINY} badutf8", 2, results=results, timeout=120.0, progress=False)[None]
    assert [r.failed for r in rows] == [True, True]
    assert all(r.error.startswith("garbage") and "not UTF-8" in r.error for r in rows), rows
    assert len(results.read_text().splitlines()) == 3  # the settings line and both games, counted apart
    assert thread_errors == []
