//===- DnnlEngine.h - what Dnnl.cpp and DnnlConvolution.cpp share ---------===//
//
// Included by those two files only, so that oneDNN's header stays out of the
// kernels' translation units.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_DNNLENGINE_H
#define AMPC_RUNTIME_CPU_DNNLENGINE_H

#include "runtime/Status.h"

#include <oneapi/dnnl/dnnl.hpp>

namespace ampc::rt::cpu {

// The process's one oneDNN CPU engine.
const dnnl::engine &dnnlEngine();

// A oneDNN exception as a Status naming what failed.
Status dnnlError(const char *what, const dnnl::error &e);

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_DNNLENGINE_H
