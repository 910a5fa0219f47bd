#!/bin/bash
# build-portable.sh BUILD_DIR OUT_DIR: builds amp-exec (and, when the build
# has them, ampc-cuda-unittests and ampc-gemm-peak) to carry to a Linux
# machine without our packages (the GPU machine: Ubuntu 24.04, glibc 2.39,
# no protobuf, OpenBLAS or GoogleTest): protobuf, zlib and OpenBLAS (with
# the Fortran runtime it needs) are linked in statically. Debian has no
# static oneDNN: libdnnl.so.2, with the libOpenCL.so.1 it needs (CARRIED
# below), is copied into OUT_DIR beside the binaries, which then run with
# LD_LIBRARY_PATH=OUT_DIR and need besides only glibc (<= 2.36, this
# machine's), libgomp, libstdc++ and libgcc_s (GCC's runtime, which a
# machine with nvcc has, newer: not carried, so as not to shadow it for
# other programs; shared, as oneDNN loads it: a static copy in the binary
# beside it crashed oneDNN's first convolution) and, at run time, the CUDA
# driver, cuBLASLt and cuDNN the CUDA backend loads itself. Prints each
# binary's ldd and the newest GLIBC_ and GLIBCXX_ symbol versions it needs,
# and packs them with the carried libraries into OUT_DIR.tar.xz (what to
# carry).
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 BUILD_DIR OUT_DIR" >&2
  exit 2
fi
build=$1
out=$2
src=$(cd "$(dirname "$0")/.." && pwd)
multiarch=$(gcc -print-multiarch)
gccdir=$(dirname "$(gcc -print-libgcc-file-name)")

# Debian's static OpenBLAS calls into libgfortran (its LAPACK half). zlib is
# found by LLVM's CMake files before AMPC_PORTABLE could ask for the static
# one, so its library is given here: ZLIB::ZLIB links
# ZLIB_LIBRARY_RELEASE when set, so that is given (overriding a libz.so a
# configure without it left in the cache) along with ZLIB_LIBRARY and
# ZLIB_USE_STATIC_LIBS.
openblas=/usr/lib/$multiarch/libopenblas.a
for f in "$openblas" "$gccdir/libgfortran.a" "$gccdir/libquadmath.a" \
         /usr/lib/$multiarch/libprotobuf.a /usr/lib/$multiarch/libz.a; do
  if [ ! -f "$f" ]; then
    echo "build-portable.sh: $f is missing: the portable build links it" \
         "statically (install its -dev package)" >&2
    exit 1
  fi
done

cmake -G Ninja -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DAMPC_PORTABLE=ON \
  "-DAMPC_OPENBLAS=$openblas;$gccdir/libgfortran.a;$gccdir/libquadmath.a" \
  -DZLIB_USE_STATIC_LIBS=ON \
  -DZLIB_LIBRARY:FILEPATH=/usr/lib/$multiarch/libz.a \
  -DZLIB_LIBRARY_RELEASE:FILEPATH=/usr/lib/$multiarch/libz.a \
  -DZLIB_LIBRARY_DEBUG:FILEPATH=/usr/lib/$multiarch/libz.a

targets=(amp-exec)
# (Listed first: grep -q closing the pipe early would fail it under pipefail.)
all=$(ninja -C "$build" -t targets all)
for t in ampc-cuda-unittests ampc-gemm-peak; do
  if grep -q "^$t:" <<<"$all"; then
    targets+=("$t")
  fi
done
ninja -C "$build" "${targets[@]}"

# Shared libraries without a static archive here, carried beside the
# binaries (resolved where this machine's loader finds them).
CARRIED=(libdnnl.so.2 libOpenCL.so.1)
mkdir -p "$out"
carried=()
for t in "${targets[@]}"; do
  for lib in "${CARRIED[@]}"; do
    path=$(ldd "$build/bin/$t" | awk -v l="$lib" '$1 == l { print $3 }')
    if [ -n "$path" ] && [ ! -f "$out/$lib" ]; then
      cp -L "$path" "$out/$lib"
      carried+=("$lib")
    fi
  done
done
status=0
# check_newest T PREFIX LIMIT NAME: prints the newest PREFIX_ symbol version
# binary T needs (NAME: the library's), and fails the build when it is newer
# than LIMIT.
check_newest() {
  local newest
  newest=$(objdump -T "$out/$1" | grep -o "$2_[0-9.]*" | sort -uV | tail -1)
  echo "newest $4 symbol: $newest"
  if [ "$(printf '%s\n' "$newest" "$3" | sort -V | tail -1)" != "$3" ]; then
    echo "build-portable.sh: $1 needs $newest, newer than $3" >&2
    status=1
  fi
}
for t in "${targets[@]}"; do
  cp "$build/bin/$t" "$out/$t"
  echo "== $out/$t"
  LD_LIBRARY_PATH=$out ldd "$out/$t" || true
  check_newest "$t" GLIBC GLIBC_2.36 glibc
  # libstdc++ is the GPU machine's (Ubuntu 24.04: GCC 14's, GLIBCXX_3.4.33).
  check_newest "$t" GLIBCXX GLIBCXX_3.4.33 libstdc++
  # Only glibc's own libraries, GCC's runtime and what is carried may
  # remain (a list of what is allowed, so a new dependency
  # cannot slip through).
  if LD_LIBRARY_PATH=$out ldd "$out/$t" |
      grep -Ev '^\s*(linux-vdso\.so|/lib64/ld-linux|(libc|libm|libdl|libpthread|librt|libgomp|libstdc\+\+|libgcc_s)\.so)' |
      grep -v "=> $out/" | grep -q .; then
    echo "build-portable.sh: $t still links a shared library the GPU" \
         "machine lacks (see ldd above)" >&2
    status=1
  fi
done
# The binaries embed every kernel's fatbin (tens of MiB each); compressed
# they fit the 64 MiB that can be carried to the GPU machine.
tar -C "$out" -cJf "$out.tar.xz" "${targets[@]}" "${carried[@]}"
du -b "$out"/* "$out.tar.xz"
exit $status
