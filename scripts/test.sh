#!/usr/bin/env bash
# Configures (Ninja, ccache), builds everything and runs every test suite:
# lit + FileCheck (test/), GoogleTest (test/unittests). Usage:
#   scripts/test.sh [build-dir]        (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
JOBS=${AMPC_JOBS:-$(nproc)}

if [[ ! -f "$BUILD/build.ninja" ]]; then
  cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release
fi
ninja -C "$BUILD" -j "$JOBS"
cd "$BUILD"
ctest --output-on-failure -j "$JOBS"
