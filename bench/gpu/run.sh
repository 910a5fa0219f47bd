#!/bin/bash
# bench/gpu/run.sh: the GPU benchmark, in ONE call of the GPU machine, over
# what bench/gpu/prepare.sh built (carried: build-gpubench/carry, the packed
# binaries and the Programs):
#   nvidia-smi; the CUDA unit tests; the cuBLASLt GEMM peak (f16, bf16,
#   tf32, f32); per model, every ampc configuration (amp-exec) and the PyTorch
#   eager peer; then the torch.compile peers; then report.py.
# Results: $OUT/results.json, $OUT/performance.md (the table, also printed
# last), $OUT/logs.txt (every piece's output). The whole run is budgeted to
# end inside 9 minutes (BUDGET_S); each piece is time-boxed (drive.py).
#
# --dry-run: the same on this machine's CPU, at the tiny sizes, over
# build-gpubench-dry (prepare.sh --dry-run), into $OUT or
# /tmp/ampc-gpubench-dry. It checks that every piece runs end to end; its
# times are CPU times of toy models and mean nothing.
#
# usage: bash bench/gpu/run.sh [--dry-run]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

dry=0
case "${1:-}" in
--dry-run) dry=1 ;;
"") ;;
*) echo "bench/gpu/run.sh: unknown argument '$1' (usage: run.sh [--dry-run])" >&2; exit 2 ;;
esac

start=$(date +%s)
BUDGET_S=${BUDGET_S:-530}
if [ $dry = 1 ]; then
  root=build-gpubench-dry device=cpu size=tiny
  PY=${PYTHON:-/usr/bin/python3}
  OUT=${OUT:-/tmp/ampc-gpubench-dry}
  title="GPU bench DRY RUN (CPU, tiny sizes: not a measurement)"
else
  root=build-gpubench device=cuda size=full
  PY=${PYTHON:-python3}
  : "${OUT:?bench/gpu/run.sh: OUT is not set (the device call sets it; give OUT=DIR otherwise)}"
  title="GPU training step: ampc vs PyTorch"
fi
carry=$root/carry
for f in "$carry/bin.tar.gz" "$carry/programs/sizes.json"; do
  [ -f "$f" ] || { echo "bench/gpu/run.sh: $f is missing: run bench/gpu/prepare.sh$([ $dry = 1 ] && echo ' --dry-run') first (and carry $carry)" >&2; exit 1; }
done
work=$(mktemp -d /tmp/ampc-gpubench.XXXXXX)
mkdir -p "$work/bin"
tar -C "$work/bin" -xzf "$carry/bin.tar.gz" ||
  { echo "bench/gpu/run.sh: unpacking $carry/bin.tar.gz failed" >&2; exit 1; }
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
if [ $dry = 0 ] && [ -z "${AMPC_CUDA_LIBRARY_PATH:-}" ]; then
  # PyTorch's pip wheels hold cuDNN 9 and cuBLASLt 13 under
  # site-packages/nvidia/<library>/lib, where the loader does not look and
  # the GPU machine's /usr/local/cuda may have no cuDNN: the runtime
  # searches these directories first (runtime/cuda/CudaApi.cpp).
  AMPC_CUDA_LIBRARY_PATH=$("$PY" -c "import glob, os, sys; print(':'.join(sorted({os.path.dirname(f) for p in sys.path if p for f in glob.glob(os.path.join(p, 'nvidia', '*', 'lib', 'lib*.so*'))})))")
  export AMPC_CUDA_LIBRARY_PATH
fi

echo "== bench/gpu/run.sh $([ $dry = 1 ] && echo '--dry-run ')$(date -u +%FT%TZ), budget ${BUDGET_S} s"
{
  echo "== nvidia-smi"
  if command -v nvidia-smi >/dev/null; then
    timeout 20 nvidia-smi
    timeout 20 nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm,power.limit --format=csv
  else
    echo "nvidia-smi: not found on this machine"
  fi
  echo "== software"
  uname -a
  echo "AMPC_CUDA_LIBRARY_PATH=${AMPC_CUDA_LIBRARY_PATH:-}"
  "$PY" -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'device', torch.cuda.get_device_name() if torch.cuda.is_available() else 'none')"
} 2>&1 | tee "$work/system.txt"

"$PY" bench/gpu/drive.py --bin "$work/bin" --programs "$carry/programs" \
  --work "$work" --device $device --size $size --python "$PY" \
  --budget-s $((BUDGET_S - ($(date +%s) - start) - 15))
drive_rc=$?

if command -v nvidia-smi >/dev/null; then
  machine=$(timeout 20 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)
else
  machine="no GPU: CPU, $(nproc) cores"
fi
note="Machine: $machine. Run $(date -u +%F) by bash bench/gpu/run.sh$([ $dry = 1 ] && echo ' --dry-run'); $(($(date +%s) - start)) s."
"$PY" bench/gpu/report.py --work "$work" --out "$OUT" --title "$title" \
  --note "$note" --sizes "$carry/programs/sizes.json"
report_rc=$?

{
  cat "$work/system.txt"
  for f in "$work"/logs/*.log; do  # numbered in the order they ran
    echo "== $(basename "$f" .log)"
    cat "$f"
  done
} >"$OUT/logs.txt"
rm -rf "$work"
echo "== bench/gpu/run.sh: $(($(date +%s) - start)) s; results in $OUT (results.json, performance.md, logs.txt)"
[ $drive_rc = 0 ] && [ $report_rc = 0 ]
