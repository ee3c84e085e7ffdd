"""Hostile files: every file blokus-jax writes is created safely and atomically, never
through a symbolic link; reads are of regular files only and capped; the run lock is atomic among processes; and
``metrics.jsonl`` is streamed, with every malformed line a ``CheckpointError`` naming the file and the line."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import jax
import pytest

import blokus_jax
from blokus_agents.training import rundir
from blokus_jax.errors import BlokusError, CheckpointError, RecordError
from blokus_jax.io import fileio, records, viewer
from blokus_jax.rollout import rollout


@pytest.fixture(scope="module")
def game():
    env = blokus_jax.make("simple")
    _, actions = rollout(env, jax.random.key(0), batch=2)
    return records.from_rollout(env, actions, players=["a", "b"])


def _fail_half_way(monkeypatch):
    """Make the next file write stop half-way with 'No space left on device' (a full disk)."""
    real = os.write

    def write(fd, data):
        if len(data) > 1:
            real(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", write)


def _no_temp_files(folder: Path) -> bool:
    return not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


# ------------------------------------------------------------------------------------------------ safe writing
def test_a_planted_symlink_at_the_target_is_refused_and_its_target_untouched(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    for name in ("metrics.jsonl", "page.html", "game.blksgf"):
        (run / name).symlink_to(outside)
        with pytest.raises(BlokusError, match="symbolic link"):
            fileio.write_atomic(run / name, "evil")
        with pytest.raises(BlokusError, match="symbolic link"):
            fileio.append_text(run / name, "evil")
    assert outside.read_text() == "precious"


def test_predictable_temporary_names_cannot_be_hijacked(tmp_path):
    """The old code wrote ``metrics.tmp`` (and ``NAME.json.tmp``) then renamed it: a symlink planted under that name
    redirected the write outside the run directory. Temporary files are now fresh and exclusive."""
    outside = tmp_path / "outside.txt"
    outside.write_text("precious")
    run = tmp_path / "run"
    run.mkdir()
    for name in ("metrics.tmp", "metrics.jsonl.tmp", ".metrics.jsonl.tmp", "x.json.tmp"):
        (run / name).symlink_to(outside)
    (run / "metrics.jsonl").write_text(json.dumps({"update": 1, "env_steps": 4}) + "\n")
    rundir.truncate_metrics(run, 0)
    fileio.write_atomic(run / "x.json", "{}")
    assert outside.read_text() == "precious"
    assert (run / "metrics.jsonl").read_text() == "" and (run / "x.json").read_text() == "{}"


@pytest.mark.parametrize("kind", ["fifo", "dir", "dev_zero_link"])
def test_non_regular_targets_are_refused(tmp_path, kind):
    path = tmp_path / "target"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    with pytest.raises(BlokusError, match="refusing to write|not a regular file"):
        fileio.write_atomic(path, "x")
    with pytest.raises(BlokusError):
        fileio.append_text(path, "x")  # never blocks on a FIFO without a reader


def test_a_write_that_fails_half_way_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = tmp_path / "file.txt"
    path.write_text("good")
    _fail_half_way(monkeypatch)
    with pytest.raises(BlokusError, match="No space left.*unchanged"):
        fileio.write_atomic(path, "new content " * 100)
    monkeypatch.undo()
    assert path.read_text() == "good" and _no_temp_files(tmp_path)


def test_overwrite_false_never_replaces_and_keeps_the_mode(tmp_path):
    path = tmp_path / "file.txt"
    fileio.write_atomic(path, "one", overwrite=False)
    with pytest.raises(BlokusError, match="already exists"):
        fileio.write_atomic(path, "two", overwrite=False)
    assert path.read_text() == "one"
    path.chmod(0o600)
    fileio.write_atomic(path, "three")
    assert path.read_text() == "three" and (path.stat().st_mode & 0o777) == 0o600


def test_an_unwritable_folder_is_an_error_not_a_traceback(tmp_path):
    with pytest.raises(RecordError, match="cannot write record"):
        fileio.write_atomic(tmp_path / "no" / "such" / "x.json", "{}", what="record", error=RecordError)


# ------------------------------------------------------------------------------------------------ bounded reads
def test_reads_refuse_devices_and_fifos_and_cap_the_bytes_actually_read(tmp_path, monkeypatch):
    zero = tmp_path / "zero"
    zero.symlink_to("/dev/zero")
    with pytest.raises(BlokusError, match="character device, not a regular file"):
        fileio.read_bytes(zero, 100)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(BlokusError, match="FIFO"):
        fileio.read_bytes(fifo, 100)  # refused without waiting for a writer
    with pytest.raises(BlokusError, match="FIFO"):
        list(fileio.iter_lines(fifo, 100))
    big = tmp_path / "big"
    big.write_bytes(b"x" * 1000)
    read = []
    original = fileio._read_fd
    monkeypatch.setattr(fileio, "_read_fd", lambda fd, n: read.append(original(fd, n)) or read[-1])
    monkeypatch.setattr(os, "fstat", lambda fd, real=os.fstat: _lie_about_size(real(fd)))  # a file that lies
    with pytest.raises(BlokusError, match="over the 100-byte limit"):
        fileio.read_bytes(big, 100)
    assert sum(map(len, read)) == 101  # never more than limit + 1, whatever the size the file claims


def _lie_about_size(info: os.stat_result) -> os.stat_result:
    values = list(info)
    values[6] = 0  # st_size
    return os.stat_result(values)


def test_json_nesting_and_encoding_are_bounded():
    for text in ("[" * 200_000 + "]" * 200_000, "[" * 100 + "]" * 100):
        with pytest.raises(BlokusError, match="nested too deeply"):
            fileio.load_json(text, max_depth=64)
    with pytest.raises(BlokusError, match="not UTF-8"):
        fileio.load_json(b'{"a": "\xff"}')
    with pytest.raises(BlokusError, match="not valid JSON"):
        fileio.load_json("1" * 5000)  # more digits than Python converts
    assert fileio.load_json('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    assert fileio.json_depth({"a": [1, {"b": 2}]}) == 3


# --------------------------------------------------------------------------------------------- records, viewer
def test_record_save_is_atomic_and_refuses_links(tmp_path, game, monkeypatch):
    path = tmp_path / "g.json"
    game[0].save(path)
    good = path.read_bytes()
    _fail_half_way(monkeypatch)
    with pytest.raises(RecordError, match="No space left"):
        game[1].save(path)
    monkeypatch.undo()
    assert path.read_bytes() == good and records.load(path) == game[0] and _no_temp_files(tmp_path)
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(RecordError, match="symbolic link"):
        game[0].save(link)
    assert not (tmp_path / "elsewhere.json").exists()


def test_records_load_refuses_fifos_and_devices(tmp_path):
    fifo = tmp_path / "game.blksgf"
    os.mkfifo(fifo)
    with pytest.raises(RecordError, match="cannot read record.*FIFO"):
        records.load(fifo)
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    with pytest.raises(RecordError, match="not a regular file"):
        records.load(zero)


def test_save_records_never_replaces_and_refuses_stems_with_path_parts(tmp_path, game):
    folder = tmp_path / "games"
    paths = records.save_records(game, folder)
    before = {p: p.read_bytes() for p in paths}
    with pytest.raises(RecordError, match="exist already"):
        records.save_records(game[::-1], folder)
    assert {p: p.read_bytes() for p in paths} == before
    assert records.save_records(game[::-1], folder, overwrite=True) == paths
    for stem in ("../x", "a/b", "/abs", "..", ".hidden", "", "a\x00b", "a\\b"):
        with pytest.raises(RecordError, match="plain name"):
            records.save_records(game, folder, stem=stem)
    assert not (tmp_path / "x_0000.json").exists()
    (folder / "new_0001.json").write_text("someone else's")
    with pytest.raises(RecordError, match="exist already"):
        records.save_records(game, folder, stem="new")
    assert not (folder / "new_0000.json").exists()  # checked before the first write: nothing written


def test_a_re_view_that_fails_half_way_keeps_the_good_page(tmp_path, game, monkeypatch):
    page = tmp_path / "game.html"
    viewer.write_viewer(game[0], page)
    good = page.read_bytes()
    _fail_half_way(monkeypatch)
    with pytest.raises(BlokusError, match="viewer page"):
        viewer.write_viewer(game[1], page)
    monkeypatch.undo()
    assert page.read_bytes() == good and _no_temp_files(tmp_path)
    fifo = tmp_path / "fifo.html"
    os.mkfifo(fifo)
    assert viewer.page_source(fifo) is None  # not waited on
    with pytest.raises(BlokusError, match="not a regular file"):
        viewer.write_viewer(game[0], fifo)


def test_view_command_refuses_a_symlinked_page(tmp_path, game, capsys):
    from blokus_agents import cli

    source = game[0].save(tmp_path / "g.json")
    target = tmp_path / "g.html"
    viewer.write_viewer(game[0], tmp_path / "real.html", source=str(source.resolve()))
    target.symlink_to(tmp_path / "real.html")
    assert cli.main(["view", str(source)]) == 2
    assert "symbolic link" in capsys.readouterr().err


# -------------------------------------------------------------------------------------------------- run lock
def test_the_run_lock_refuses_a_second_holder_and_survives_garbage(tmp_path):
    run = tmp_path / "run {0} {owner!r}"  # braces in the path are shown as they are
    run.mkdir()
    lock = run / rundir.LOCK_FILE
    lock.write_text("")  # empty: left by a killed trainer, taken over
    with rundir.run_lock(run):
        assert lock.read_text().split()[0] == str(os.getpid())
        with pytest.raises(CheckpointError, match=f"in use by another trainer \\(pid {os.getpid()}\\)"):
            with rundir.run_lock(run):
                pass
        lock.write_text("123456789012345678901 host\x1b[2J")  # a 20-digit pid and garbage: for messages only
        with pytest.raises(CheckpointError, match="in use by another trainer \\(unknown process\\)"):
            with rundir.run_lock(run):
                pass
    assert not lock.exists()
    for garbage in (b"99999999999999999999 x\n", b"\xff\xfe\x00", b"-1", b"x" * 10_000):
        lock.write_bytes(garbage)
        with rundir.run_lock(run):  # nobody holds it: taken
            pass
    lock.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(CheckpointError, match="symbolic link"):
        with rundir.run_lock(run):
            pass
    assert not (tmp_path / "elsewhere").exists()


_HAMMER = textwrap.dedent(
    """
    import os, sys
    from blokus_jax.io import fileio
    from blokus_jax.errors import BlokusError
    lock, inside, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    got = clash = attempts = 0
    while got < rounds and attempts < 1000 * rounds:  # retry a busy lock until taken `rounds` times
        attempts += 1
        try:
            with fileio.exclusive_lock(lock):
                got += 1
                try:
                    fd = os.open(inside, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                except FileExistsError:
                    clash += 1
                    continue
                os.close(fd)
                os.unlink(inside)
        except BlokusError:
            pass
    print(got, clash)
    """
)


def test_the_lock_is_exclusive_among_concurrent_processes(tmp_path):
    """Three processes each take and release the lock 300 times (retrying while another holds it); whoever holds it
    creates a marker file exclusively, so two holders at once would collide. (The old pid-file lock let 60 of 1,200
    in twice.)"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _HAMMER, str(tmp_path / "train.lock"), str(tmp_path / "inside"), "300"],
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        for _ in range(3)
    ]
    results = [tuple(map(int, p.communicate(timeout=300)[0].split())) for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sum(clash for _, clash in results) == 0
    assert [got for got, _ in results] == [300, 300, 300]  # every process got the lock every time it asked


# ------------------------------------------------------------------------------------------------- metrics.jsonl
def _metrics(run: Path, *lines: bytes) -> Path:
    run.mkdir(exist_ok=True)
    path = run / rundir.METRICS_FILE
    path.write_bytes(b"".join(lines))
    return path


def _row(update: int, **extra) -> bytes:
    return (json.dumps({"update": update, "env_steps": 16 * update, **extra}) + "\n").encode()


@pytest.mark.parametrize(
    "bad, message",
    [
        (b"[" * 200_000 + b"]" * 200_000 + b"\n", "nested too deeply"),
        (b'{"update": 2, "env_steps": 32, "x": "\xff\xfe"}\n', "not UTF-8"),
        (b'{"update": 2}\n', "env_steps=no value"),
        (b'{"update": true, "env_steps": 3}\n', "update=True"),
        (b'{"update": 2.5, "env_steps": 3}\n', "update=2.5"),
        (b'{"update": 2, "env_steps": "32"}\n', "env_steps='32'"),
        (b"[1, 2]\n", "not an object"),
        (b"{not json\n", "not valid JSON"),
        (b'{"update": ' + b"9" * 5000 + b', "env_steps": 1}\n', "not valid JSON"),
        (b"x" * (rundir.MAX_LINE_BYTES + 5) + b"\n", "longer than"),
    ],
)
def test_malformed_metrics_lines_name_the_file_and_line(tmp_path, bad, message):
    path = _metrics(tmp_path / "run", _row(1), bad, _row(3))
    before = path.read_bytes()
    with pytest.raises(CheckpointError, match=f"metrics file .*metrics.jsonl'?, line 2.*{message}|{message}") as err:
        rundir.read_metrics(tmp_path / "run")
    assert "line 2" in str(err.value) and "metrics" in str(err.value)
    with pytest.raises(CheckpointError, match="line 2"):
        rundir.truncate_metrics(tmp_path / "run", 2)  # resuming from update 2 keeps that line
    assert path.read_bytes() == before  # a refused resume changes nothing


def test_a_last_line_cut_short_is_dropped_on_resume(tmp_path):
    path = _metrics(tmp_path / "run", _row(1), _row(2), _row(3), b'{"update": 4, "env_st')
    assert [r["update"] for r in rundir.read_metrics(tmp_path / "run")] == [1, 2, 3]
    rundir.truncate_metrics(tmp_path / "run", 2)
    assert path.read_bytes() == _row(1) + _row(2)
    rundir.truncate_metrics(tmp_path / "run", 5)  # nothing to drop: untouched
    assert path.read_bytes() == _row(1) + _row(2)


def test_metrics_links_and_fifos_are_refused(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(_row(1))
    (run / rundir.METRICS_FILE).symlink_to(outside)
    for call in (
        lambda: rundir.read_metrics(run),
        lambda: rundir.truncate_metrics(run, 0),
        lambda: rundir.append_metrics(run, {"update": 2, "env_steps": 2}),
    ):
        with pytest.raises(CheckpointError, match="symbolic link"):
            call()
    assert outside.read_bytes() == _row(1)


def test_a_97_megabyte_metrics_file_resumes_in_bounded_memory(tmp_path):
    """Streaming: truncating a 97 MB log (the issue's 1.4 GB case) stays far below the file's size in memory."""
    script = textwrap.dedent(
        """
        import json, os, resource, sys
        from blokus_agents.training import rundir
        run = sys.argv[1]
        row = {"update": 0, "env_steps": 0, "loss": 0.123456789, "note": "x" * 1900}
        with open(run + "/metrics.jsonl", "w") as f:
            for u in range(1, 50_001):
                row["update"], row["env_steps"] = u, 512 * u
                f.write(json.dumps(row) + "\\n")
        size = os.path.getsize(run + "/metrics.jsonl")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        rundir.truncate_metrics(run, 40_000)
        evaluations = rundir.read_evaluations(run)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(size, (after - before) * 1024, len(evaluations), list(rundir.iter_metrics(run))[-1]["update"])
        """
    )
    run = tmp_path / "run"
    run.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", script, str(run)], capture_output=True, text=True, env=env, check=True)
    size, grown, evaluations, last = map(int, out.stdout.split())
    assert size > 90_000_000 and evaluations == 0
    assert grown < 50_000_000, f"resuming grew memory by {grown:,} bytes for a {size:,}-byte file"
    assert last == 40_000


def test_save_games_never_silently_replaces_a_saved_game(tmp_path, capsys):
    from blokus_agents import cli

    games = tmp_path / "games"
    argv = ["eval", "--variant", "simple", "--agents", "greedy", "random", "--games", "2", "--no-progress"]
    argv += ["--save-games", str(games), "--num-saved", "2", "--format", "json"]
    assert cli.main(argv) == 0
    before = {p.name: p.read_bytes() for p in games.iterdir()}
    assert sorted(before) == ["game_0000.json", "game_0001.json"]
    capsys.readouterr()
    assert cli.main([*argv[:-4], "--seed", "7", *argv[-4:]]) == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]  # after the match's compile lines, one line of error, no traceback
    assert "exist already" in last and "refusing to replace" in last and "Traceback" not in err
    assert {p.name: p.read_bytes() for p in games.iterdir()} == before


def test_records_a_resume_drops_need_only_their_update(tmp_path):
    path = _metrics(tmp_path / "run", _row(1), _row(2), b'{"update": 3}\n', b'{"update": 4, "env_steps": "x"}\n')
    with pytest.raises(CheckpointError, match="line 3 has env_steps=no value"):
        rundir.read_metrics(tmp_path / "run")  # kept, it would break the end of the run: refused
    rundir.truncate_metrics(tmp_path / "run", 2)  # dropped anyway
    assert path.read_bytes() == _row(1) + _row(2)
    _metrics(tmp_path / "run", _row(1), b'{"env_steps": 3}\n', _row(3))
    with pytest.raises(CheckpointError, match="line 2 has update=no value"):
        rundir.truncate_metrics(tmp_path / "run", 1)  # without an update it cannot be placed


def test_make_dir_and_open_append_never_follow_links(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "linked").symlink_to(target)
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    for path in (tmp_path / "linked", tmp_path / "dangling"):
        with pytest.raises(RecordError, match="symbolic link"):
            fileio.make_dir(path, error=RecordError)
    assert fileio.make_dir(tmp_path / "a" / "b", error=RecordError).is_dir()
    (tmp_path / "file").write_text("x")
    with pytest.raises(RecordError, match="not a folder"):
        fileio.make_dir(tmp_path / "file", error=RecordError)
    (tmp_path / "log").symlink_to(target / "log")
    with pytest.raises(RecordError, match="symbolic link"):
        with fileio.open_append(tmp_path / "log", error=RecordError):
            pass
    assert list(target.iterdir()) == [] and not (tmp_path / "nowhere").exists()
    with fileio.open_append(tmp_path / "real.log", error=RecordError) as f:
        f.write(b"one\n")
    with fileio.open_append(tmp_path / "real.log", error=RecordError) as f:
        f.write(b"two\n")
    assert (tmp_path / "real.log").read_bytes() == b"one\ntwo\n"


def test_a_link_as_the_run_directory_or_checkpoint_folder_is_refused(tmp_path):
    from blokus_agents.players import checkpoint_read

    target = tmp_path / "target"
    target.mkdir()
    (tmp_path / "run_link").symlink_to(target)
    with pytest.raises(CheckpointError, match="symbolic link"):
        with rundir.claim(tmp_path / "run_link"):
            pass
    run = tmp_path / "run"
    run.mkdir()
    (run / "checkpoints").symlink_to(target)
    for where in (run, tmp_path / "run_link"):
        with pytest.raises(CheckpointError, match="symbolic link"):
            with checkpoint_read._manager(where, create=True):
                pass
    assert list(target.iterdir()) == []


def test_settings_file_is_never_written_through_a_link(tmp_path):
    victim = tmp_path / "victim.json"
    victim.write_text("keep")
    (tmp_path / rundir.SETTINGS_FILE).symlink_to(victim)
    with pytest.raises(CheckpointError, match="symbolic link"):
        rundir._write_settings(tmp_path, rundir.Settings())
    assert victim.read_text() == "keep"
