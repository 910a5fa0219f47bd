//===- EpilogueChecks.h - what a gemm call's epilogue must be ---*- C++ -*-===//
//
// The epilogues of runtime/GemmEpilogue.h as a "gemm" call names them: the
// `epilogue` attribute read, and what the epilogue adds to the call (its
// extra input and output, the attributes of the op it applies) checked.
// checkGemm (ContractionChecks.cpp) checks with them, and both backends
// read a call's epilogue with readEpilogue.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_EPILOGUECHECKS_H
#define AMPC_RUNTIME_OPS_EPILOGUECHECKS_H

#include "runtime/GemmEpilogue.h"
#include "runtime/Status.h"
#include "runtime/ops/OpCall.h"

#include <cstdint>

namespace ampc::rt::ops {

// The epilogue the call's `epilogue` attribute names; null when it has none.
Status readEpilogue(const Attrs &attrs, const EpilogueInfo *&out);

// Checks what `e` adds to a gemm call whose output is [m, n]: float
// operands, no c unless it adds a bias, its input (index 3) and output
// (index 1), and the attributes of the op it applies.
Status checkEpilogue(const OpCall &call, const EpilogueInfo &e, int64_t m,
                     int64_t n, bool transA);

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_EPILOGUECHECKS_H
