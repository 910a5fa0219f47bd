//===- GemmEpilogue.h - what a "gemm" kernel may compute after the GEMM ---===//
//
// The one table of GEMM epilogues. The compiler fuses by it
// (compiler/Conversion/GraphToRt/GemmEpilogues.cpp), the Program writer
// checks kernel bodies against it, and both backends execute it
// (cpu/Contraction.cpp, cuda/Gemm.cpp). It lives in the runtime, which links
// no MLIR, so ops are named by their graph mnemonic.
//
// A "gemm" kernel with an `epilogue` attribute takes its inputs in the order
// a, b, c (-1 when absent), then the epilogue's input; it writes the result,
// then the epilogue's output. Every post-op runs on the f32 (f64 for f64)
// result before it is rounded to the stored dtype.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_GEMMEPILOGUE_H
#define AMPC_RUNTIME_GEMMEPILOGUE_H

#include <cstdint>
#include <string>
#include <string_view>

namespace ampc::rt {

enum class Epilogue : uint8_t { Relu, Gelu, GeluAux, DRelu, DGelu, BGrad };

// How the epilogue's op joins the GEMM. G = alpha op(a) op(b) + beta c.
enum class EpilogueRole : uint8_t {
  // result = op(G); c may be a bias vector.
  Activation,
  // result = op(G), and G itself as a second output (the pre-activation the
  // gradient reads); c may be a bias vector.
  ActivationAux,
  // result = op(G, x) with x the extra input: an activation's gradient on
  // the dX GEMM, x the forward value it reads. No c.
  Gradient,
  // result = G, and the column sums of a (reduce_sum over axis 0, the
  // contracted dim under trans_a) as a second output: a bias gradient
  // taken while the dW GEMM reads dY. No c.
  BiasGradient,
};

struct EpilogueInfo {
  Epilogue kind;
  const char *name; // the kernel's `epilogue` attribute
  const char *op;   // the graph op computed after (or beside) the GEMM
  EpilogueRole role;

  bool takesBias() const {
    return role == EpilogueRole::Activation ||
           role == EpilogueRole::ActivationAux;
  }
  bool hasExtraInput() const { return role == EpilogueRole::Gradient; }
  bool hasExtraOutput() const {
    return role == EpilogueRole::ActivationAux ||
           role == EpilogueRole::BiasGradient;
  }
};

// relu has no ActivationAux row: its gradient reads relu's output
// (compiler/Autodiff/ElementwiseGradients.cpp), so the pre-activation dies.
inline constexpr EpilogueInfo kEpilogues[] = {
    {Epilogue::Relu, "relu", "relu", EpilogueRole::Activation},
    {Epilogue::Gelu, "gelu", "gelu", EpilogueRole::Activation},
    {Epilogue::GeluAux, "gelu_aux", "gelu", EpilogueRole::ActivationAux},
    {Epilogue::DRelu, "drelu", "relu_grad", EpilogueRole::Gradient},
    {Epilogue::DGelu, "dgelu", "gelu_grad", EpilogueRole::Gradient},
    {Epilogue::BGrad, "bgrad", "reduce_sum", EpilogueRole::BiasGradient},
};

// Null when no epilogue has that name.
inline const EpilogueInfo *findEpilogue(std::string_view name) {
  for (const EpilogueInfo &e : kEpilogues)
    if (name == e.name)
      return &e;
  return nullptr;
}

// The epilogue that fuses graph op `op` in `role`; null when none does.
inline const EpilogueInfo *findEpilogue(std::string_view op,
                                        EpilogueRole role) {
  for (const EpilogueInfo &e : kEpilogues)
    if (op == e.op && e.role == role)
      return &e;
  return nullptr;
}

// "relu, gelu, ...": for messages that list what is known.
inline std::string epilogueNames() {
  std::string s;
  for (const EpilogueInfo &e : kEpilogues)
    s += std::string(s.empty() ? "" : ", ") + e.name;
  return s;
}

} // namespace ampc::rt

#endif // AMPC_RUNTIME_GEMMEPILOGUE_H
