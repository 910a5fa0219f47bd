//===- KernelNames.cpp - kernel names from kernels/KernelNames.def --------===//
//
// Expands the table into the families and the value lists of their variant
// axes, as strings: the same macros the .cu files instantiate from.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/KernelNames.h"

#include <algorithm>
#include <cstddef>
#include <iterator>

namespace ampc::rt::cuda {
namespace {

enum class Axis {
  None,
  Float,
  Row,
  Reduce,
  Index,
  CopyWidth,
  TileWidth,
  ConvElem,
  Compute,
  WarpK
};

#define AMPC_TOKEN(TOKEN, TYPE) #TOKEN,
#define AMPC_WARP_K_TOKEN(SUF, T, K) "k" #K,
const char *const kFloat[] = {AMPC_VARIANTS_FLOAT(AMPC_TOKEN)};
const char *const kRow[] = {AMPC_VARIANTS_ROW(AMPC_TOKEN)};
const char *const kReduce[] = {AMPC_VARIANTS_REDUCE(AMPC_TOKEN)};
const char *const kIndex[] = {AMPC_VARIANTS_INDEX(AMPC_TOKEN)};
const char *const kCopyWidth[] = {AMPC_VARIANTS_COPY_WIDTH(AMPC_TOKEN)};
const char *const kTileWidth[] = {AMPC_VARIANTS_TILE_WIDTH(AMPC_TOKEN)};
const char *const kConvElem[] = {AMPC_VARIANTS_CONV_ELEM(AMPC_TOKEN)};
const char *const kCompute[] = {AMPC_VARIANTS_COMPUTE(AMPC_TOKEN)};
const char *const kWarpK[] = {AMPC_VARIANTS_WARP_K(AMPC_WARP_K_TOKEN, , )};
#undef AMPC_TOKEN
#undef AMPC_WARP_K_TOKEN

struct AxisValues {
  const char *what; // for the error: "'3' is not one of the <what> ..."
  const char *const *begin, *const *end;
};

AxisValues valuesOf(Axis a) {
  auto of = [](const char *what, const auto &v) {
    return AxisValues{what, std::begin(v), std::end(v)};
  };
  switch (a) {
  case Axis::None:
    break;
  case Axis::Float:
    return of("float dtypes", kFloat);
  case Axis::Row:
    return of("row kernel dtypes", kRow);
  case Axis::Reduce:
    return of("reduction dtypes", kReduce);
  case Axis::Index:
    return of("index types", kIndex);
  case Axis::CopyWidth:
    return of("access widths in bytes", kCopyWidth);
  case Axis::TileWidth:
    return of("tile element widths in bytes", kTileWidth);
  case Axis::ConvElem:
    return of("element sizes", kConvElem);
  case Axis::Compute:
    return of("compute types", kCompute);
  case Axis::WarpK:
    return of("elements per lane", kWarpK);
  }
  return AxisValues{"", nullptr, nullptr};
}

struct Family {
  const char *module;
  const char *stem; // "ampc_" STEM
  Axis axes[2];     // None past the family's last axis
};

// Indexed by CudaKernel: both come from the same rows in the same order.
const Family kFamilies[] = {
#define AMPC_CUDA_KERNEL(MODULE, ENUM, STEM, AXIS0, AXIS1)                     \
  {#MODULE, "ampc_" #STEM, {Axis::AXIS0, Axis::AXIS1}},
#include "runtime/cuda/kernels/KernelNames.def"
};

size_t axisCount(const Family &f) {
  return f.axes[0] == Axis::None ? 0 : f.axes[1] == Axis::None ? 1 : 2;
}

std::string join(KernelVariant variant) {
  std::string s;
  for (std::string_view v : variant)
    s += "_" + std::string(v);
  return s;
}

} // namespace

Status kernelName(CudaKernel k, KernelVariant variant, std::string &out) {
  const Family &f = kFamilies[static_cast<size_t>(k)];
  const size_t n = axisCount(f);
  if (variant.size() != n)
    return Status::error(
        std::string("the CUDA kernel family ") + f.stem + " takes " +
        std::to_string(n) + " variant value(s), got " +
        std::to_string(variant.size()) + " (" + f.stem + join(variant) + ")");
  std::string name = f.stem;
  size_t i = 0;
  for (std::string_view v : variant) {
    AxisValues a = valuesOf(f.axes[i++]);
    if (std::find(a.begin, a.end, v) == a.end) {
      std::string list;
      for (const char *const *p = a.begin; p != a.end; ++p)
        list += (p == a.begin ? "" : ", ") + std::string(*p);
      return Status::error(
          "no CUDA kernel " + std::string(f.stem) + join(variant) + ": '" +
          std::string(v) + "' is not one of the " + a.what + " (" + list +
          ") that kernels/" + f.module + ".cu builds for " + f.stem);
    }
    name += "_";
    name += v;
  }
  out = std::move(name);
  return Status::ok();
}

const char *kernelModule(CudaKernel k) {
  return kFamilies[static_cast<size_t>(k)].module;
}

std::vector<KernelNameEntry> allKernelNames() {
  std::vector<KernelNameEntry> out;
  for (const Family &f : kFamilies) {
    // The cartesian product of the family's axes, first axis outermost.
    std::vector<std::string> names = {f.stem};
    for (size_t i = 0; i < axisCount(f); ++i) {
      AxisValues a = valuesOf(f.axes[i]);
      std::vector<std::string> next;
      for (const std::string &prefix : names)
        for (const char *const *p = a.begin; p != a.end; ++p)
          next.push_back(prefix + "_" + *p);
      names = std::move(next);
    }
    for (std::string &n : names)
      out.push_back({f.module, std::move(n)});
  }
  return out;
}

} // namespace ampc::rt::cuda
