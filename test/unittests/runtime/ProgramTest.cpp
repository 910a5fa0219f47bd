//===- ProgramTest.cpp - Program validation and the Session ---------------===//
//
// Hand-built Programs: a valid one runs and gives the right numbers; each
// way of breaking one is rejected on load with a message that names the
// problem, never a crash.
//
//===----------------------------------------------------------------------===//
#include "runtime/Program.h"
#include "ProgramBuilder.h"
#include "runtime/Half.h"
#include "runtime/Session.h"
#include "runtime/program.pb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

using namespace ampc::rt;
using namespace ampc::rt::test;
namespace pb = ampc::rt::proto;

namespace {

// y = relu(x + b) (fused, in place over x), z = gemm(y, w) in a new buffer.
pb::Program validProgram() { return reluGemmProgram(); }

// Applies `mutate` to the valid Program and expects a load error that
// contains `message`.
void expectRejected(const std::function<void(pb::Program &)> &mutate,
                    const std::string &message) {
  pb::Program p = validProgram();
  mutate(p);
  std::string error = expectLoadError(p, message);
  if (!error.empty()) {
    EXPECT_EQ(error.rfind("test.program: ", 0), 0u) << error;
  }
}

} // namespace

TEST(Program, ValidProgramRunsAndGivesTheRightNumbers) {
  ProgramInfo info;
  ASSERT_TRUE(loadProgram(validProgram(), info).isOk());
  std::unique_ptr<Session> session;
  Status s = Session::create(*info.find("forward"), {}, session);
  ASSERT_TRUE(s.isOk()) << s.message();
  for (int run = 0; run < 2; ++run) {
    std::vector<float> x = {1, 20, -3, 4};
    TensorView xv{DType::F32, {2, 2}, x.data()};
    ASSERT_TRUE(session->setInput("x", xv).isOk());
    s = session->run();
    ASSERT_TRUE(s.isOk()) << s.message();
    TensorView z;
    ASSERT_TRUE(session->output("z", z).isOk());
    // y = relu(x + [1, -10]) = [[2, 10], [0, 0]]; z = y @ [[1, 2], [3, 4]].
    const float *zf = z.as<float>();
    EXPECT_FLOAT_EQ(zf[0], 32);
    EXPECT_FLOAT_EQ(zf[1], 44);
    EXPECT_FLOAT_EQ(zf[2], 0);
    EXPECT_FLOAT_EQ(zf[3], 0);
  }
  EXPECT_EQ(session->runs(), 2u);
}

TEST(Program, SessionChecksInputs) {
  ProgramInfo info;
  ASSERT_TRUE(loadProgram(validProgram(), info).isOk());
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(info.functions[0], {}, session).isOk());
  Status s = session->run();
  EXPECT_NE(s.message().find("input 'x' was not given"), std::string::npos);
  std::vector<float> x(6);
  s = session->setInput("x", TensorView{DType::F32, {2, 3}, x.data()});
  EXPECT_NE(s.message().find("input 'x' must be tensor<2x2xf32>, got "
                             "tensor<2x3xf32>"),
            std::string::npos)
      << s.message();
  s = session->setInput("q", TensorView{DType::F32, {2, 2}, x.data()});
  EXPECT_NE(s.message().find("no input 'q' (inputs: x)"), std::string::npos);
  // Inputs are consumed by a run (the plan reuses their bytes).
  ASSERT_TRUE(session->setInput("x", TensorView{DType::F32, {2, 2}, x.data()}));
  ASSERT_TRUE(session->run().isOk());
  EXPECT_FALSE(session->run().isOk());
  TensorView out;
  EXPECT_FALSE(session->output("nope", out).isOk());
  SessionOptions other;
  for (const char *bad : {"tpu", "cuda:", "cuda:x", "cuda:-1", "CUDA"}) {
    other.device = bad;
    s = Session::create(info.functions[0], other, session);
    EXPECT_EQ(s.message(), "unknown device '" + std::string(bad) +
                               "' (devices: cpu, cuda, cuda:N)");
  }
  // Without a GPU (or a driver) the CUDA backend says why in one line.
  other.device = "cuda:7";
  s = Session::create(info.functions[0], other, session);
  if (!s) {
    EXPECT_EQ(s.message().rfind("device 'cuda:7': ", 0), 0u) << s.message();
    EXPECT_EQ(s.message().find('\n'), std::string::npos) << s.message();
  }
}

TEST(Program, RejectsBytesThatAreNotAProgram) {
  ProgramInfo info;
  EXPECT_NE(parseProgram("", "p", info).message().find("empty file"),
            std::string::npos);
  EXPECT_NE(parseProgram("\xff\xff\xff garbage", "p", info)
                .message()
                .find("not a valid Program"),
            std::string::npos);
  std::string bytes = validProgram().SerializeAsString();
  appendProgramChecksum(bytes);
  ASSERT_TRUE(parseProgram(bytes, "p", info));
  // Every truncation is an error, never a crash: the checksum ends the
  // file.
  for (size_t n = 0; n < bytes.size(); ++n) {
    ProgramInfo i;
    EXPECT_FALSE(parseProgram(bytes.substr(0, n), "p", i)) << n;
  }
  Status s = readProgramFile("/nonexistent/x.program", info);
  EXPECT_NE(s.message().find("cannot open"), std::string::npos);
  EXPECT_EQ(readProgramFile("/tmp", info).message(),
            "/tmp: is a directory, not a Program file");
}

// A Program file changed after it was written parses as a Program whose
// weights are other numbers: the checksum at its end refuses it.
TEST(Program, RefusesAFileChangedAfterItWasWritten) {
  const std::string serialized = validProgram().SerializeAsString();
  std::string bytes = serialized;
  appendProgramChecksum(bytes);
  ASSERT_EQ(bytes.size(), serialized.size() + kProgramChecksumBytes);
  ProgramInfo info;
  ASSERT_TRUE(parseProgram(bytes, "p", info));
  std::string stripped = bytes;
  EXPECT_TRUE(stripProgramChecksum(stripped));
  EXPECT_EQ(stripped, serialized);
  EXPECT_FALSE(stripProgramChecksum(stripped));
  // A byte of the constant's data: protobuf still reads the file.
  pb::Program original = validProgram();
  const std::string &data = original.functions(0).constants(0).data();
  size_t at = bytes.find(data);
  ASSERT_NE(at, std::string::npos);
  std::string flipped = bytes;
  flipped[at] ^= 0x40;
  pb::Program parses;
  ASSERT_TRUE(parses.ParseFromString(flipped));
  Status s = parseProgram(flipped, "p", info);
  EXPECT_EQ(s.message().rfind("p: damaged Program: its bytes' CRC-32 is 0x", 0),
            0u)
      << s.message();
  EXPECT_NE(s.message().find(", but the checksum written at its end is 0x"),
            std::string::npos)
      << s.message();
  // Damage to the version field reads as damage, not as an older ampc.
  std::string version2 = bytes;
  ASSERT_EQ(version2.substr(0, 2), std::string("\x08\x04"));
  version2[1] = '\x02';
  EXPECT_NE(parseProgram(version2, "p", info)
                .message()
                .find("p: damaged Program: its bytes' CRC-32 is"),
            std::string::npos);
  // Without the checksum (a Program serialized by another tool).
  EXPECT_EQ(
      parseProgram(validProgram().SerializeAsString(), "p", info).message(),
      "p: damaged Program: it does not end with its checksum, as every "
      "Program ampc writes does (cut short, or rewritten by another tool): "
      "compile the model again with amp-run --emit=program");
  // The checksum of other bytes.
  std::string other = "x";
  appendProgramChecksum(other);
  std::string swapped =
      validProgram().SerializeAsString() + other.substr(other.size() - 5);
  EXPECT_NE(parseProgram(swapped, "p", info).message().find("damaged"),
            std::string::npos);
}

TEST(Program, RejectsInconsistentPrograms) {
  expectRejected([](pb::Program &p) { p.set_version(99); },
                 "Program version 99, this runtime reads versions 3 to 4 "
                 "(written by a newer ampc)");
  // Version 1 held attributes at their defaults only when the op set them,
  // and no aliasing; version 2 had no checksum: refused, saying how to get
  // a version 3 file.
  expectRejected([](pb::Program &p) { p.set_version(1); },
                 "Program version 1, this runtime reads versions 3 to 4 "
                 "(written by an older ampc, before Programs held every "
                 "attribute and "
                 "each kernel's aliasing: compile the model again with "
                 "amp-run --emit=program)");
  expectRejected([](pb::Program &p) { p.set_version(2); },
                 "Program version 2, this runtime reads versions 3 to 4 "
                 "(written by an older ampc, before Programs ended with their "
                 "checksum: compile the model again with amp-run "
                 "--emit=program)");
  // A kernel may claim only the aliasing its op allows: an elementwise
  // claim on a gemm would let its output overlay an input it still reads.
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_kernels(1)->set_aliasing(
            pb::ALIASING_ELEMENTWISE);
      },
      "kernel 1 (gemm at 'fc'): declares aliasing 'elementwise', but a "
      "'gemm' kernel allows 'none'");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_kernels(0)->set_aliasing(
            static_cast<pb::Aliasing>(7));
      },
      "kernel 0 (fused): aliasing 7 is not an aliasing kind");
  // A fused kernel that does not declare its in-place plan is refused
  // where its output overlays the input it reads.
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_kernels(0)->set_aliasing(
            pb::ALIASING_NONE);
      },
      "kernel 0 (fused) writes value 3 over bytes of value 0, which are still "
      "needed");
  expectRejected([](pb::Program &p) { p.clear_functions(); },
                 "has no functions");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_values(3)->set_arena_offset(8);
      },
      "value 3 has arena offset 8, not a non-negative multiple of 64");
  expectRejected(
      [](pb::Program &p) { p.mutable_functions(0)->set_arena_size(140); },
      "value 4 (16 bytes at offset 128) ends past the arena (140 bytes)");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_values(0)->mutable_type()->set_shape(
            0, -2);
      },
      "value 0: negative dimension");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_values(0)->mutable_type()->set_dtype(
            static_cast<pb::DType>(42));
      },
      "value 0: unknown dtype 42");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_constants(0)->set_data("abc");
      },
      "constant 0 holds 3 bytes, but its type needs 8");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_values(2)->set_constant(5);
      },
      "value 2 refers to constant 5 of 1");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_params(0)->set_init("x");
      },
      "parameter 'w' has 1 bytes of initial value for 16 bytes of storage");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_inputs(0)->set_value(2);
      },
      "input 'x' is bound to a constant or a view");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_kernels(1)->set_inputs(0, 17);
      },
      "kernel 1 (gemm at 'fc') input refers to value 17, but the function has "
      "5 values");
  expectRejected(
      [](pb::Program &p) {
        // z read before it is written.
        p.mutable_functions(0)->mutable_kernels(0)->set_inputs(0, 4);
      },
      "kernel 0 (fused) reads value 4 before anything writes it");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_kernels(1)->set_outputs(0, 2);
      },
      "writes value 2, which is a constant or a view");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_kernels(0)->clear_steps();
      },
      "is fused but has no steps");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)
            ->mutable_kernels(0)
            ->mutable_steps(1)
            ->set_operands(0, -5);
      },
      "step 1 has operand -5, which names no kernel input or earlier step");
  expectRejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_outputs(0)->set_value(9);
      },
      "output 'z' refers to value 9");
  expectRejected(
      [](pb::Program &p) {
        bind(p.mutable_functions(0)->mutable_inputs(), "x", 0);
      },
      "input 'x' is bound twice");
  expectRejected(
      [](pb::Program &p) {
        // The gemm may not write over y, which it reads.
        p.mutable_functions(0)->mutable_values(4)->set_arena_offset(0);
      },
      "kernel 1 (gemm at 'fc') writes value 4 over bytes of value 3, which "
      "are still needed");
  expectRejected(
      [](pb::Program &p) {
        // Nor over the parameter.
        p.mutable_functions(0)->mutable_values(4)->set_arena_offset(64);
      },
      "over bytes of value 1, which are still needed");
  expectRejected(
      [](pb::Program &p) {
        pb::Value *v = p.mutable_functions(0)->add_values();
        v->mutable_type()->set_dtype(pb::F32);
        v->mutable_type()->add_shape(5);
        v->set_arena_offset(0);
        v->set_view_of(0);
      },
      "value 5 is a view of value 0 but does not share its dtype, offset and "
      "size");
}

TEST(Program, SessionRejectsKernelsTheBackendCannotRun) {
  pb::Program p = validProgram();
  p.mutable_functions(0)->mutable_kernels(1)->set_kind("frobnicate");
  ProgramInfo info;
  ASSERT_TRUE(loadProgram(p, info).isOk());
  std::unique_ptr<Session> session;
  Status s = Session::create(info.functions[0], {}, session);
  EXPECT_NE(s.message().find("kernel 1 (frobnicate at 'fc')"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("no kernel for op 'frobnicate'"),
            std::string::npos)
      << s.message();

  p = validProgram();
  // z declared [2, 3]: the gemm computes [2, 2].
  p.mutable_functions(0)->mutable_values(4)->mutable_type()->set_shape(1, 3);
  ASSERT_TRUE(loadProgram(p, info).isOk());
  s = Session::create(info.functions[0], {}, session);
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("op 'gemm'"), std::string::npos) << s.message();
}

// graph.accumulate (the compiler's TypeAttr, written as the type's
// spelling) may only say f32, the type every CPU kernel accumulates in.
TEST(Program, SessionAcceptsOnlyF32Accumulation) {
  auto withAccumulate = [](const std::function<void(pb::Attr &)> &set) {
    pb::Program p = validProgram();
    set((*p.mutable_functions(0)
              ->mutable_kernels(1)
              ->mutable_attrs())["graph.accumulate"]);
    ProgramInfo info;
    Status s = loadProgram(p, info);
    EXPECT_TRUE(s.isOk()) << s.message();
    std::unique_ptr<Session> session;
    return s.isOk() ? Session::create(info.functions[0], {}, session) : s;
  };
  Status s = withAccumulate([](pb::Attr &a) { a.set_s("f32"); });
  EXPECT_TRUE(s.isOk()) << s.message();
  s = withAccumulate([](pb::Attr &a) { a.set_s("f16"); });
  EXPECT_NE(s.message().find("kernel 1 (gemm at 'fc'): op 'gemm': "
                             "graph.accumulate is 'f16', but the runtime "
                             "accumulates in f32 only"),
            std::string::npos)
      << s.message();
  s = withAccumulate([](pb::Attr &a) { a.set_i(32); });
  EXPECT_NE(s.message().find("op 'gemm': graph.accumulate is not a type name"),
            std::string::npos)
      << s.message();
}

namespace {
// A training step: w' = sgd_update(lr, w, g), w' written over w when
// `inPlace`, else in its own bytes (the Session copies it back).
pb::Program trainingProgram(bool inPlace) {
  pb::Program p;
  pb::Function &f = addFunction(p, "train_step", 256);
  addValue(f, pb::F32, {2, 2}, 0);                  // 0: w (param)
  addValue(f, pb::F32, {2, 2}, 64);                 // 1: g (input)
  addConstantValue(f, pb::F32, {}, floats({0.5f})); // 2: lr
  addValue(f, pb::F32, {2, 2}, inPlace ? 0 : 128);  // 3: w'
  pb::Binding *w = bind(f.mutable_params(), "w", 0);
  w->set_init(floats({1, 2, 3, 4}));
  w->set_update(3);
  bind(f.mutable_inputs(), "g", 1);
  pb::Kernel *k = addKernel(f, "sgd_update", "", {2, 0, 1}, {3});
  (*k->mutable_attrs())["weight_decay"].set_f(0.0);
  return p;
}
} // namespace

TEST(Program, TrainingStateIsUpdatedInPlaceOrCopiedBack) {
  for (bool inPlace : {true, false}) {
    ProgramInfo info;
    Status s = loadProgram(trainingProgram(inPlace), info);
    ASSERT_TRUE(s.isOk()) << s.message();
    std::unique_ptr<Session> session;
    s = Session::create(info.functions[0], {}, session);
    ASSERT_TRUE(s.isOk()) << s.message();
    std::vector<float> g = {2, 4, 6, 8};
    for (int run = 0; run < 2; ++run) {
      ASSERT_TRUE(session->setInput("g", {DType::F32, {2, 2}, g.data()}));
      s = session->run();
      ASSERT_TRUE(s.isOk()) << s.message();
    }
    TensorView w;
    ASSERT_TRUE(session->param("w", w).isOk());
    // Two steps of w -= 0.5 * g.
    EXPECT_EQ(std::vector<float>(w.as<float>(), w.as<float>() + 4),
              (std::vector<float>{-1, -2, -3, -4}))
        << (inPlace ? "in place" : "copied back");
    std::vector<float> restored = {9, 9, 9, 9};
    ASSERT_TRUE(session->setParam("w", {DType::F32, {2, 2}, restored.data()}));
    ASSERT_TRUE(session->param("w", w).isOk());
    EXPECT_EQ(w.as<float>()[0], 9);
    EXPECT_FALSE(session->setParam("w", {DType::F32, {4}, restored.data()}));
    EXPECT_FALSE(session->param("nope", w));
  }
}

TEST(Program, RejectsUnsafeOrInconsistentStateUpdates) {
  auto rejected = [](const std::function<void(pb::Program &)> &mutate,
                     const std::string &message) {
    pb::Program p = trainingProgram(true);
    mutate(p);
    expectLoadError(p, message);
  };
  // The update is another value: w' may not be written over w then.
  rejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_params(0)->set_update(1);
      },
      "writes value 3 over bytes of value 0");
  rejected(
      [](pb::Program &p) {
        pb::Function &f = *p.mutable_functions(0);
        f.mutable_values(3)->mutable_type()->set_shape(0, 4);
        f.mutable_values(3)->mutable_type()->set_shape(1, 1);
      },
      "is updated with value 3, which has another type");
  rejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_params(0)->set_update(0);
      },
      "is updated with itself");
  rejected(
      [](pb::Program &p) {
        p.mutable_functions(0)->mutable_params(0)->set_update(9);
      },
      "parameter 'w' update");
  // A later kernel still reads w after its new value was written over it.
  rejected(
      [](pb::Program &p) {
        pb::Function &f = *p.mutable_functions(0);
        addValue(f, pb::F32, {2, 2}, 192); // 4: relu(w)
        addKernel(f, "relu", "", {0}, {4});
      },
      "over bytes of value 0, which are still needed");
  // Written over a parameter without being its update.
  rejected(
      [](pb::Program &p) {
        pb::Function &f = *p.mutable_functions(0);
        f.mutable_params(0)->clear_update();
      },
      "over bytes of value 0, which are still needed");
}

namespace {
// bf16 bits of small integers, exact in bf16.
std::string bf16s(std::vector<float> v) {
  std::string bytes;
  for (float x : v) {
    uint32_t bits;
    std::memcpy(&bits, &x, 4);
    uint16_t hi = static_cast<uint16_t>(bits >> 16);
    bytes.append(reinterpret_cast<const char *>(&hi), 2);
  }
  return bytes;
}

// An O2 step as the memory plan lays it out (MemoryPlan.cpp): the bf16
// gradient g is written over the working copy ww after ww's last read, and
// the update writes the new working copy over the g it reads.
pb::Program borrowedGradientProgram() {
  pb::Program p;
  pb::Function &f = addFunction(p, "train_step", 256);
  addValue(f, pb::F32, {4}, 0);                     // 0: w (param)
  addValue(f, pb::BF16, {4}, 64);                   // 1: ww (its copy)
  addValue(f, pb::BF16, {4}, 128);                  // 2: x (input)
  addValue(f, pb::BF16, {4}, 192);                  // 3: y = relu(ww)
  addValue(f, pb::BF16, {4}, 64);                   // 4: g = relu(x)
  addConstantValue(f, pb::F32, {}, floats({0.5f})); // 5: lr
  addValue(f, pb::F32, {4}, 0);                     // 6: w'
  addValue(f, pb::BF16, {4}, 64);                   // 7: ww'
  pb::Binding *w = bind(f.mutable_params(), "w", 0);
  w->set_init(floats({1, 2, 3, 4}));
  w->set_update(6);
  pb::Binding *ww = bind(f.mutable_params(), "ww", 1);
  ww->set_init(bf16s({1, 2, 3, 4}));
  ww->set_update(7);
  bind(f.mutable_inputs(), "x", 2);
  bind(f.mutable_outputs(), "y", 3);
  addKernel(f, "relu", "", {1}, {3});
  addKernel(f, "relu", "", {2}, {4});
  pb::Kernel *k = addKernel(f, "sgd_update", "", {5, 0, 4}, {6, 7});
  (*k->mutable_attrs())["weight_decay"].set_f(0.0);
  return p;
}
} // namespace

TEST(Program, AnUpdateWritesTheWorkingCopyOverTheGradientItReads) {
  ProgramInfo info;
  Status s = loadProgram(borrowedGradientProgram(), info);
  ASSERT_TRUE(s.isOk()) << s.message();
  std::unique_ptr<Session> session;
  s = Session::create(info.functions[0], {}, session);
  ASSERT_TRUE(s.isOk()) << s.message();
  std::string x = bf16s({2, 2, 2, 2});
  std::vector<std::string> ys;
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE(session->setInput("x", {DType::BF16, {4}, x.data()}));
    s = session->run();
    ASSERT_TRUE(s.isOk()) << s.message();
    TensorView y;
    ASSERT_TRUE(session->output("y", y).isOk());
    ys.emplace_back(static_cast<const char *>(y.data), 8);
  }
  // The first step reads the initial copy, the second the one the first
  // update wrote over its gradient; w -= 0.5 * 2 twice.
  EXPECT_EQ(ys[0], bf16s({1, 2, 3, 4}));
  EXPECT_EQ(ys[1], bf16s({0, 1, 2, 3}));
  TensorView w, ww;
  ASSERT_TRUE(session->param("w", w).isOk());
  EXPECT_EQ(std::vector<float>(w.as<float>(), w.as<float>() + 4),
            (std::vector<float>{-1, 0, 1, 2}));
  ASSERT_TRUE(session->param("ww", ww).isOk());
  EXPECT_EQ(std::string(static_cast<const char *>(ww.data), 8),
            bf16s({-1, 0, 1, 2}));

  // A gradient read again after the update may not be written over.
  pb::Program late = borrowedGradientProgram();
  pb::Function &f = *late.mutable_functions(0);
  f.set_arena_size(320);
  addValue(f, pb::BF16, {4}, 256); // 8: relu(g), after the update
  addKernel(f, "relu", "", {4}, {8});
  expectLoadError(late, "writes value 7 over bytes of value 4, which are "
                        "still needed");

  // Only the gradient: lr is read by every element of the update, so an
  // output over it (here the new velocity) is refused although the update
  // reads lr for the last time.
  pb::Program lr;
  pb::Function &g = addFunction(lr, "train_step", 384);
  addValue(g, pb::F32, {}, 0);   // 0: w
  addValue(g, pb::F32, {}, 64);  // 1: velocity
  addValue(g, pb::I64, {}, 128); // 2: step
  addValue(g, pb::F32, {}, 192); // 3: lr_in
  addValue(g, pb::F32, {}, 256); // 4: lr = relu(lr_in)
  addValue(g, pb::F32, {}, 0);   // 5: w'
  addValue(g, pb::F32, {}, 256); // 6: velocity', over lr
  addValue(g, pb::F32, {}, 320); // 7: grad
  pb::Binding *gw = bind(g.mutable_params(), "w", 0);
  gw->set_init(floats({1}));
  gw->set_update(5);
  pb::Binding *gv = bind(g.mutable_params(), "velocity", 1);
  gv->set_init(floats({0}));
  gv->set_update(6);
  bind(g.mutable_params(), "step", 2)->set_init(std::string(8, '\0'));
  bind(g.mutable_inputs(), "lr_in", 3);
  bind(g.mutable_inputs(), "grad", 7);
  addKernel(g, "relu", "", {3}, {4});
  addKernel(g, "momentum_update", "", {4, 2, 0, 7, 1}, {5, 6});
  expectLoadError(lr, "writes value 6 over bytes of value 4, which are "
                      "still needed");
}

namespace {
// found_inf of two gradients as the backward pass made them: g0 in f32 and
// g1 in f16, read and left as they are.
pb::Program checkFiniteProgram() {
  pb::Program p;
  pb::Function &f = addFunction(p, "check", 256);
  addValue(f, pb::F32, {4}, 0);  // 0: g0
  addValue(f, pb::F16, {4}, 64); // 1: g1
  addValue(f, pb::F32, {}, 128); // 2: scale
  addValue(f, pb::I1, {}, 192);  // 3: found_inf
  bind(f.mutable_inputs(), "g0", 0);
  bind(f.mutable_inputs(), "g1", 1);
  bind(f.mutable_inputs(), "scale", 2);
  addKernel(f, "check_finite", "", {0, 1, 2}, {3});
  bind(f.mutable_outputs(), "found_inf", 3);
  return p;
}
} // namespace

TEST(Program, CheckFiniteReadsGradientsAndWritesOnlyTheFlag) {
  ProgramInfo info;
  Status s = loadProgram(checkFiniteProgram(), info);
  ASSERT_TRUE(s.isOk()) << s.message();
  std::unique_ptr<Session> session;
  s = Session::create(info.functions[0], {}, session);
  ASSERT_TRUE(s.isOk()) << s.message();
  const float inf = std::numeric_limits<float>::infinity();
  // (last element of g0, scale, expected found_inf): a non-finite element,
  // and a finite f16 gradient that overflows f32 only once unscaled by a
  // scale below 1 (65504 / 1e-35).
  struct Case {
    float last, scale;
    uint8_t found;
  };
  for (Case c : {Case{8, 2, 0}, Case{inf, 2, 1}, Case{8, 1e-35f, 1}}) {
    std::vector<float> g0 = {1, 2, 4, c.last}, scale = {c.scale};
    std::vector<uint16_t> g1;
    for (float v : {65504.0f, 1.0f, -3.0f, 0.5f})
      g1.push_back(floatToHalfBits(v));
    const std::vector<float> g0Before = g0;
    const std::vector<uint16_t> g1Before = g1;
    ASSERT_TRUE(session->setInput("g0", {DType::F32, {4}, g0.data()}));
    ASSERT_TRUE(session->setInput("g1", {DType::F16, {4}, g1.data()}));
    ASSERT_TRUE(session->setInput("scale", {DType::F32, {}, scale.data()}));
    s = session->run();
    ASSERT_TRUE(s.isOk()) << s.message();
    TensorView found;
    ASSERT_TRUE(session->output("found_inf", found));
    EXPECT_EQ(*found.as<uint8_t>(), c.found) << c.last << " " << c.scale;
    EXPECT_EQ(g0, g0Before);
    EXPECT_EQ(g1, g1Before);
  }
}

TEST(Program, RejectsCheckFiniteWritingOverAGradient) {
  // found_inf over g0's bytes: the check is not elementwise and writes
  // nothing in place.
  pb::Program p = checkFiniteProgram();
  p.mutable_functions(0)->mutable_values(3)->set_arena_offset(0);
  expectLoadError(p, "kernel 0 (check_finite) writes value 3 over bytes of "
                     "value 0");
}

namespace {

// g (input) -> all_reduce_start -> exchange -> all_reduce_wait -> mean, in
// function 'step'; `waits` waits on the exchange (each with its own mean).
pb::Program exchangeProgram(int waits) {
  pb::Program p;
  pb::Function &f = addFunction(p, "step", 64 * (2 + waits));
  addValue(f, pb::F32, {4}, 0);  // 0: g
  addValue(f, pb::F32, {4}, 64); // 1: exchange
  bind(f.mutable_inputs(), "g", 0);
  (*addKernel(f, "all_reduce_start", "", {0}, {1})
        ->mutable_attrs())["world_size"]
      .set_i(2);
  for (int w = 0; w < waits; ++w) {
    addValue(f, pb::F32, {4}, 128 + 64 * w); // 2 + w: a mean
    (*addKernel(f, "all_reduce_wait", "", {1}, {2 + w})
          ->mutable_attrs())["world_size"]
        .set_i(2);
    bind(f.mutable_outputs(), "mean" + std::to_string(w), 2 + w);
  }
  return p;
}

} // namespace

TEST(Program, AnExchangeIsOneStartAndOneWait) {
  ProgramInfo info;
  Status s = loadProgram(exchangeProgram(1), info);
  ASSERT_TRUE(s) << s.message();
  expectLoadError(exchangeProgram(0),
                  "test.program: function 'step': kernel 0 (all_reduce_start) "
                  "starts an exchange (value 1) that no all_reduce_wait after "
                  "it finishes");
  expectLoadError(exchangeProgram(2),
                  "kernel 2 (all_reduce_wait) finishes the exchange of value "
                  "1, which an earlier all_reduce_wait finished");
  // A wait on a value no start wrote (the gradient itself).
  pb::Program p = exchangeProgram(1);
  p.mutable_functions(0)->mutable_kernels(1)->set_inputs(0, 0);
  expectLoadError(p, "kernel 1 (all_reduce_wait) finishes an exchange no "
                     "all_reduce_start before it started (its first input is "
                     "not a start's buffer)");
  // A wait before its start reads a value nothing has written yet.
  p = exchangeProgram(1);
  p.mutable_functions(0)->mutable_kernels()->SwapElements(0, 1);
  expectLoadError(p, "kernel 0 (all_reduce_wait) reads value 1 before "
                     "anything writes it");
}

namespace {

// The valid Program as a training step: loss z, label input x (2 classes),
// weight w.
pb::Program withStepInfo() {
  pb::Program p = validProgram();
  pb::StepInfo &s = *p.mutable_step();
  s.set_function("forward");
  s.set_loss("z");
  s.set_checks_overflow(true);
  s.set_static_scale(1);
  (*s.mutable_classes())["x"] = 2;
  (*s.mutable_ignore_index())["x"] = -100;
  s.add_weights("w");
  return p;
}

} // namespace

TEST(Program, StepInfoIsReadAndChecked) {
  ProgramInfo info;
  ASSERT_TRUE(loadProgram(validProgram(), info).isOk());
  EXPECT_FALSE(info.step.has_value()); // an inference Program has none
  ASSERT_TRUE(loadProgram(withStepInfo(), info).isOk());
  ASSERT_TRUE(info.step.has_value());
  EXPECT_EQ(info.step->loss, "z");
  EXPECT_TRUE(info.step->checksOverflow);
  EXPECT_EQ(info.step->classes.at("x"), 2);
  EXPECT_EQ(info.step->ignoreIndex.at("x"), -100);
  EXPECT_EQ(info.step->weights, std::set<std::string>{"w"});

  auto rejected = [](const std::function<void(pb::StepInfo &)> &mutate,
                     const std::string &message) {
    pb::Program p = withStepInfo();
    mutate(*p.mutable_step());
    expectLoadError(p, message);
  };
  rejected([](pb::StepInfo &s) { s.set_function("train_step"); },
           "test.program: the step info: it describes function "
           "'train_step', which the Program does not have");
  rejected([](pb::StepInfo &s) { s.set_loss("y"); },
           "the loss 'y' is no output of function 'forward'");
  rejected([](pb::StepInfo &s) { (*s.mutable_classes())["z"] = 3; },
           "label input 'z' is no input of function 'forward'");
  rejected([](pb::StepInfo &s) { (*s.mutable_classes())["x"] = 0; },
           "label input 'x' has 0 classes");
  rejected([](pb::StepInfo &s) { (*s.mutable_ignore_index())["w"] = 0; },
           "the ignore_index of 'w' is for no label input");
  rejected([](pb::StepInfo &s) { s.add_weights("x"); },
           "weight 'x' is no parameter of function 'forward'");
  rejected([](pb::StepInfo &s) { s.set_static_scale(0); },
           "the static loss scale 0.000000 is not a positive finite number");
  rejected(
      [](pb::StepInfo &s) { (*s.mutable_working_copies())["w"] = "w.working"; },
      "the working copy 'w.working' is no parameter of function 'forward'");
  rejected([](pb::StepInfo &s) { (*s.mutable_working_copies())["q"] = "w"; },
           "the working copy 'w' is of 'q', which is no weight");
}

TEST(Program, EmptyInitIsAcceptedOnlyWhenWeightsAreOmitted) {
  pb::Program p = validProgram();
  p.mutable_functions(0)->mutable_params(0)->clear_init();
  expectLoadError(p, "parameter 'w' has 0 bytes of initial value for 16 "
                     "bytes of storage");
  p.set_weights_omitted(true);
  ProgramInfo info;
  ASSERT_TRUE(loadProgram(p, info).isOk());
  EXPECT_TRUE(info.weightsOmitted);
  // The Session starts the parameter at zero.
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(*info.find("forward"), {}, session).isOk());
  TensorView w;
  ASSERT_TRUE(session->param("w", w).isOk());
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(w.as<float>()[i], 0.0f);
  // A wrong nonzero size is still wrong.
  p.mutable_functions(0)->mutable_params(0)->set_init(floats({1}));
  expectLoadError(p, "parameter 'w' has 4 bytes of initial value");
}

namespace {

// withStepInfo() and, as amp-run writes a training Program's evaluation
// function, 'eval': y = relu(x) over the step's batch input x, with the
// step's parameter w, of `shape` and `dtype`, without an initial value.
pb::Program withEvaluation(pb::DType dtype = pb::F32,
                           std::vector<int64_t> shape = {2, 2}) {
  pb::Program p = withStepInfo();
  pb::Function &f = addFunction(p, "eval", 192);
  f.set_params_from_step(true);
  addValue(f, pb::F32, {2, 2}, 0);   // 0: x
  addValue(f, dtype, shape, 64);     // 1: w
  addValue(f, pb::F32, {2, 2}, 128); // 2: y
  bind(f.mutable_inputs(), "x", 0);
  bind(f.mutable_params(), "w", 1);
  addStep(addKernel(f, "fused", "r", {0}, {2}), "relu", {0});
  bind(f.mutable_outputs(), "y", 2);
  return p;
}

} // namespace

TEST(Program, AnEvaluationFunctionTakesItsParamsFromTheStep) {
  ProgramInfo info;
  Status s = loadProgram(withEvaluation(), info);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_FALSE(info.find("forward")->paramsFromStep);
  const FunctionInfo *eval = info.find("eval");
  ASSERT_TRUE(eval && eval->paramsFromStep);
  EXPECT_FALSE(info.weightsOmitted);
  // Its parameter starts at zero; the runner copies the step's in.
  std::unique_ptr<Session> session;
  ASSERT_TRUE(Session::create(*eval, {}, session).isOk());
  TensorView w;
  ASSERT_TRUE(session->param("w", w).isOk());
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(w.as<float>()[i], 0.0f);
  // In its own precision (AMP's): the same shape is what must match.
  s = loadProgram(withEvaluation(pb::F16), info);
  EXPECT_TRUE(s.isOk()) << s.message();
}

// What amp-exec's checkpoints record of a Program: its step's computation.
TEST(Program, TheStepHashIsOfWhatTheStepComputes) {
  auto hashOf = [](const pb::Program &p) {
    ProgramInfo info;
    Status s = loadProgram(p, info);
    EXPECT_TRUE(s.isOk()) << s.message();
    return info.stepHash;
  };
  const uint32_t step = hashOf(withStepInfo());
  EXPECT_NE(step, 0u);
  EXPECT_EQ(hashOf(validProgram()), 0u); // no step, no hash
  // What leaves the computation as it is: the kernels' locations, the
  // parameters' initial values, an evaluation function beside the step,
  // the version and the producer.
  pb::Program same = withEvaluation();
  same.mutable_functions(0)->mutable_kernels(0)->set_location("moved.onnx");
  same.mutable_functions(0)->mutable_params(0)->clear_init();
  same.set_weights_omitted(true);
  same.set_producer("a later ampc");
  EXPECT_EQ(hashOf(same), step);
  // (A training Program without an evaluation function is of version 3,
  // which loads.)
  pb::Program v3 = withStepInfo();
  v3.set_version(3);
  EXPECT_EQ(hashOf(v3), step);
  // A count the loader reads as 1 hashes as 1, whether the writer left it
  // out (as before the field) or wrote it.
  pb::Program counted = withStepInfo();
  counted.mutable_step()->set_accumulate(1);
  counted.mutable_step()->set_world_size(1);
  EXPECT_EQ(hashOf(counted), step);
  // What changes it: an attribute, the step's facts, a constant.
  pb::Program attr = withStepInfo();
  (*attr.mutable_functions(0)->mutable_kernels(1)->mutable_attrs())["alpha"]
      .set_f(0.5);
  EXPECT_NE(hashOf(attr), step);
  pb::Program facts = withStepInfo();
  facts.mutable_step()->set_accumulate(2);
  EXPECT_NE(hashOf(facts), step);
  pb::Program constant = withStepInfo();
  constant.mutable_functions(0)->mutable_constants(0)->set_data(floats({0, 1}));
  EXPECT_NE(hashOf(constant), step);
}

TEST(Program, RejectsAnEvaluationFunctionTheStepCannotFill) {
  const std::string where = "test.program: function 'eval': ";
  pb::Program p = withEvaluation();
  p.set_version(3);
  EXPECT_EQ(expectLoadError(p, "version 3"),
            where + "takes its parameters from the training step, which a "
                    "Program of version 3 cannot say");
  p = withEvaluation();
  p.clear_step();
  EXPECT_EQ(expectLoadError(p, "has none"),
            where + "takes its parameters from the training step, but the "
                    "Program has none");
  p = withEvaluation();
  p.mutable_functions(1)->mutable_params(0)->set_name("v");
  EXPECT_EQ(expectLoadError(p, "no parameter"),
            where + "parameter 'v' comes from the training step, which has "
                    "no parameter of that name");
  p = withEvaluation(pb::F32, {4});
  EXPECT_EQ(expectLoadError(p, "shape"),
            where + "parameter 'w' has shape [4], but the training step's "
                    "has shape [2, 2]");
  p = withEvaluation();
  p.mutable_functions(1)->mutable_params(0)->set_init(floats({1, 2, 3, 4}));
  EXPECT_EQ(expectLoadError(p, "of its own"),
            where + "parameter 'w' comes from the training step, but has 16 "
                    "bytes of initial value of its own");
  // Float to float only.
  p = withEvaluation(pb::I64);
  EXPECT_EQ(expectLoadError(p, "convert"),
            where + "parameter 'w' is i64, which the training step's f32 "
                    "does not convert to");
  // It evaluates the step's batch: its inputs are the step's.
  p = withEvaluation();
  p.mutable_functions(1)->mutable_values(0)->mutable_type()->set_dtype(pb::F16);
  p.mutable_functions(1)->mutable_kernels(0)->mutable_steps(0)->set_dtype(
      pb::F16);
  p.mutable_functions(1)->mutable_values(2)->mutable_type()->set_dtype(pb::F16);
  EXPECT_EQ(expectLoadError(p, "input 'x'"),
            where + "input 'x' is f16 [2, 2], but the training step's is f32 "
                    "[2, 2]");
  p = withEvaluation();
  p.mutable_functions(1)->mutable_inputs(0)->set_name("q");
  EXPECT_EQ(expectLoadError(p, "input 'q'"),
            where + "input 'q' is no input of the training step, whose batch "
                    "it evaluates");
  p = withEvaluation();
  p.mutable_functions(1)->mutable_inputs()->Clear();
  p.mutable_functions(1)->mutable_kernels(0)->set_inputs(0, 1);
  EXPECT_EQ(expectLoadError(p, "has no input"),
            where + "has no input 'x', which the training step's batch holds");
  // The step itself cannot be one.
  p = withEvaluation();
  p.mutable_functions(0)->set_params_from_step(true);
  p.mutable_functions(0)->mutable_params(0)->clear_init();
  EXPECT_EQ(expectLoadError(p, "from itself"),
            "test.program: function 'forward': is the training step, and "
            "takes its parameters from itself");
}
