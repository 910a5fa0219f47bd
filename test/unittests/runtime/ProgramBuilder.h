//===- ProgramBuilder.h - hand-built Programs for runtime tests -----------===//
//
// Owned by the Program and Session tests: a few calls that add a function's
// values, constants, kernels and bindings to a program.proto message, a
// one-kernel relu Program, a loader that expects a Program to be rejected
// with a given message, and one that opens a session on a Program.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_RUNTIME_PROGRAMBUILDER_H
#define AMPC_TEST_RUNTIME_PROGRAMBUILDER_H

#include "runtime/Program.h"
#include "runtime/Session.h"
#include "runtime/program.pb.h"

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace ampc::rt::test {

// Makes `p` a Program of the current version and adds a function to it.
inline proto::Function &addFunction(proto::Program &p, const std::string &name,
                                    int64_t arenaSize) {
  p.set_version(kProgramVersion);
  proto::Function &f = *p.add_functions();
  f.set_name(name);
  f.set_arena_size(arenaSize);
  return f;
}

// An arena value at byte `offset`.
inline proto::Value *addValue(proto::Function &f, proto::DType d,
                              const std::vector<int64_t> &shape,
                              int64_t offset) {
  proto::Value *v = f.add_values();
  v->mutable_type()->set_dtype(d);
  for (int64_t s : shape)
    v->mutable_type()->add_shape(s);
  v->set_arena_offset(offset);
  return v;
}

// A constant holding `bytes` and the value that reads it.
inline proto::Value *addConstantValue(proto::Function &f, proto::DType d,
                                      const std::vector<int64_t> &shape,
                                      const std::string &bytes) {
  int index = f.constants_size();
  proto::Constant *c = f.add_constants();
  c->mutable_type()->set_dtype(d);
  for (int64_t s : shape)
    c->mutable_type()->add_shape(s);
  c->set_data(bytes);
  proto::Value *v = f.add_values();
  *v->mutable_type() = c->type();
  v->set_constant(index);
  return v;
}

inline proto::Kernel *addKernel(proto::Function &f, const std::string &kind,
                                const std::string &location,
                                const std::vector<int> &inputs,
                                const std::vector<int> &outputs) {
  proto::Kernel *k = f.add_kernels();
  k->set_kind(kind);
  k->set_location(location);
  // What the compiler declares for a kernel of this op (its body's
  // aliasing): all the op allows.
  k->set_aliasing(static_cast<proto::Aliasing>(ops::aliasingOf(kind)));
  for (int i : inputs)
    k->add_inputs(i);
  for (int o : outputs)
    k->add_outputs(o);
  return k;
}

// Appends a step `op` to the fused kernel `k`, over `operands` (k >= 0:
// kernel input k; -n: the result of step n - 1), computed in `dtype`.
inline proto::Step *addStep(proto::Kernel *k, const std::string &op,
                            std::initializer_list<int> operands,
                            proto::DType dtype = proto::F32) {
  proto::Step *s = k->add_steps();
  s->set_op(op);
  for (int o : operands)
    s->add_operands(o);
  s->set_dtype(dtype);
  return s;
}

// A gemm kernel's attributes as the compiler writes them: alpha = beta = 1,
// no transposes.
inline proto::Kernel *setGemmAttrs(proto::Kernel *k) {
  auto &a = *k->mutable_attrs();
  a["alpha"].set_f(1);
  a["beta"].set_f(1);
  a["trans_a"].set_i(0);
  a["trans_b"].set_i(0);
  return k;
}

// Adds a binding to a function's inputs, params or outputs.
inline proto::Binding *
bind(google::protobuf::RepeatedPtrField<proto::Binding> *list,
     const std::string &name, int value) {
  proto::Binding *b = list->Add();
  b->set_name(name);
  b->set_value(value);
  return b;
}

inline Status loadProgram(const proto::Program &p, ProgramInfo &info) {
  std::string bytes = p.SerializeAsString();
  appendProgramChecksum(bytes);
  return parseProgram(bytes, "test.program", info);
}

// The f32 bytes of `v`, for a parameter's init or a constant.
inline std::string floats(std::vector<float> v) {
  return std::string(reinterpret_cast<const char *>(v.data()), v.size() * 4);
}

// In function 'forward': y = relu(x + [1, -10]) (fused, in place over x),
// z = gemm(y, w) in a new buffer, w a parameter starting at [[1, 2], [3, 4]].
inline proto::Program reluGemmProgram() {
  proto::Program p;
  proto::Function &f = addFunction(p, "forward", 256);
  addValue(f, proto::F32, {2, 2}, 0);                     // 0: x
  addValue(f, proto::F32, {2, 2}, 64);                    // 1: w (param)
  addConstantValue(f, proto::F32, {2}, floats({1, -10})); // 2: b
  addValue(f, proto::F32, {2, 2}, 0);                     // 3: y (over x)
  addValue(f, proto::F32, {2, 2}, 128);                   // 4: z
  bind(f.mutable_inputs(), "x", 0);
  bind(f.mutable_params(), "w", 1)->set_init(floats({1, 2, 3, 4}));
  proto::Kernel *k = addKernel(f, "fused", "", {0, 2}, {3});
  addStep(k, "add", {0, 1});
  addStep(k, "relu", {-1});
  setGemmAttrs(addKernel(f, "gemm", "fc", {3, 1, -1}, {4}));
  bind(f.mutable_outputs(), "z", 4);
  return p;
}

// y = relu(x) over `n` floats, x at 0 and y after it, in function 'forward'
// with an arena of `arenaSize` bytes.
inline proto::Program reluProgram(int64_t n, int64_t arenaSize) {
  proto::Program p;
  proto::Function &f = addFunction(p, "forward", arenaSize);
  int64_t yOffset = n < (int64_t(1) << 40) ? (n * 4 + 63) / 64 * 64 : 64;
  addValue(f, proto::F32, {n}, 0);       // 0: x
  addValue(f, proto::F32, {n}, yOffset); // 1: y
  bind(f.mutable_inputs(), "x", 0);
  addStep(addKernel(f, "fused", "r", {0}, {1}), "relu", {0});
  bind(f.mutable_outputs(), "y", 1);
  return p;
}

// Loads `p` and creates a session for its first function.
inline Status createSession(const proto::Program &p,
                            const SessionOptions &options,
                            std::unique_ptr<Session> &session) {
  ProgramInfo info;
  Status s = loadProgram(p, info);
  if (!s)
    return s;
  return Session::create(info.functions[0], options, session);
}

// Expects `p` to be rejected on load with an error that contains `message`;
// returns the error ("" when `p` was accepted).
inline std::string expectLoadError(const proto::Program &p,
                                   const std::string &message) {
  ProgramInfo info;
  Status s = loadProgram(p, info);
  EXPECT_FALSE(s.isOk()) << "accepted; expected: " << message;
  if (s.isOk())
    return "";
  EXPECT_NE(s.message().find(message), std::string::npos) << s.message();
  return s.message();
}

} // namespace ampc::rt::test

#endif // AMPC_TEST_RUNTIME_PROGRAMBUILDER_H
