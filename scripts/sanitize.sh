#!/usr/bin/env bash
# The sanitizer job: builds ampc with clang-22, AddressSanitizer,
# UndefinedBehaviorSanitizer and libFuzzer's coverage, runs the unit tests,
# the ONNX conformance suite and the fuzz regressions under them, then each
# fuzz target for a bounded time (scripts/fuzz.sh). Usage:
#   scripts/sanitize.sh [build-dir]     (default: build-san)
# AMPC_FUZZ_SECONDS (default 60) is each fuzz target's time; 0 skips them.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-san}
# Paths inside the checkout are hashed relative to it, so a clean clone
# elsewhere (as CI makes) still hits ccache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
JOBS=${AMPC_JOBS:-$(nproc)}
start=$SECONDS

if [[ ! -f "$BUILD/build.ninja" ]]; then
  # -O1 keeps sanitizer reports readable and the build and runs fast
  # enough for CI; no -g: ccache would then hash the build directory.
  cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DAMPC_ENABLE_ASAN=ON -DAMPC_ENABLE_FUZZERS=ON
fi
# Only what the job runs: the lit suite (amp-opt, amp-translate) stays with
# the ordinary build, where it takes minutes rather than tens of them.
# ampc-cuda-unittests, where the CUDA backend is built: without a GPU its
# host-side tests still run (NcclHost's threads and timeouts over a fake
# CUDA, the library loading), and the rest skip.
# (The list is read first: grep -q closing the pipe early would fail it
# under pipefail.)
cuda_tests=()
targets=$(ninja -C "$BUILD" -t targets all)
if grep -q '^ampc-cuda-unittests:' <<<"$targets"; then
  cuda_tests=(ampc-cuda-unittests)
fi
ninja -C "$BUILD" -j "$JOBS" amp-run ampc-unittests ampc-runtime-unittests \
  ampc-tooling-unittests "${cuda_tests[@]}" \
  onnx-import-fuzzer program-load-fuzzer

# Debian's MLIR libraries are not instrumented; LLVM's headers turn on
# allocator poisoning in our code that their code then trips
# (README.md, Sanitizers). Real heap errors are still caught.
export ASAN_OPTIONS=allow_user_poisoning=0:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS" \
  -R '^(onnx-node-conformance|fuzz-regressions-.*)$|^[A-Za-z0-9_/]+\.[A-Za-z0-9_/]+')
echo "sanitize: unit, conformance and fuzz-regression tests passed under" \
  "ASan+UBSan in $((SECONDS - start)) s"

if [[ ${AMPC_FUZZ_SECONDS:-60} != 0 ]]; then
  bash scripts/fuzz.sh "$BUILD" "${AMPC_FUZZ_SECONDS:-60}"
fi
