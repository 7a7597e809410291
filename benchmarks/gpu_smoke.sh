#!/usr/bin/env bash
# GPU smoke check: each of the eight papers' CUDA paths once (benchmarks/gpu_smoke.py says
# what each step runs), one line per paper (ok / failed: error), outputs under OUT (default
# results/gpu_smoke), under 8 minutes on one GPU. Usage:
#   bash benchmarks/gpu_smoke.sh [--dry-run] [OUT]     (uses .venv/bin/python, or $PYTHON)
# --dry-run lists the eight steps and checks their targets and entry points, without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}"
exec "${PYTHON:-.venv/bin/python}" benchmarks/gpu_smoke.py "$@"
