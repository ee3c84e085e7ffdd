#!/usr/bin/env bash
# Accelerator benchmark: env throughput, PPO and AlphaZero training, search and network speed on the first JAX device,
# written to one Markdown file (default benchmarks/accelerator_<platform>.md) and printed to stdout; progress on stderr.
#
#   bash benchmarks/accelerator.sh                 # full run (sized for one GPU, about 8 minutes)
#   bash benchmarks/accelerator.sh --quick --out /tmp/accelerator.md   # tiny smoke run (about a minute on a CPU)
#
# Every argument goes to benchmarks/accelerator.py (see its --help). Set PYTHON to choose the interpreter.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PYTHONPATH="${root}${PYTHONPATH:+:${PYTHONPATH}}"
exec "${PYTHON:-python}" "${root}/benchmarks/accelerator.py" "$@"
