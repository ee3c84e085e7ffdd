"""The CLI keeps JAX's persistent compilation cache under the user's cache folder by default; ``--no-compile-cache``
or ``BLOKUS_JAX_COMPILE_CACHE=0`` turns it off, and a path in that variable moves it."""

from __future__ import annotations

import os

import jax
import pytest

from blokus_agents import cli
from blokus_agents.cli import common
from blokus_agents.cli.common import COMPILE_CACHE_ENV, compile_cache_dir, use_compile_cache


def test_the_cache_folder_follows_the_flag_and_the_environment():
    home = os.path.expanduser("~")
    assert compile_cache_dir(environ={}) == os.path.join(home, ".cache", "blokus-jax", "jax")
    assert compile_cache_dir(environ={"XDG_CACHE_HOME": "/xdg"}) == "/xdg/blokus-jax/jax"
    assert compile_cache_dir(environ={COMPILE_CACHE_ENV: "/somewhere"}) == "/somewhere"
    for off in ("0", "off", "no"):
        assert compile_cache_dir(environ={COMPILE_CACHE_ENV: off}) is None
    assert compile_cache_dir(off=True, environ={}) is None
    assert compile_cache_dir(environ={"JAX_COMPILATION_CACHE_DIR": "/jax/own"}) is None  # JAX uses its own


def test_use_compile_cache_points_jax_at_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(COMPILE_CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    before = jax.config.jax_compilation_cache_dir
    from blokus_agents.search import calibration_store

    try:
        assert use_compile_cache() == str(tmp_path / "cache") and (tmp_path / "cache").is_dir()
        assert jax.config.jax_compilation_cache_dir == str(tmp_path / "cache")
        # strong's calibrations are kept beside the compiled code, for every command (play, match, eval, gtp)
        assert calibration_store._STORE[0] == tmp_path / "cache" / calibration_store.CALIBRATION_FILE
    finally:
        jax.config.update("jax_compilation_cache_dir", before)
        calibration_store.use_calibration_store(None)
    assert use_compile_cache(off=True) is None


def test_an_unusable_cache_folder_is_one_warning_not_a_failure(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv(COMPILE_CACHE_ENV, str(blocker / "cache"))
    monkeypatch.delenv("JAX_COMPILATION_CACHE_DIR", raising=False)
    assert use_compile_cache() is None
    assert "no compilation cache" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "off"),
    [
        (["replay", "nowhere.json"], False),
        (["--no-compile-cache", "replay", "nowhere.json"], True),
        (["replay", "--no-compile-cache", "nowhere.json"], True),
    ],
)
def test_every_command_turns_the_cache_on_unless_told_not_to(argv, off, monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr(cli, "use_compile_cache", lambda flag=False: seen.append(flag))
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv) == 2  # no such record: the command ran after the cache was set up
    assert seen == [off]
    assert common.COMPILE_CACHE_ENV == "BLOKUS_JAX_COMPILE_CACHE"


@pytest.mark.parametrize(
    ("environ", "said"),
    [
        ({"XDG_CACHE_HOME": "relative/cache"}, "XDG_CACHE_HOME='relative/cache' is not an absolute path"),
        ({COMPILE_CACHE_ENV: "~nosuchuser_blokus/cache"}, "is not an absolute path"),
        ({COMPILE_CACHE_ENV: "cache-here"}, "is not an absolute path"),
    ],
)
def test_invalid_cache_locations_never_make_a_folder_in_the_working_directory(environ, said, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    warnings_said: list[str] = []
    path = compile_cache_dir(environ=environ, warn=warnings_said.append)
    assert path is None or os.path.isabs(path)
    if "XDG_CACHE_HOME" in environ:  # ignored as the spec says: the default folder instead
        assert path == os.path.join(os.path.expanduser("~"), ".cache", "blokus-jax", "jax")
    assert len(warnings_said) == 1 and said in warnings_said[0]
    assert list(tmp_path.iterdir()) == []


def test_many_cache_entries_that_cannot_be_written_are_one_line(capsys):
    cli._cache_warned.clear()
    for name in ("jit_a", "jit_b", "jit_c"):
        cli._show_warning(
            UserWarning(f"Error writing persistent compilation cache entry for '{name}': PermissionError: denied"),
            UserWarning,
            "x.py",
            1,
        )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot be written (PermissionError: denied)" in err[0] and COMPILE_CACHE_ENV in err[0]
    cli._cache_warned.clear()


def test_an_unawaited_library_coroutine_is_not_reported_but_other_warnings_are(monkeypatch, tmp_path, capsys):
    """orbax leaves a coroutine unawaited when it fails on a corrupt checkpoint; Python's note about it (made
    whenever the coroutine is collected) must not add a line to the command's one-line error."""
    import warnings

    def warn_twice(*args, **kwargs):
        warnings.warn("coroutine 'Store._get_array_metadatas' was never awaited", RuntimeWarning, stacklevel=1)
        warnings.warn("a warning users should see", UserWarning, stacklevel=1)

    monkeypatch.setattr(cli, "use_compile_cache", warn_twice)
    record = tmp_path / "missing.blksgf"
    assert cli.main(["replay", str(record)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert not any("never awaited" in line for line in err)
    assert any("a warning users should see" in line for line in err) and any("error" in line for line in err)
