//===- ElementwiseValue.h - one float element of each elementwise op ------===//
//
// The `value` column of Elementwise.def made into host and device functions,
// math::value<Kind>(P, in0, in1) (valueRelu, valueGeluGrad, ...), and the
// attributes they read (Params, as ops::ew::parseAttrs fills it, seen through
// AttrsAs<T>). The CPU loops (cpu/Elementwise.cpp) and the CUDA step
// interpreter (cuda/kernels/Elementwise.cu) generate their float and
// predicate switches from the same rows with AMPC_EW_IF_ARITH_<Sig> and
// AMPC_EW_IF_PREDICATE_<Sig>, so an op's arithmetic is written once and
// neither backend can lack it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_ELEMENTWISEVALUE_H
#define AMPC_RUNTIME_OPS_ELEMENTWISEVALUE_H

#include "runtime/ops/HostDevice.h"
#include "runtime/ops/ScalarMath.h"

#include <stdint.h>

namespace ampc::rt::ops::ew {

// Attribute values a step needs at run time, from the call's attributes,
// which hold every default (Program v2). The CUDA step table (EwStep) has
// the same fields.
struct Params {
  int32_t geluTanh = 0; // gelu's approximate = "tanh"
  int32_t hasMin = 0, hasMax = 0;
  double alpha = 0; // leaky_relu's slope, hard_sigmoid's alpha
  double beta = 0;  // hard_sigmoid's
  double min = 0, max = 0;
};

// A step's attributes in compute type T, as the value expressions read them
// (P.alpha(), ...), from Params or a struct with its fields (the CUDA step
// table's EwStep). Each is converted where it is read; a loop over a local
// copy hoists the conversions.
template <typename T, typename Fields = Params> struct AttrsAs {
  const Fields &p;

  AMPC_HOST_DEVICE bool geluTanh() const { return p.geluTanh != 0; }
  AMPC_HOST_DEVICE T alpha() const { return static_cast<T>(p.alpha); }
  AMPC_HOST_DEVICE T beta() const { return static_cast<T>(p.beta); }
  // clip's bounds as given, and whether they are.
  AMPC_HOST_DEVICE bool hasMin() const { return p.hasMin != 0; }
  AMPC_HOST_DEVICE bool hasMax() const { return p.hasMax != 0; }
  AMPC_HOST_DEVICE T min() const { return static_cast<T>(p.min); }
  AMPC_HOST_DEVICE T max() const { return static_cast<T>(p.max); }
  // clip's bounds, an absent one infinite.
  AMPC_HOST_DEVICE T lo() const { return p.hasMin ? min() : -T(INFINITY); }
  AMPC_HOST_DEVICE T hi() const { return p.hasMax ? max() : T(INFINITY); }
};

} // namespace ampc::rt::ops::ew

// AMPC_EW_IF_VALUE(Sig, ...) expands to its arguments for a row with a
// value expression, and to nothing for `where` and `cast`. Of those,
// AMPC_EW_IF_ARITH_<Sig> keeps the rows whose value is a T (the float
// loops) and AMPC_EW_IF_PREDICATE_<Sig> the rows whose value is a bool (the
// comparisons and logical ops, whose result is stored as i1).
#define AMPC_EW_IF_ARITH_FloatUnary(...) __VA_ARGS__
#define AMPC_EW_IF_ARITH_NumUnary(...) __VA_ARGS__
#define AMPC_EW_IF_ARITH_FloatBinary(...) __VA_ARGS__
#define AMPC_EW_IF_ARITH_NumBinary(...) __VA_ARGS__
#define AMPC_EW_IF_ARITH_Grad(...) __VA_ARGS__
#define AMPC_EW_IF_ARITH_Compare(...)
#define AMPC_EW_IF_ARITH_BoolUnary(...)
#define AMPC_EW_IF_ARITH_BoolBinary(...)
#define AMPC_EW_IF_ARITH_Where(...)
#define AMPC_EW_IF_ARITH_Cast(...)

#define AMPC_EW_IF_PREDICATE_FloatUnary(...)
#define AMPC_EW_IF_PREDICATE_NumUnary(...)
#define AMPC_EW_IF_PREDICATE_FloatBinary(...)
#define AMPC_EW_IF_PREDICATE_NumBinary(...)
#define AMPC_EW_IF_PREDICATE_Grad(...)
#define AMPC_EW_IF_PREDICATE_Compare(...) __VA_ARGS__
#define AMPC_EW_IF_PREDICATE_BoolUnary(...) __VA_ARGS__
#define AMPC_EW_IF_PREDICATE_BoolBinary(...) __VA_ARGS__
#define AMPC_EW_IF_PREDICATE_Where(...)
#define AMPC_EW_IF_PREDICATE_Cast(...)

#define AMPC_EW_IF_VALUE(sig, ...)                                             \
  AMPC_EW_IF_ARITH_##sig(__VA_ARGS__) AMPC_EW_IF_PREDICATE_##sig(__VA_ARGS__)

// The type of a row's value, and the names the value expressions give the
// operands: a unary op ignores its second operand.
#define AMPC_EW_RESULT_FloatUnary T
#define AMPC_EW_RESULT_NumUnary T
#define AMPC_EW_RESULT_FloatBinary T
#define AMPC_EW_RESULT_NumBinary T
#define AMPC_EW_RESULT_Grad T
#define AMPC_EW_RESULT_Compare bool
#define AMPC_EW_RESULT_BoolUnary bool
#define AMPC_EW_RESULT_BoolBinary bool
#define AMPC_EW_OPERANDS_FloatUnary T x, T
#define AMPC_EW_OPERANDS_NumUnary T x, T
#define AMPC_EW_OPERANDS_FloatBinary T a, T b
#define AMPC_EW_OPERANDS_NumBinary T a, T b
#define AMPC_EW_OPERANDS_Grad T g, T x
#define AMPC_EW_OPERANDS_Compare T a, T b
#define AMPC_EW_OPERANDS_BoolUnary T x, T
#define AMPC_EW_OPERANDS_BoolBinary T a, T b

namespace ampc::rt::ops::math {

// In this namespace the expressions' names resolve to ScalarMath.h's
// functions and, on the host, to <cmath>'s float and double overloads
// (ScalarMath.h's using-declarations); under nvcc to CUDA's.
#define AMPC_EW(name, kind, sig, expr)                                         \
  AMPC_EW_IF_VALUE(                                                            \
      sig, template <typename T, typename Attrs>                               \
           AMPC_HOST_DEVICE AMPC_EW_RESULT_##sig value##kind(                  \
               const Attrs &P, AMPC_EW_OPERANDS_##sig) { return expr; })
#include "runtime/ops/Elementwise.def"

} // namespace ampc::rt::ops::math

#endif // AMPC_RUNTIME_OPS_ELEMENTWISEVALUE_H
