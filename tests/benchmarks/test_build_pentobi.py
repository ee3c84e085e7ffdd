"""`benchmarks/build_pentobi.sh`, without Pentobi: its argument checks, and a whole build from a stand-in source
tarball shaped like Pentobi's (two tiny programs behind the same CMake options and targets)."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "build_pentobi.sh"

TOP = """cmake_minimum_required(VERSION 3.16)
project(pentobi CXX)
option(PENTOBI_BUILD_GUI "Build GUI" ON)
option(PENTOBI_BUILD_GTP "Build GTP interface" OFF)
if(PENTOBI_BUILD_GUI)
  message(FATAL_ERROR "the GUI needs Qt")
endif()
if(PENTOBI_BUILD_GTP)
  add_subdirectory(pentobi_gtp)
  add_subdirectory(twogtp)
endif()
"""


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_bad_arguments_are_refused_with_a_message(tmp_path) -> None:
    for args, message in [
        (["--jobs", "x"], "--jobs must be a positive whole number"),
        (["--source", str(tmp_path / "none")], "neither a folder nor a file"),
        (["--source", str(tmp_path)], "has no CMakeLists.txt"),
        (["--frobnicate"], "unknown argument"),
        (["--dest"], "--dest needs a folder"),
    ]:
        done = _run(*args, "--dest", str(tmp_path / "out")) if args[0] != "--dest" else _run(*args)
        assert done.returncode == 2 and message in done.stderr, (args, done.stderr)
    assert "--source DIR|TARBALL" in _run("--help").stdout


@pytest.mark.skipif(not (shutil.which("cmake") and shutil.which("g++")), reason="needs cmake and g++")
def test_a_source_tarball_builds_both_programs_without_the_gui(tmp_path) -> None:
    source = tmp_path / "pentobi-0.0"
    for name in ("pentobi_gtp", "twogtp"):
        (source / name).mkdir(parents=True)
        (source / name / "main.cpp").write_text(f'#include <cstdio>\nint main() {{ std::puts("{name}"); }}\n')
        target = "pentobi-gtp" if name == "pentobi_gtp" else name
        (source / name / "CMakeLists.txt").write_text(f"add_executable({target} main.cpp)\n")
    (source / "CMakeLists.txt").write_text(TOP)
    (source / "opening_books").mkdir()
    tarball = tmp_path / "pentobi-src.tar.gz"
    with tarfile.open(tarball, "w:gz") as tar:
        tar.add(source, arcname=source.name)
    dest = tmp_path / "build here"  # a space in the path too
    done = _run("--source", str(tarball), "--dest", str(dest), "--jobs", "1")
    assert done.returncode == 0, done.stdout + done.stderr
    gtp = dest / "build" / "pentobi_gtp" / "pentobi-gtp"
    assert f"pentobi-gtp: {gtp}" in done.stdout and f"{dest}/src/opening_books" in done.stdout
    assert subprocess.run([str(gtp)], capture_output=True, text=True).stdout == "pentobi_gtp\n"
    assert (dest / "build" / "twogtp" / "twogtp").exists()
