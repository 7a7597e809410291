#!/usr/bin/env bash
# GPU smoke test: a few training steps of every enabled paper's GPU code on CUDA, plus the
# @pytest.mark.gpu tests. Takes about a minute; needs a CUDA device. Usage:
#   bash benchmarks/gpu_smoke.sh            (uses .venv/bin/python, or $PYTHON)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
"$PY" -c "import torch; assert torch.cuda.is_available(), 'no CUDA device visible'; \
print('device:', torch.cuda.get_device_name(0), '| torch', torch.__version__)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== QSurv: Time-LoRA hazard network, 5 epochs on CUDA =="
"$PY" -m repro.qsurv.prepare loglogistic "$work/ll.npz" --seeds 0
start=$(date +%s.%N)
"$PY" -m repro.qsurv.train "$work/ll.npz" "$work/qsurv" --epochs 5 --device cuda
"$PY" - "$work/qsurv.json" "$start" <<'PY'
import json, sys, time
log = json.load(open(sys.argv[1]))
p = log["provenance"]
assert p["device"].startswith("cuda"), p["device"]
print(f"qsurv: device {p['device']}, {log['history'][0]['epochs']} epochs, "
      f"train {log['history'][0]['train_seconds']:.2f} s, "
      f"GPU peak {p['gpu_peak_memory_mb']:.1f} MiB, wall {time.time() - float(sys.argv[2]):.1f} s")
PY

echo "== GPU tests =="
"$PY" -m pytest -m gpu -q -p no:cacheprovider
