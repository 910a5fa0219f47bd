#!/bin/bash
# bench/gpu/prepare.sh: everything the GPU benchmark needs, built HERE (no
# GPU needed), into build-gpubench/carry, the one folder the device call
# carries:
#   carry/bin.tar.gz   amp-exec, ampc-cuda-unittests, ampc-gemm-peak,
#                      stripped and compressed (each links OpenBLAS and the
#                      CUDA fatbins statically: about 80 MB as they are,
#                      22 MB packed); run.sh unpacks them on the GPU machine
#   carry/programs/    one compiled training step per (model, config) of
#                      bench/gpu/plan.py, weights omitted (amp-exec draws
#                      them with --init-params), and sizes.json
# and, not carried: build-gpubench/bin (the binaries, from
# scripts/build-portable.sh building in build-portable/: they run on the
# GPU machine, which has none of our Debian packages) and
# build-gpubench/models (the ONNX files). build-gpubench is ignored by
# .gitignore's /build*/, as the device tool's `carry` requires. What travels
# (carry/ and the working tree) must stay under 60 MiB (the tool's limit
# is 64).
#
# --dry-run: the same at the tiny sizes into build-gpubench-dry/, with this
# checkout's own build/bin (built through the build lock), for
# `bench/gpu/run.sh --dry-run` on this machine's CPU.
#
# usage: bench/gpu/prepare.sh [--dry-run]
set -euo pipefail
cd "$(dirname "$0")/../.."

dry=0
case "${1:-}" in
--dry-run) dry=1 ;;
"") ;;
*) echo "bench/gpu/prepare.sh: unknown argument '$1' (usage: prepare.sh [--dry-run])" >&2; exit 2 ;;
esac

PY=/usr/bin/python3
TOOLS=(amp-exec ampc-cuda-unittests ampc-gemm-peak)
if [ $dry = 1 ]; then
  root=build-gpubench-dry size=tiny
else
  root=build-gpubench size=full
fi
rm -rf "${root:?}/bin" "${root:?}/carry"
mkdir -p "$root/bin" "$root/carry/programs" "$root/models"
programs=$root/carry/programs

fail() { echo "bench/gpu/prepare.sh: $*" >&2; exit 1; }

# 1. The binaries.
if [ $dry = 1 ]; then
  flock /tmp/ampc-build.lock ninja -C build amp-run "${TOOLS[@]}" ||
    fail "building amp-run ${TOOLS[*]} in build/ failed (see above)"
  for t in "${TOOLS[@]}"; do cp "build/bin/$t" "$root/bin/"; done
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
fi

# 2. The models.
$PY bench/gpu/models.py "$root/models" --size $size \
  --sizes "$programs/sizes.json" 2>&1 | grep -v -i warning | grep -v _C._jit || true
for m in $($PY -c "import sys; sys.path.insert(0, 'bench/gpu'); import plan; print(' '.join(m['name'] for m in plan.MODELS))"); do
  [ -f "$root/models/$m.onnx" ] || fail "bench/gpu/models.py wrote no $root/models/$m.onnx"
done

# 3. The Programs: one compiled training step per (model, config).
$PY bench/gpu/plan.py programs | while IFS=$'\t' read -r name model flags; do
  start=$(date +%s)
  # shellcheck disable=SC2086 # flags is a list of words
  build/bin/amp-run "$root/models/$model.onnx" --mode train --emit=program \
    --program-weights=omit --memory-budget=none $flags \
    -o "$programs/$name.prog" ||
    fail "amp-run $root/models/$model.onnx $flags --emit=program failed (see above)"
  echo "bench/gpu/prepare.sh: $programs/$name.prog ($(stat -c %s "$programs/$name.prog") bytes, $(($(date +%s) - start)) s)"
done

# 4. The binaries, stripped and packed.
stage=$(mktemp -d)
for t in "${TOOLS[@]}"; do strip -o "$stage/$t" "$root/bin/$t"; done
tar -C "$stage" -czf "$root/carry/bin.tar.gz" "${TOOLS[@]}"
rm -rf "$stage"

# 5. The size of what travels: the carried folder and the working tree.
carried=$(du -sb "$root/carry" | cut -f1)
tree=$(git ls-files -z --cached --others --exclude-standard | du -cb --files0-from=- 2>/dev/null | tail -1 | cut -f1)
total=$((carried + tree))
limit=$((60 * 1024 * 1024))
echo "bench/gpu/prepare.sh: carried $root/carry: $carried bytes; working tree: $tree bytes; total $total of $limit"
[ $total -lt $limit ] ||
  fail "what the device call would carry is $total bytes, over 60 MiB: make the Programs or binaries smaller"
if [ $dry = 1 ]; then
  echo "bench/gpu/prepare.sh: ready for: bench/gpu/run.sh --dry-run"
else
  echo "bench/gpu/prepare.sh: ready for the device call: run(command='bash bench/gpu/run.sh', carry=['$root/carry'], timeout_s=600)"
fi
