//===- Checkpoint.h - the state a resumed training run starts from --------===//
//
// `amp-run --checkpoint DIR` writes DIR/checkpoint.ampc every N steps and
// `--resume DIR` reads it back. It holds every piece of training state, so a
// resumed run continues bit for bit: every parameter of the train step
// (weights, optimizer state, loss-scale state, step counters, gradient sums),
// the steps done (the data order is a pure function of the seed and the step,
// so the seed in `config` is the whole RNG state), the configuration that
// wrote it (a resume under another one is refused), and the history so far
// (so a resumed run's metrics file and plot cover the whole run).
//
// File format, version 1. Integers are little-endian, f64 values are their
// IEEE-754 bit patterns (NaNs kept), tensor bytes are the runtime's storage
// layout (runtime/io/TensorFile.h).
//
//   offset  size  field
//   0       8     magic "AMPCCKPT"
//   8       4     u32 format version
//   12      8     u64 M: the file's length, this header and the final CRC in
//   20      4     u32 CRC-32 of bytes [0, 20)
//   24            payload
//   M-4     4     u32 CRC-32 of bytes [0, M-4)
//
// The header and the final CRC keep this layout in every version, so a
// reader tells a truncated or corrupt file from one a newer ampc wrote.
// CRC-32 is zlib's (ISO-HDLC: reflected 0x04C11DB7, init and final xor
// 0xFFFFFFFF); it catches every error burst up to 32 bits, so every changed
// byte. The version-1 payload, where str = u64 length + that many bytes:
//
//   i64 step
//   u64 n, then n x (str key, str value)                    config
//   u64 n, then n x tensor                                  params
//     tensor: str name, u8 dtype, u64 rank, rank x i64 dim,
//             u64 byte count, the bytes
//     dtype:  1 f32, 2 f16, 3 bf16, 4 f64, 5 i64, 6 i32, 7 i1 (bytes 0 or 1)
//   u64 c, c x str, u64 r, r x c x f64                      step history
//   u64 c, c x str, u64 r, r x c x f64                      eval history
//
// The reader trusts no length: every count is checked against the bytes
// left before anything is allocated for it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_CHECKPOINT_H
#define AMPC_RUNTIME_TOOLING_CHECKPOINT_H

#include "runtime/Status.h"
#include "runtime/io/TensorFile.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ampc::tools {

struct Checkpoint {
  int64_t step = 0; // steps done: the next step to run
  // What wrote it, compared on resume: the flags that shape the step or the
  // data order ("--amp", "--lr", "--seed", ...; a flag's key starts with
  // "--") and the compiled step's hash, under one of the keys below.
  std::map<std::string, std::string> config;
  // Every parameter and state tensor of the train step, by unique name.
  std::vector<rt::HostTensor> params;
  // The run's history: column names and one row of values per step, and
  // per evaluation. Every row has one value per column.
  std::vector<std::string> stepColumns;
  std::vector<std::vector<double>> stepRows;
  std::vector<std::string> evalColumns;
  std::vector<std::vector<double>> evalRows;
};

// The keys of the step's hash in Checkpoint::config, one per writer:
// amp-run's and the Python module's compiled step (the FNV-1a of its
// Program bytes without the kernels' locations); amp-exec's Program step
// (ProgramInfo::stepHash); and, in amp-exec's checkpoints written before
// that, the FNV-1a of the Program file's bytes.
constexpr const char *kCompiledStepKey = "compiled-step";
constexpr const char *kProgramStepKey = "step";
constexpr const char *kProgramFileKey = "program";

constexpr const char *kCheckpointFile = "checkpoint.ampc";
constexpr uint32_t kCheckpointVersion = 1;

// DIR/checkpoint.ampc.
std::string checkpointPath(const std::string &dir);

// Creates DIR if needed and writes DIR/checkpoint.ampc atomically (through
// DIR/checkpoint.ampc.tmp, fsync, rename, fsync of DIR), so a crash at any
// point leaves the previous checkpoint or the new one, whole. A checkpoint
// that breaks the rules above (duplicate names or columns, a row of the
// wrong width, bytes that do not match a shape, an i1 byte other than 0/1,
// a negative step) is an error, and nothing is written.
rt::Status writeCheckpoint(const std::string &dir, const Checkpoint &ckpt);

// Whether writeCheckpoint(dir, ...) could write there, asked before a run so
// that a bad --checkpoint fails before the training it would save: DIR is a
// directory a file can be created in, or the first of its missing
// components can be created (it is created and removed again) under a
// directory.
rt::Status checkCheckpointDirectory(const std::string &dir);

// Reads DIR/checkpoint.ampc, all or nothing: on any error `out` is untouched
// and the status names the file and what is wrong with it.
rt::Status readCheckpoint(const std::string &dir, Checkpoint &out);

// Refuses to resume under another configuration: the first key (in sorted
// order) whose value differs or that one side lacks is named with both
// values ("checkpoint was written with amp=O2, this run has amp=O1").
rt::Status checkConfig(const Checkpoint &ckpt,
                       const std::map<std::string, std::string> &current,
                       const std::string &dir);

// The file's bytes, and back; `source` names the bytes in messages. Exposed
// for tests and for tools that move checkpoints through something other
// than a directory.
rt::Status encodeCheckpoint(const Checkpoint &ckpt, std::vector<uint8_t> &out);
rt::Status decodeCheckpoint(const uint8_t *data, size_t size,
                            const std::string &source, Checkpoint &out);

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_CHECKPOINT_H
