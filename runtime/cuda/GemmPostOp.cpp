//===- GemmPostOp.cpp - a gemm kernel's epilogue on the GPU ---------------===//
//
// cuBLASLt sees our row-major D[m, n] as a column-major n x m matrix (rows:
// n), with our b as its A and our a as its B (Gemm.cpp). Where each of
// runtime/GemmEpilogue.h's epilogues maps (cublasLt.h, CUDA 13):
//
//   relu      RELU_BIAS / RELU                bias: D's rows = our n
//   gelu      GELU_BIAS / GELU                only approximate = "tanh":
//   gelu_aux  GELU_AUX_BIAS / GELU_AUX        cuBLASLt's GELU is the tanh
//                                             form; aux = output 1, ld n,
//                                             which must divide by 8
//   dgelu     DGELU                           tanh only; aux = input 3, ld n
//   drelu     (none)                          DRELU reads the bit-mask that
//                                             RELU_AUX writes, not relu's
//                                             output, which is what ampc
//                                             keeps (it is the next layer's
//                                             input anyway)
//   bgrad     BGRADB                          the sums over k of cuBLASLt's
//                                             B (our a under trans_a): one
//                                             per column of D = our m
//
// f16, bf16 and f32 only (f64 has no epilogue kernels). Whether an
// algorithm exists for the layout and alignment is cuBLASLt's answer at
// prepare time; where it has none, Gemm.cpp runs a plain GEMM and then the
// kernel preparePostOp builds from this backend's own elementwise and
// reduction kernels.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/GemmPostOp.h"

#include "runtime/cuda/Launch.h"
#include "runtime/ops/Check.h"

namespace ampc::rt::cuda {

bool ltEpilogueFor(const ops::OpCall &call, const EpilogueInfo &e,
                   LtEpilogue &out) {
  const TensorView &a = call.inputs[0], &d = call.outputs[0];
  if (a.dtype == DType::F64 || d.numElements() == 0)
    return false;
  const int64_t n = d.shape[1];
  const bool tanh = call.attrs->getString("approximate") == "tanh";
  // c can only be the BIAS vector: one value per row of D, added with
  // beta 1 (the compiler fuses nothing else; see GemmEpilogues.cpp).
  const TensorView *c = ops::hasInput(call, 2) ? &call.inputs[2] : nullptr;
  if (c && (call.attrs->getFloat("beta") != 1.0 || c->numElements() != n ||
            (c->rank() == 2 && c->shape[0] != 1)))
    return false;
  out = LtEpilogue{};
  if (c)
    out.bias = devicePtr(*c);
  const bool auxFits = n % 8 == 0;
  switch (e.kind) {
  case Epilogue::Relu:
    out.kind = c ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    return true;
  case Epilogue::Gelu:
    out.kind = c ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    return tanh;
  case Epilogue::GeluAux:
    out.kind = c ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_AUX;
    out.aux = devicePtr(call.outputs[1]);
    out.auxLd = n;
    return tanh && auxFits;
  case Epilogue::DGelu:
    out.kind = CUBLASLT_EPILOGUE_DGELU;
    out.aux = devicePtr(call.inputs[3]);
    out.auxLd = n;
    return tanh && auxFits;
  case Epilogue::DRelu:
    return false;
  case Epilogue::BGrad:
    out.kind = CUBLASLT_EPILOGUE_BGRADB;
    out.bias = devicePtr(call.outputs[1]);
    return true;
  }
  return false;
}

namespace {

// Prepares `call` with this backend's kernel of that name, after the check
// every call passes (ops::checkKernel).
Status prepareCall(const ops::OpCall &call, PrepareContext &ctx,
                   std::unique_ptr<PreparedKernel> &out) {
  AMPC_RETURN_IF_ERROR(ops::checkKernel(call));
  const KernelEntry *k = findKernel(call.op);
  if (!k)
    return Status::error("no CUDA kernel '" + call.op + "'");
  return k->prepare({&call}, ctx, out);
}

} // namespace

Status preparePostOp(const ops::OpCall &call, const EpilogueInfo &e,
                     PrepareContext &ctx,
                     std::unique_ptr<PreparedKernel> &out) {
  auto fail = [&](const Status &s) {
    return s.withContext("gemm epilogue '" + std::string(e.name) +
                         "' (ampc's own kernel after the GEMM)");
  };
  // The op's own attributes: the gemm's are none of its business.
  Attrs attrs;
  if (const AttrValue *v = call.attrs->find("approximate"))
    attrs.setString("approximate", v->s);
  ops::OpCall post;
  post.op = e.op;
  post.attrs = &attrs;
  const TensorView &d = call.outputs[0];
  switch (e.role) {
  case EpilogueRole::Activation: // in place over the GEMM's result
    post.inputs = {d};
    break;
  case EpilogueRole::ActivationAux: // the GEMM wrote the pre-activation
    post.inputs = {call.outputs[1]};
    break;
  case EpilogueRole::Gradient:
    post.inputs = {d, call.inputs[3]};
    break;
  case EpilogueRole::BiasGradient: {
    attrs.setInts("axes", {0});
    attrs.setInt("keepdims", call.outputs[1].rank() == 2 ? 1 : 0);
    post.inputs = {call.inputs[0]};
    post.present = {true};
    post.outputs = {call.outputs[1]};
    return fail(prepareCall(post, ctx, out));
  }
  }
  post.present.assign(post.inputs.size(), true);
  post.outputs = {d};
  return fail(prepareCall(post, ctx, out));
}

} // namespace ampc::rt::cuda
