//===- GemmPostOp.h - a gemm kernel's epilogue on the GPU -------*- C++ -*-===//
//
// The epilogues of runtime/GemmEpilogue.h for cuda/Gemm.cpp: the cuBLASLt
// epilogue that computes one, where there is one for the call's layout,
// type and activation, and otherwise ampc's own kernel run after a plain
// GEMM.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_GEMMPOSTOP_H
#define AMPC_RUNTIME_CUDA_GEMMPOSTOP_H

#include "runtime/GemmEpilogue.h"
#include "runtime/cuda/CudaKernels.h"

#include <memory>

namespace ampc::rt::cuda {

// A cuBLASLt epilogue with the buffers it reads or writes.
struct LtEpilogue {
  cublasLtEpilogue_t kind = CUBLASLT_EPILOGUE_DEFAULT;
  // BIAS forms: the bias read; BGRAD forms: the bias gradient written.
  CUdeviceptr bias = 0;
  // GELU_AUX forms: the GELU input written; DGELU: read. Column-major with
  // leading dimension auxLd (elements).
  CUdeviceptr aux = 0;
  int64_t auxLd = 0;
};

// cuBLASLt's form of `e` for this gemm call (D = op(b)^T op(a)^T, column
// major: see Gemm.cpp), or false where cuBLASLt has none and the kernel
// falls back to preparePostOp.
bool ltEpilogueFor(const ops::OpCall &call, const EpilogueInfo &e,
                   LtEpilogue &out);

// ampc's own kernel for `e`, launched after a plain GEMM has written its
// result: into the output, or for gelu_aux into output 1 (the pre-activation
// the activation then reads). It computes what the unfused kernels compute:
// the activation reads the rounded GEMM result.
Status preparePostOp(const ops::OpCall &call, const EpilogueInfo &e,
                     PrepareContext &ctx, std::unique_ptr<PreparedKernel> &out);

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_GEMMPOSTOP_H
