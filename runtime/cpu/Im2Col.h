//===- Im2Col.h - a convolution's windows as a GEMM operand and back ------===//
//
// im2col lays one image's conv2d windows (ops/WindowGeometry.h's ConvPlan)
// out as a GEMM operand; col2im adds such a matrix back into an image. The
// convolution kernels and their gradients share them.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_IM2COL_H
#define AMPC_RUNTIME_CPU_IM2COL_H

#include "runtime/ops/WindowGeometry.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace ampc::rt::cpu::kh {

using ops::ConvPlan;

// A 1x1 stride-1 unpadded convolution's im2col matrix is the input itself.
inline bool isDirect(const ConvPlan &p) {
  return p.kh == 1 && p.kw == 1 && p.sh == 1 && p.sw == 1 && p.pt == 0 &&
         p.pl == 0 && p.oh == p.h && p.ow == p.w;
}

// Output columns [ow0, ow1) whose input column for kernel column j lies in
// [0, w); the input column of output column ox is colOff + ox * sw.
inline void convColumns(const ConvPlan &p, int64_t j, int64_t &colOff,
                        int64_t &ow0, int64_t &ow1) {
  colOff = j * p.dw - p.pl;
  ow0 = colOff >= 0 ? 0 : (-colOff + p.sw - 1) / p.sw;
  ow1 = p.w - 1 - colOff < 0 ? 0 : (p.w - 1 - colOff) / p.sw + 1;
  ow1 = std::min(ow1, p.ow);
  ow0 = std::min(ow0, ow1);
}

// Whether kernel tap (i, j) reads an input element for some output pixel
// (on small maps with wide pads some taps see only padding).
inline bool tapReadsInput(const ConvPlan &p, int64_t i, int64_t j) {
  int64_t colOff, ow0, ow1;
  convColumns(p, j, colOff, ow0, ow1);
  int64_t rowOff = i * p.dh - p.pt;
  int64_t oh0 = rowOff >= 0 ? 0 : (-rowOff + p.sh - 1) / p.sh;
  int64_t oh1 = p.h - 1 - rowOff < 0 ? 0 : (p.h - 1 - rowOff) / p.sh + 1;
  return ow0 < ow1 && oh0 < std::min(oh1, p.oh);
}

// One row of the im2col matrix: what kernel tap (i, j) reads of one input
// channel's plane at each output pixel (oh, ow), zeros for pads.
template <typename T>
void im2colRow(const ConvPlan &p, const T *plane, int64_t i, int64_t j,
               T *row) {
  int64_t colOff, ow0, ow1;
  convColumns(p, j, colOff, ow0, ow1);
  for (int64_t oy = 0; oy < p.oh; ++oy) {
    T *dst = row + oy * p.ow;
    int64_t iy = oy * p.sh - p.pt + i * p.dh;
    if (iy < 0 || iy >= p.h) {
      std::fill(dst, dst + p.ow, T(0));
      continue;
    }
    const T *src = plane + iy * p.w + colOff;
    std::fill(dst, dst + ow0, T(0));
    if (p.sw == 1)
      std::memcpy(dst + ow0, src + ow0, (ow1 - ow0) * sizeof(T));
    else
      for (int64_t ox = ow0; ox < ow1; ++ox)
        dst[ox] = src[ox * p.sw];
    std::fill(dst + ow1, dst + p.ow, T(0));
  }
}

// Rows (ci, kh, kw) x columns (oh, ow) of one image's group.
template <typename T> void im2col(const ConvPlan &p, const T *x, T *col) {
  int64_t cols = p.oh * p.ow;
  for (int64_t ci = 0; ci < p.cg; ++ci)
    for (int64_t i = 0; i < p.kh; ++i)
      for (int64_t j = 0; j < p.kw; ++j)
        im2colRow(p, x + ci * p.h * p.w, i, j,
                  col + ((ci * p.kh + i) * p.kw + j) * cols);
}

// The adjoint of im2colRow: adds each entry of the row into the input
// element it was read from (entries that were padding are dropped).
template <typename T>
void col2imRow(const ConvPlan &p, const T *row, int64_t i, int64_t j,
               T *plane) {
  int64_t colOff, ow0, ow1;
  convColumns(p, j, colOff, ow0, ow1);
  for (int64_t oy = 0; oy < p.oh; ++oy) {
    int64_t iy = oy * p.sh - p.pt + i * p.dh;
    if (iy < 0 || iy >= p.h)
      continue;
    const T *src = row + oy * p.ow;
    T *dst = plane + iy * p.w + colOff;
    for (int64_t ox = ow0; ox < ow1; ++ox)
      dst[ox * p.sw] += src[ox];
  }
}

// The adjoint of im2col.
template <typename T> void col2im(const ConvPlan &p, const T *col, T *x) {
  int64_t cols = p.oh * p.ow;
  for (int64_t ci = 0; ci < p.cg; ++ci)
    for (int64_t i = 0; i < p.kh; ++i)
      for (int64_t j = 0; j < p.kw; ++j)
        col2imRow(p, col + ((ci * p.kh + i) * p.kw + j) * cols, i, j,
                  x + ci * p.h * p.w);
}

} // namespace ampc::rt::cpu::kh

#endif // AMPC_RUNTIME_CPU_IM2COL_H
