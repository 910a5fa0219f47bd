//===- KernelNames.h - our CUDA kernels' names, from one table ------------===//
//
// Every kernel the host looks up is a family of kernels/KernelNames.def
// plus one value per variant axis of the family; its extern "C" name is
// formed here and nowhere else, and a variant the table does not list is an
// error naming it, not a lookup of a name no fatbin holds. The ctest
// cuda-kernel-symbols checks the fatbins against allKernelNames().
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELNAMES_H
#define AMPC_RUNTIME_CUDA_KERNELNAMES_H

#include "runtime/Status.h"
#include "runtime/cuda/CudaDevice.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ampc::rt::cuda {

enum class CudaKernel : uint16_t {
#define AMPC_CUDA_KERNEL(MODULE, ENUM, STEM, AXIS0, AXIS1) ENUM,
#include "runtime/cuda/kernels/KernelNames.def"
};

// One value per axis of the family, spelled as the name spells it: a dtype
// (rt::name), a width in bytes ("4"), "i32"/"i64", "c32"/"c64", "b4", "k8".
using KernelVariant = std::initializer_list<std::string_view>;

// "ampc_<stem>[_<value>]..." for `variant` of `k`, or an error naming the
// value the table has no kernel for.
Status kernelName(CudaKernel k, KernelVariant variant, std::string &out);

// The kernel from its module, through the device's cache; `name`, when
// given, receives its name (a launch's label). Inline, so that
// ampc-cuda-kernel-names links without the device and the fatbins.
inline Status kernelFunction(CudaDevice &device, CudaKernel k,
                             KernelVariant variant, CUfunction &out,
                             std::string *name = nullptr) {
  std::string n;
  AMPC_RETURN_IF_ERROR(kernelName(k, variant, n));
  AMPC_RETURN_IF_ERROR(device.function(n.c_str(), out));
  if (name)
    *name = std::move(n);
  return Status::ok();
}

// The .cu stem (and fatbin) that builds `k`.
const char *kernelModule(CudaKernel k);

// Every name the table forms, family by family in table order.
struct KernelNameEntry {
  const char *module;
  std::string name;
};
std::vector<KernelNameEntry> allKernelNames();

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_KERNELNAMES_H
