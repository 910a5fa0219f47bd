//===- ProgramLoadFuzzer.cpp - libFuzzer target: Program bytes to a run ---===//
//
// Treats the input as a serialized Program and does what amp-exec and
// amp-run do with one: parse and validate it, create a CPU session for each
// function (which checks every kernel against its backend and initializes
// the parameters), and, where the arena is small, run the function once on
// zero inputs. The loader's promise is that a Program it accepts cannot
// make a kernel read or write outside its tensors, so a run is part of the
// target.
//
//===----------------------------------------------------------------------===//

#include "runtime/Program.h"
#include "runtime/Session.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

// Larger arenas are valid but would make the fuzzer slow; the loader's own
// size checks are exercised either way, since they run before this bound.
constexpr int64_t kMaxRunArena = 1 << 20;
constexpr size_t kMaxRunKernels = 256;

// AMPC_FUZZ_VERBOSE=1 prints how far each input got and why it stopped.
bool verbose() {
  static bool on = [] {
    const char *v = std::getenv("AMPC_FUZZ_VERBOSE");
    return v && *v == '1';
  }();
  return on;
}

void report(const std::string &what, const ampc::rt::Status &s) {
  if (verbose())
    std::fprintf(stderr, "%s: %s\n", what.c_str(),
                 s ? "ok" : s.message().c_str());
}

void runFunction(ampc::rt::FunctionInfo fn) {
  int64_t bytesIn = 0;
  for (const ampc::rt::BindingInfo &b : fn.inputs)
    bytesIn += fn.values[b.value].byteSize();
  if (fn.arenaSize > kMaxRunArena || bytesIn > kMaxRunArena ||
      fn.kernels.size() > kMaxRunKernels) {
    if (verbose())
      std::fprintf(stderr, "function '%s': too large to run here\n",
                   fn.name.c_str());
    return;
  }
  std::string name = fn.name;
  ampc::rt::SessionOptions options;
  options.threads = 1;
  // The arena is bounded above, but not what the Session stages for
  // parameter updates; the Session's own fit check enforces this.
  options.memoryLimit = 64 << 20;
  std::unique_ptr<ampc::rt::Session> session;
  ampc::rt::Status created =
      ampc::rt::Session::create(std::move(fn), options, session);
  report("function '" + name + "': session", created);
  if (!created)
    return;
  std::vector<uint8_t> zeros;
  const ampc::rt::FunctionInfo &f = session->function();
  for (const ampc::rt::BindingInfo &b : f.inputs) {
    const ampc::rt::ValueInfo &v = f.values[b.value];
    zeros.assign(static_cast<size_t>(v.byteSize()), 0);
    ampc::rt::TensorView view;
    view.dtype = v.dtype;
    view.shape = v.shape;
    view.data = zeros.data();
    if (ampc::rt::Status s = session->setInput(b.name, view); !s) {
      report("function '" + name + "': input", s);
      return;
    }
  }
  report("function '" + name + "': run", session->run());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  // The fuzzer changes the Program, not its checksum: a checksum field that
  // ends the input (matching or not) is replaced by the right one, and one
  // is added where none is, so each mutation reaches the loader's checks
  // behind it. ProgramTest tests the checksum itself.
  ampc::rt::stripProgramChecksum(bytes);
  ampc::rt::appendProgramChecksum(bytes);
  ampc::rt::ProgramInfo program;
  ampc::rt::Status parsed =
      ampc::rt::parseProgram(bytes, "fuzz.program", program);
  report("parse", parsed);
  if (!parsed)
    return 0;
  for (ampc::rt::FunctionInfo &fn : program.functions)
    runFunction(std::move(fn));
  return 0;
}
