#!/bin/bash
# bench/gpu/first-run.sh: the GPU run of ../shared/GPU-REVIEW.md section 1,
# in ONE call of the GPU machine, over what bench/gpu/prepare.sh built
# (carried: build-gpubench/carry). Pieces, in this order (drive.py does
# them; bench/README.md says what each one runs):
#   env       machine, driver, tools, and where libcuda, cuBLASLt and cuDNN
#             are found (AMPC_CUDA_LIBRARY_PATH first, as the runtime
#             searches)
#   smoke     ampc-gemm-peak --smoke: a backend that cannot start stops the
#             run here, saying why
#   suites    ampc-cuda-unittests, one process per gtest suite, with
#             AMPC_REQUIRE_GPU=1 (a skip fails); a suite with a device fault
#             is rerun with CUDA_LAUNCH_BLOCKING=1
#   gemm      ampc-gemm-peak: f16, bf16, f32, tf32 on 8192^3 and on the
#             8192 MLP step's own shapes and layouts
#   losses    every model in every AMP configuration at a tiny size, run by
#             amp-exec on --device cpu and --device cuda, per-step losses
#             compared
#   mlp8192   the 8192 MLP (amp-exec) at f32, O1 f16, O2 f16, O2 bf16
#   peers     its PyTorch peers: eager foreach and fused SGD, torch.compile
#   timeline  ncu --clock-control none: every kernel of one O2 f16 step
#   models    the other models once each (ampc and PyTorch eager)
# then report.py's table (appended to summary.txt).
#
# Everything goes to $OUT as it happens, at most 8 files, none in a
# sub-folder: summary.txt (one line per piece, then the table),
# results.jsonl (every result, one JSON object a line), system.txt,
# suites.log, losses.tsv, bench.log, peers.log, timeline.txt. A run killed
# at any moment still returns what it reached.
#
# Environment:
#   DEADLINE_S  seconds the run may take from its start (default 380); a
#               piece that no longer fits is recorded "skipped: deadline",
#               and running ones are cut at the deadline
#   PIECES      comma-separated pieces to run (default: all, in the order
#               above; --rerun and --sweep: env,smoke,suites,mlp8192,peers,
#               gemm,models, in this order)
#   OUT         the output folder (the device call sets it)
#   ROOT        prepare.sh's folder (default build-gpubench, --dry-run
#               build-gpubench-dry)
#   PYTHON      the Python with torch (default python3; --dry-run
#               /usr/bin/python3)
#   AMPC_CUDA_LIBRARY_PATH  where the runtime looks for libcuda, cuBLASLt
#               and cuDNN first; unset, it is set to the folders of
#               PyTorch's pip wheels (site-packages/nvidia/*/lib)
#
# --rerun FILE: the second run, after fixes. FILE is an earlier run's
# results.jsonl (copy it under build-gpubench/carry/ so that it travels):
# only the suites that failed there are rerun (and their failing tests under
# compute-sanitizer, when present), then the full headline sweep: every
# configuration of the 8192 MLP and its peers with plan.py's usual step
# counts, the GEMM peaks again (same machine, same call), the other models.
# --sweep: the same without an earlier run (every suite, and those that fail
# under compute-sanitizer): the whole benchmark, run.sh's old job.
#
# --dry-run: every piece end to end on this machine's CPU at the tiny sizes
# (prepare.sh --dry-run first): the CUDA pieces report "skipped: no GPU",
# the CPU side of the loss comparison runs, the bench and the PyTorch peers
# run on the CPU. Its times are CPU times of toy models and mean nothing.
# OUT defaults to /tmp/ampc-first-run-dry. Combines with --rerun.
#
# usage: bash bench/gpu/first-run.sh [--dry-run] [--rerun FILE | --sweep]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
start=$(date +%s)

usage="usage: bash bench/gpu/first-run.sh [--dry-run] [--rerun FILE | --sweep]"
dry=0 previous="" sweep=0
while [ $# -gt 0 ]; do
  case "$1" in
  --dry-run) dry=1 ;;
  --rerun)
    previous=${2:-}
    [ -n "$previous" ] || { echo "bench/gpu/first-run.sh: --rerun needs an earlier results.jsonl ($usage)" >&2; exit 2; }
    shift ;;
  --sweep) sweep=1 ;;
  *) echo "bench/gpu/first-run.sh: unknown argument '$1' ($usage)" >&2; exit 2 ;;
  esac
  shift
done

if [ $dry = 1 ]; then
  ROOT=${ROOT:-build-gpubench-dry}
  PY=${PYTHON:-/usr/bin/python3}
  OUT=${OUT:-/tmp/ampc-first-run-dry}
  mode=dry
else
  ROOT=${ROOT:-build-gpubench}
  PY=${PYTHON:-python3}
  : "${OUT:?bench/gpu/first-run.sh: OUT is not set (the device call sets it; give OUT=DIR otherwise)}"
  mode=gpu
fi
carry=$ROOT/carry
for f in "$carry/programs/sizes.json" "$carry/programs/tiny"; do
  [ -e "$f" ] || { echo "bench/gpu/first-run.sh: $f is missing: run bench/gpu/prepare.sh$([ $dry = 1 ] && echo ' --dry-run') first (and carry $carry)" >&2; exit 1; }
done
if [ -n "$previous" ] && [ ! -f "$previous" ]; then
  echo "bench/gpu/first-run.sh: --rerun $previous: no such file (copy the first run's results.jsonl under $carry/ so that it travels)" >&2
  exit 1
fi
mkdir -p "$OUT" || exit 1
work=$(mktemp -d /tmp/ampc-first-run.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT

# The binaries: packed for the GPU machine, links for the dry run.
if [ -f "$carry/bin.tar.xz" ]; then
  mkdir -p "$work/bin"
  # Python's tarfile reads xz without the xz tool, which the GPU machine
  # need not have.
  "$PY" -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
      "$carry/bin.tar.xz" "$work/bin" ||
    { echo "bench/gpu/first-run.sh: unpacking $carry/bin.tar.xz failed" >&2; exit 1; }
  bin=$work/bin
  # oneDNN and its OpenCL loader travel beside the binaries
  # (scripts/build-portable.sh).
  export LD_LIBRARY_PATH=$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
elif [ -d "$carry/bin" ]; then
  bin=$(cd "$carry/bin" && pwd)
else
  echo "bench/gpu/first-run.sh: neither $carry/bin.tar.xz nor $carry/bin exists: run bench/gpu/prepare.sh first" >&2
  exit 1
fi
programs=$carry/programs/bench
[ $dry = 1 ] && programs=$carry/programs/tiny

export PYTHONUNBUFFERED=1
if [ $dry = 0 ] && [ -z "${AMPC_CUDA_LIBRARY_PATH:-}" ]; then
  # PyTorch's pip wheels hold cuDNN 9 and cuBLASLt 13 under
  # site-packages/nvidia/<library>/lib, where the loader does not look and
  # the GPU machine's /usr/local/cuda may have no cuDNN: the runtime
  # searches these directories first (runtime/cuda/CudaApi.cpp).
  AMPC_CUDA_LIBRARY_PATH=$("$PY" -c "import glob, os, sys; print(':'.join(sorted({os.path.dirname(f) for p in sys.path if p for f in glob.glob(os.path.join(p, 'nvidia', '*', 'lib', 'lib*.so*'))})))")
  export AMPC_CUDA_LIBRARY_PATH
fi

args=(--mode "$mode" --bin "$bin" --programs "$programs"
      --tiny-programs "$carry/programs/tiny" --sizes "$carry/programs/sizes.json"
      --work "$work" --out "$OUT" --python "$PY"
      --deadline-s "$((${DEADLINE_S:-380} - ($(date +%s) - start)))")
[ -n "${PIECES:-}" ] && args+=(--pieces "$PIECES")
[ -n "$previous" ] && args+=(--rerun "$previous")
[ $sweep = 1 ] && args+=(--sweep)
"$PY" bench/gpu/drive.py "${args[@]}"
