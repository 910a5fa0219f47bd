#!/bin/bash
# bench/gpu/prepare.sh: everything bench/gpu/first-run.sh needs on the GPU
# machine, built HERE (no GPU needed), into ROOT/carry (default ROOT:
# build-gpubench), the one folder the device call carries:
#   carry/bin.tar.xz        amp-exec, ampc-cuda-unittests, ampc-gemm-peak,
#                           stripped and compressed (each links OpenBLAS and
#                           the CUDA fatbins statically: about 80 MB as they
#                           are, 22 MB packed); first-run.sh unpacks them
#   carry/programs/bench/   one compiled training step per (model, config)
#                           of plan.py's MODELS at the full size, weights
#                           omitted (amp-exec draws them with --init-params)
#   carry/programs/tiny/    every model in every configuration at the tiny
#                           size: the first run's CPU-vs-CUDA loss comparison
#   carry/programs/sizes.json, tiny-sizes.json   the two sizes' dimensions
# and, not carried: ROOT/bin (the binaries, from scripts/build-portable.sh
# building in build-portable/: they run on the GPU machine, which has none
# of our Debian packages) and ROOT/models{,-tiny} (the ONNX files).
# build-gpubench is ignored by .gitignore's /build*/, as the device tool's
# `carry` requires. The carried folder must stay under 40 MB, and with the
# working tree under 60 MiB (the tool's limit is 64).
#
# --dry-run: the tiny Programs only (the dry run's bench uses them too), no
# portable build and no packing: ROOT/carry/bin holds links to this
# checkout's binaries, for `bench/gpu/first-run.sh --dry-run` on this
# machine's CPU. Default ROOT build-gpubench-dry. The binaries come from
# --bin-dir DIR when given (nothing is built: the ctest gpu-first-run-dry
# passes the build tree's bin folder), else from build/bin, built through
# the build lock.
#
# usage: bench/gpu/prepare.sh [--dry-run] [--bin-dir DIR] [--root ROOT]
set -euo pipefail
cd "$(dirname "$0")/../.."

usage="usage: bench/gpu/prepare.sh [--dry-run] [--bin-dir DIR] [--root ROOT]"
dry=0 bindir="" root=""
while [ $# -gt 0 ]; do
  case "$1" in
  --dry-run) dry=1 ;;
  --bin-dir) bindir=${2:?$usage}; shift ;;
  --root) root=${2:?$usage}; shift ;;
  *) echo "bench/gpu/prepare.sh: unknown argument '$1' ($usage)" >&2; exit 2 ;;
  esac
  shift
done

PY=/usr/bin/python3
TOOLS=(amp-exec ampc-cuda-unittests ampc-gemm-peak)
if [ $dry = 1 ]; then
  root=${root:-build-gpubench-dry}
else
  root=${root:-build-gpubench}
fi
rm -rf "${root:?}/bin" "${root:?}/carry"
mkdir -p "$root/bin" "$root/carry/programs/tiny" "$root/models-tiny"
programs=$root/carry/programs

fail() { echo "bench/gpu/prepare.sh: $*" >&2; exit 1; }
start_all=$(date +%s)

# 1. The binaries. amp-run (the compiler, which writes the Programs) runs
# here only.
if [ -n "$bindir" ]; then
  bindir=$(cd "$bindir" && pwd)
  for t in amp-run "${TOOLS[@]}"; do
    [ -x "$bindir/$t" ] || fail "--bin-dir $bindir has no $t"
  done
  [ $dry = 1 ] ||
    fail "--bin-dir is for --dry-run (the GPU machine needs scripts/build-portable.sh's binaries)"
  amp_run=$bindir/amp-run
elif [ $dry = 1 ]; then
  flock /tmp/ampc-build.lock ninja -C build amp-run "${TOOLS[@]}" ||
    fail "building amp-run ${TOOLS[*]} in build/ failed (see above)"
  bindir=$PWD/build/bin amp_run=build/bin/amp-run
else
  [ -x scripts/build-portable.sh ] ||
    fail "scripts/build-portable.sh does not exist (or is not executable): it builds the portable amp-exec, ampc-cuda-unittests and ampc-gemm-peak that run on the GPU machine"
  # Its own build folder (static libraries, AMPC_PORTABLE), through the
  # build lock like every build here.
  flock /tmp/ampc-build.lock scripts/build-portable.sh build-portable "$root/bin" ||
    fail "scripts/build-portable.sh build-portable $root/bin failed (see above)"
  for t in "${TOOLS[@]}"; do
    [ -x "$root/bin/$t" ] || fail "scripts/build-portable.sh left no $root/bin/$t (does build-portable have the target $t?)"
  done
  flock /tmp/ampc-build.lock ninja -C build amp-run ||
    fail "building amp-run in build/ failed (see above)"
  amp_run=build/bin/amp-run
fi

# 2. The models: tiny always, full for the real run.
export_models() { # OUT_DIR SIZE SIZES_FILE
  $PY bench/gpu/models.py "$1" --size "$2" --sizes "$3" 2>&1 |
    grep -v -i warning | grep -v _C._jit || true
  for m in $($PY -c "import sys; sys.path.insert(0, 'bench/gpu'); import plan; print(' '.join(m['name'] for m in plan.MODELS))"); do
    [ -f "$1/$m.onnx" ] || fail "bench/gpu/models.py wrote no $1/$m.onnx"
  done
}
export_models "$root/models-tiny" tiny "$programs/tiny-sizes.json"
if [ $dry = 1 ]; then
  cp "$programs/tiny-sizes.json" "$programs/sizes.json"
else
  mkdir -p "$root/models" "$programs/bench"
  export_models "$root/models" full "$programs/sizes.json"
fi

# 3. The Programs: one compiled training step per (model, config).
compile() { # LIST MODEL_DIR OUT_DIR
  $PY bench/gpu/plan.py "$1" | while IFS=$'\t' read -r name model flags; do
    start=$(date +%s)
    # shellcheck disable=SC2086 # flags is a list of words
    "$amp_run" "$2/$model.onnx" --mode train --emit=program \
      --program-weights=omit --memory-budget=none $flags \
      -o "$3/$name.prog" ||
      fail "amp-run $2/$model.onnx $flags --emit=program failed (see above)"
    echo "bench/gpu/prepare.sh: $3/$name.prog ($(stat -c %s "$3/$name.prog") bytes, $(($(date +%s) - start)) s)"
  done
}
compile tiny-programs "$root/models-tiny" "$programs/tiny"
[ $dry = 1 ] || compile programs "$root/models" "$programs/bench"

# The portable amp-exec trains each tiny Program a step on this CPU, as
# first-run.sh's CPU reference does on the GPU machine: a failure here
# would otherwise be found there, on device time (a second C++ runtime
# beside oneDNN's once crashed every convolution).
if [ $dry = 0 ]; then
  for prog in "$programs"/tiny/*.prog; do
    LD_LIBRARY_PATH=$root/bin "$root/bin/amp-exec" "$prog" --steps 1 \
      --init-params uniform:1 --progress none > /dev/null ||
      fail "the portable amp-exec cannot train $prog on the CPU (see above)"
  done
  echo "bench/gpu/prepare.sh: the portable amp-exec trains every tiny Program on the CPU"
fi

# 4. The binaries: stripped and packed; for the dry run, links.
if [ $dry = 1 ]; then
  mkdir -p "$root/carry/bin"
  for t in "${TOOLS[@]}"; do ln -s "$bindir/$t" "$root/carry/bin/$t"; done
else
  stage=$(mktemp -d)
  for t in "${TOOLS[@]}"; do strip -o "$stage/$t" "$root/bin/$t"; done
  # The shared libraries build-portable.sh carries (oneDNN and its OpenCL
  # loader); first-run.sh puts them on LD_LIBRARY_PATH.
  libs=()
  for f in "$root"/bin/*.so.*; do
    [ -f "$f" ] && cp "$f" "$stage/" && libs+=("$(basename "$f")")
  done
  # xz: oneDNN alone is 11 MB gzipped, 7 MB in xz.
  tar -C "$stage" -cJf "$root/carry/bin.tar.xz" "${TOOLS[@]}" "${libs[@]}"
  rm -rf "$stage"
fi

# 5. The size of what travels: the carried folder and the working tree.
carried=$(du -sb "$root/carry" | cut -f1)
tree=$( (git ls-files -z --cached --others --exclude-standard 2>/dev/null || true) |
  du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1) || tree=0
total=$((carried + tree))
limit=$((60 * 1024 * 1024))
echo "bench/gpu/prepare.sh: carried $root/carry: $carried bytes (at most 40000000); working tree: $tree bytes; total $total of $limit; $(($(date +%s) - start_all)) s"
[ "$carried" -le 40000000 ] ||
  fail "$root/carry is $carried bytes, over 40 MB: make the Programs or binaries smaller"
[ $total -lt $limit ] ||
  fail "what the device call would carry is $total bytes, over 60 MiB: make the Programs or binaries smaller"
if [ $dry = 1 ]; then
  echo "bench/gpu/prepare.sh: ready for: ROOT=$root bash bench/gpu/first-run.sh --dry-run"
else
  echo "bench/gpu/prepare.sh: ready for the device call: run(command='bash bench/gpu/first-run.sh', carry=['$root/carry'], timeout_s=420)"
fi
