//===- Registry.h - how kernel families join the CPU backend --------------===//
//
// Each family file (Elementwise.cpp, Movement.cpp, Contraction.cpp,
// Normalization.cpp, Reduction.cpp, Scan.cpp, ...) appends its entries;
// CpuKernels.cpp dispatches by name. What a call must be is runtime/ops's
// (Check.h).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_REGISTRY_H
#define AMPC_RUNTIME_CPU_REGISTRY_H

#include "runtime/cpu/CpuKernels.h"

#include <vector>

namespace ampc::rt::cpu {

// A call reaches run (and prepare) only after ops::checkKernel passed it.
struct KernelEntry {
  const char *name;
  Status (*run)(const OpCall &, CpuContext &);
  // Optional: what run needs built once (CpuKernels.h's prepareKernel).
  Status (*prepare)(const OpCall &,
                    std::shared_ptr<const PreparedKernel> &) = nullptr;
};

void addElementwiseKernels(std::vector<KernelEntry> &out); // + "fused"
void addMovementKernels(std::vector<KernelEntry> &out);
void addContractionKernels(std::vector<KernelEntry> &out);
void addNormalizationKernels(std::vector<KernelEntry> &out);
void addReductionKernels(std::vector<KernelEntry> &out);
void addScanKernels(std::vector<KernelEntry> &out); // arg_max, cumsum, top_k
// Gradients and parameter updates (training steps).
void addConvolutionGradKernels(std::vector<KernelEntry> &out);
void addPoolingGradKernels(std::vector<KernelEntry> &out);
void addMovementGradKernels(std::vector<KernelEntry> &out);
void addNormalizationGradKernels(std::vector<KernelEntry> &out);
void addLossGradKernels(std::vector<KernelEntry> &out);
void addOptimizerKernels(std::vector<KernelEntry> &out);
// check_finite and update_scale (dynamic loss scaling).
void addCollectiveKernels(std::vector<KernelEntry> &out);
void addLossScalingKernels(std::vector<KernelEntry> &out);

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_REGISTRY_H
