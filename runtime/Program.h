//===- Program.h - a validated, ready-to-run Program ----------------------===//
//
// Parses a serialized Program (program.proto) and checks everything a
// kernel launch relies on: types, arena bounds and alignment, constant
// sizes, value ids, attribute kinds, that every value is written before it
// is read, and that no kernel writes bytes another live value still needs.
// What comes out no longer refers to protobuf.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_PROGRAM_H
#define AMPC_RUNTIME_PROGRAM_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"
#include "runtime/ops/Check.h"
#include "runtime/ops/OpCall.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ampc::rt {

// 2: every attribute is written (the runtime keeps no defaults) and each
// kernel says how its outputs may alias its inputs. 3: the file ends with
// its checksum (appendProgramChecksum). 4: a function may take its
// parameters from the training step (`params_from_step`).
//
// A Program is written in the oldest of these versions that holds it (3
// unless a function takes its parameters from the step), so that the bytes
// of a step, and the hash checkpoints record of them, stay what version 3
// made them. The loader reads both.
inline constexpr unsigned kProgramVersion = 4;
inline constexpr unsigned kOldestProgramVersion = 3;
inline constexpr int64_t kArenaAlignment = 64;
// The most bytes a Program's arena or one of its values may have (4 TiB):
// the compiler refuses to write more, the loader to read more.
inline constexpr int64_t kMaxProgramBytes = int64_t(1) << 42;

struct ValueInfo {
  DType dtype = DType::F32;
  Shape shape;
  bool inArena = true;
  int64_t offset = 0; // arena values
  int constant = -1;  // constant values
  int viewOf = -1;    // a view shares the bytes of this earlier value
  int64_t byteSize() const { return numElements(shape) * sizeOf(dtype); }
};

struct KernelInfo {
  std::string kind;
  Attrs attrs;
  std::vector<int> inputs; // -1: absent optional
  std::vector<int> outputs;
  std::vector<ops::FusedStep> steps;
  std::string location;
  // How the compiler planned the outputs over the inputs; never more than
  // ops::aliasingOf(kind) allows.
  ops::Aliasing aliasing = ops::Aliasing::None;
  std::string describe(size_t index) const; // "kernel 3 (gemm at 'fc1')"
};

struct BindingInfo {
  std::string name;
  int value = -1;
  std::string init; // parameters
  int update = -1;  // parameters: the value they hold after a run, if any
};

struct FunctionInfo {
  std::string name;
  int64_t arenaSize = 0;
  std::vector<ValueInfo> values;
  std::vector<std::string> constants; // raw bytes
  std::vector<BindingInfo> inputs, params, outputs;
  std::vector<KernelInfo> kernels;
  // The evaluation function of a training Program: its parameters are the
  // step's of the same names and shapes (perhaps in other dtypes), written
  // without initial values; a runner copies them in before each run.
  bool paramsFromStep = false;
};

// What a host loop needs to know about a training step (program.proto's
// StepInfo): the compiler states it (amp-describe-step).
struct StepInfo {
  std::string function = "train_step";
  std::string loss;
  bool checksOverflow = false;                // the step returns found_inf
  double staticScale = 1;                     // the scale when it is no state
  std::map<std::string, int64_t> classes;     // label input -> class count
  std::map<std::string, int64_t> ignoreIndex; // label input -> its loss's
  std::set<std::string> weights;              // initializers, not state
  std::map<std::string, std::string> workingCopies; // weight -> its copy
  int64_t accumulate = 1; // steps per optimizer update
  int64_t worldSize = 1;  // ranks whose gradients each update averages
};

struct ProgramInfo {
  std::string producer;
  std::vector<FunctionInfo> functions;
  std::optional<StepInfo> step; // training Programs
  // Training Programs: the CRC-32 of what the step computes (its function
  // and StepInfo), without what leaves that unchanged: the kernels'
  // locations, the parameters' initial values (a checkpoint replaces every
  // one), the other functions, the file's version and producer. A
  // checkpoint of amp-exec records it, so that the step compiled again
  // (from another directory, with its weights omitted, by a later ampc)
  // resumes it.
  uint32_t stepHash = 0;
  // Parameters with an empty `init` were written without their initial
  // value (a Session starts them at zero).
  bool weightsOmitted = false;
  const FunctionInfo *find(const std::string &name) const;
};

/// The bytes of the checksum field that ends every Program file
/// (program.proto's `checksum`: its tag, then a fixed32).
inline constexpr size_t kProgramChecksumBytes = 5;

/// Ends `bytes`, a serialized Program, with its checksum field: the CRC-32
/// of `bytes` (program.proto). Every Program file is written so.
void appendProgramChecksum(std::string &bytes);

/// Removes the checksum field that ends `bytes`, if its last
/// kProgramChecksumBytes are one (whether or not it matches); says whether
/// they were.
bool stripProgramChecksum(std::string &bytes);

// `origin` (a file name) is put in front of every message. A Program whose
// bytes do not match the checksum at its end is refused as damaged.
Status parseProgram(const std::string &bytes, const std::string &origin,
                    ProgramInfo &out);
Status readProgramFile(const std::string &path, ProgramInfo &out);

} // namespace ampc::rt

#endif // AMPC_RUNTIME_PROGRAM_H
