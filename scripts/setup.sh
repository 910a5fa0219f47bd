#!/usr/bin/env bash
# Installs everything ampc needs to build and test on Debian 12, from Debian's
# archive. Idempotent: when every package is present it does no network work.
# CUDA is optional: it is detected (nvcc on PATH or /usr/local/cuda), never
# installed here.
set -euo pipefail

PACKAGES=(
  # build
  cmake ninja-build ccache lld-22 clang-22 g++ pkg-config
  # the sanitizer job and the fuzzers (clang-22's ASan, UBSan, libFuzzer)
  libclang-rt-22-dev
  # libraries that LLVM's exported CMake targets name
  libzstd-dev zlib1g-dev libxml2-dev libedit-dev libcurl4-openssl-dev libz3-dev libpfm4-dev
  # LLVM/MLIR 22 (brings lit and FileCheck via llvm-22-tools)
  libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools
  # ONNX import: protobuf and ONNX's headers, schema and checker
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  # tests and runtime
  googletest libgtest-dev libopenblas-dev libopenblas0-pthread libdnnl-dev
  # data parallelism: MPI (mpirun starts the ranks)
  libopenmpi-dev openmpi-bin
  dataset-fashion-mnist
  # python tooling and peers
  python3-onnx python3-numpy python3-torch python3-torchvision
  # the Python module `ampc` and its tests
  pybind11-dev python3-pytest
  # the venv below
  python3-venv
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO=sudo; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PACKAGES[@]} packages present"
fi

# Tests only: a current onnx from PyPI in a venv of its own, because Debian's
# onnx 1.12 stops at opset 17. The opset-18 node tests come from its package
# and the model zoo converts its exports to opset 18 with its version
# converter. test/CMakeLists.txt looks for it at the same path
# (AMPC_ONNX_VENV); without it those tests are skipped.
ONNX_VENV=${AMPC_ONNX_VENV:-$HOME/.cache/ampc/onnx-1.16.2}
ONNX_PINS=(onnx==1.16.2 numpy==2.4.6 protobuf==7.36.2)
if "$ONNX_VENV/bin/python3" -c 'import onnx; assert onnx.__version__ == "1.16.2"' 2>/dev/null; then
  echo "setup: onnx 1.16.2 for the opset-18 tests present in $ONNX_VENV"
elif /usr/bin/python3 -m venv --clear "$ONNX_VENV" &&
     "$ONNX_VENV/bin/pip" install -q --disable-pip-version-check "${ONNX_PINS[@]}"; then
  echo "setup: installed ${ONNX_PINS[*]} into $ONNX_VENV (tests only)"
else
  echo "setup: warning: could not install onnx 1.16.2 from PyPI into $ONNX_VENV;" \
       "the opset-18 tests will be skipped" >&2
fi

if command -v nvcc >/dev/null 2>&1 || [[ -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup: CUDA toolkit found ($(command -v nvcc || echo /usr/local/cuda/bin/nvcc))"
else
  echo "setup: no CUDA toolkit; the CUDA backend will not be built"
fi
