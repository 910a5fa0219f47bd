#!/usr/bin/env bash
# Configures (Ninja, ccache), builds everything and runs every test suite:
# lit + FileCheck (test/), GoogleTest (test/unittests), the ONNX conformance
# suite and the fuzz regressions; then the sanitizer job (scripts/sanitize.sh:
# ASan+UBSan build in BUILD-san, unit and conformance tests, each fuzz target
# for AMPC_FUZZ_SECONDS, default 60). Usage:
#   scripts/test.sh [build-dir]        (default: build)
# AMPC_SANITIZE=0 skips the sanitizer job.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
# Paths inside the checkout are hashed relative to it, so a clean clone
# elsewhere (as CI makes) still hits ccache.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
JOBS=${AMPC_JOBS:-$(nproc)}

if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
fi
ninja -C "$BUILD" -j "$JOBS"
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS")

if [[ ${AMPC_SANITIZE:-1} != 0 ]]; then
  bash scripts/sanitize.sh "$BUILD-san"
fi
