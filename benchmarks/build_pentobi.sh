#!/usr/bin/env bash
# Build Pentobi's GTP engine (pentobi-gtp) and its match runner (twogtp) from Pentobi's source, without its GUI: the
# outside opponent of docs/strength.md's ladder. Pentobi (https://github.com/enz/pentobi, GPL-3.0, by Markus
# Enzenberger) is built on your machine only; nothing of it enters this project, and no test needs it. Debian's
# `pentobi` package ships only the GUI, without the GTP engine.
#
#   bash benchmarks/build_pentobi.sh [--source DIR|TARBALL | --ref REF] [--dest DEST] [--jobs N]
#
#   --source DIR|TARBALL  build from a source folder or a .tar.gz/.tar.xz of Pentobi's source (nothing is downloaded)
#   --ref REF             otherwise clone https://github.com/enz/pentobi and check out REF: a release tag
#                         (default v30.3, the latest release when this was written) or a commit (the ladder's rows
#                         were measured with commit 7cdd99b, version 31.0-dev)
#   --dest DEST           the build folder (default /tmp/pentobi-build); its src/ and build/ are replaced
#   --jobs N              parallel compile jobs (default: the number of cores); the build takes about 3 minutes on
#                         2 cores
#
# Needs git (for --ref), cmake >= 3.22 and a C++20 compiler: `apt-get install -y git cmake g++`. Prints the paths of
# both binaries and of the opening books, and the engine command the ladder uses.
set -euo pipefail

repo=https://github.com/enz/pentobi
ref=v30.3
source=""
dest=/tmp/pentobi-build
jobs=$(nproc 2>/dev/null || echo 2)

die() { echo "build_pentobi.sh: $*" >&2; exit 2; }

main() {  # the whole script is read before it runs, so editing it during a build changes nothing
  while [ $# -gt 0 ]; do
    case "$1" in
      --source) [ $# -ge 2 ] || die "--source needs a folder or a tarball"; source=$2; shift 2 ;;
      --ref) [ $# -ge 2 ] || die "--ref needs a release tag or a commit, e.g. v30.3"; ref=$2; shift 2 ;;
      --dest) [ $# -ge 2 ] || die "--dest needs a folder"; dest=$2; shift 2 ;;
      --jobs) [ $# -ge 2 ] || die "--jobs needs a number"; jobs=$2; shift 2 ;;
      -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
      *) die "unknown argument '$1' (see --help)" ;;
    esac
  done
  case "$jobs" in ''|*[!0-9]*|0) die "--jobs must be a positive whole number, not '$jobs'" ;; esac
  for tool in cmake g++; do
    command -v "$tool" >/dev/null || die "needs $tool: apt-get install -y cmake g++"
  done

  if [ -n "$source" ] && [ ! -e "$source" ]; then die "--source '$source' is neither a folder nor a file"; fi
  mkdir -p "$dest"
  dest=$(cd "$dest" && pwd)
  [ "$dest" != / ] && [ "$dest" != "${HOME:-/}" ] ||
    die "--dest '$dest': give a folder of its own (its src/ and build/ are replaced)"
  src=$dest/src
  if [ -n "$source" ]; then
    source=$(cd "$(dirname "$source")" && pwd)/$(basename "$source")
    case "$source/" in
      "$dest/"*) die "--source '$source' lies inside --dest '$dest', whose src/ and build/ are replaced" ;;
    esac
  fi
  rm -rf "$src" "$dest/build"
  mkdir -p "$src"
  if [ -n "$source" ]; then
    if [ -d "$source" ]; then
      [ -f "$source/CMakeLists.txt" ] || die "'$source' has no CMakeLists.txt: give the top folder of Pentobi's source"
      cp -a "$source/." "$src/"
    elif [ -f "$source" ]; then
      tar -xf "$source" -C "$src" --strip-components=1 || die "cannot unpack '$source' (a .tar.gz or .tar.xz expected)"
    else
      die "--source '$source' is neither a folder nor a file"
    fi
    from=$source
  else
    command -v git >/dev/null || die "needs git to clone $repo (or give --source): apt-get install -y git"
    git clone --quiet "$repo" "$src" || die "cannot clone $repo (no network? give --source DIR|TARBALL instead)"
    git -C "$src" -c advice.detachedHead=false checkout --quiet "$ref" || die "$repo has no tag or commit '$ref'"
    from="$repo at $ref ($(git -C "$src" rev-parse --short HEAD))"
  fi
  [ -f "$src/CMakeLists.txt" ] && [ -d "$src/pentobi_gtp" ] || die "'$from' does not look like Pentobi's source"

  echo "building pentobi-gtp and twogtp from $from in $dest ($jobs jobs)"
  # GUI off (it needs Qt), GTP on (pentobi-gtp, twogtp and learn_tool; only the first two are built), tests off
  cmake -S "$src" -B "$dest/build" -DCMAKE_BUILD_TYPE=Release -DPENTOBI_BUILD_GUI=OFF -DPENTOBI_BUILD_GTP=ON \
    -DBUILD_TESTING=OFF >"$dest/cmake.log" 2>&1 || { tail -20 "$dest/cmake.log"; die "cmake failed ($dest/cmake.log)"; }
  cmake --build "$dest/build" --target pentobi-gtp twogtp -j"$jobs" >"$dest/build.log" 2>&1 ||
    { tail -20 "$dest/build.log"; die "the build failed ($dest/build.log)"; }

  gtp=$dest/build/pentobi_gtp/pentobi-gtp
  [ -x "$gtp" ] || die "the build ended without $gtp"
  echo "pentobi-gtp: $gtp"
  echo "twogtp:      $dest/build/twogtp/twogtp"
  echo "books:       $src/opening_books (book_duo.blksgf, book_classic_2.blksgf, book_classic.blksgf, ...)"
  echo "the ladder's engine command (Duo):"
  echo "  $gtp --game duo --level {level} --seed 1 --threads 1 --noresign --quiet \\"
  echo "    --book $src/opening_books/book_duo.blksgf"
}

main "$@"
