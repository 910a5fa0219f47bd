//===- AmpMemory.cpp - planned memory of the f32 and AMP steps ------------===//
#include "tools/amp-run/AmpMemory.h"

#include "compiler/Transforms/AmpReport.h"
#include "tools/amp-run/Fail.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace ampc::tools {

llvm::json::Object toJson(const ArenaBytes &b) {
  // The first five are the fields of the first report; their names stay.
  return llvm::json::Object{
      {"arena_bytes", b.arena},
      {"param_and_state_bytes", b.params},
      {"input_bytes", b.inputs},
      {"working_copy_bytes", b.workingCopies()},
      {"activation_bytes", b.activations()},
      {"working_copy_state_bytes", b.workingCopyState},
      {"working_copy_cast_bytes", b.workingCopyCasts},
      {"gradient_bytes", b.gradients},
      {"gradient_bytes_in_working_copies", b.gradientsInWorkingCopies},
      {"saved_for_backward_bytes", b.savedForBackward},
      {"saved_for_backward_f32_bytes", b.savedForBackwardF32}};
}

static void addRatio(llvm::json::Object &to, llvm::StringRef key, int64_t amp,
                     int64_t f32) {
  if (f32 > 0)
    to[key] = static_cast<double>(amp) / f32;
}

LogicalResult addMemoryToReport(StringRef path, const ArenaBytes &f32,
                                const ArenaBytes &amp, std::string &error) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    error = "cannot read the AMP report '" + path.str() +
            "': " + buffer.getError().message();
    return failure();
  }
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse((*buffer)->getBuffer());
  if (!parsed || !parsed->getAsObject()) {
    error = "the AMP report '" + path.str() + "' is not a JSON object";
    if (!parsed)
      llvm::consumeError(parsed.takeError());
    return failure();
  }
  llvm::json::Object report = std::move(*parsed->getAsObject());
  llvm::json::Object memory{{"f32", toJson(f32)}, {"amp", toJson(amp)}};
  addRatio(memory, "arena_ratio", amp.arena, f32.arena);
  addRatio(memory, "activation_ratio", amp.activations(), f32.activations());
  addRatio(memory, "gradient_ratio", amp.gradients, f32.gradients);
  addRatio(memory, "saved_for_backward_ratio", amp.savedForBackward,
           f32.savedForBackward);
  report["memory"] = std::move(memory);
  return AmpReport::write(report, path, error);
}

/// MB of 2^20 bytes, as the summary gives them.
static std::string megabytes(int64_t bytes) {
  return llvm::formatv("{0:F2} MB", static_cast<double>(bytes) / (1 << 20));
}

/// " (0.50x)", or nothing where f32 has none of it.
static std::string ratio(int64_t amp, int64_t f32) {
  if (f32 <= 0)
    return "";
  return llvm::formatv(" ({0:F2}x)", static_cast<double>(amp) / f32);
}

void printMemorySummary(llvm::raw_ostream &os, llvm::StringRef run,
                        const ArenaBytes &amp, const ArenaBytes &f32) {
  os << "amp-run: peak arena memory " << megabytes(amp.arena) << " with " << run
     << " vs " << megabytes(f32.arena) << " in f32"
     << ratio(amp.arena, f32.arena) << ":\n";
  // Not parts of the arena that add up: the per-step values hold the
  // gradients and saved values (and O1's working copies) at different times.
  auto line = [&](llvm::StringRef what, int64_t a, int64_t b) {
    os << llvm::formatv("amp-run:   {0,-31} {1,10} vs {2,10}{3}\n", what,
                        megabytes(a), megabytes(b), ratio(a, b));
  };
  line("parameters and optimizer state", amp.params, f32.params);
  line("working copies", amp.workingCopies(), f32.workingCopies());
  line("gradients (most live at once)", amp.gradients, f32.gradients);
  if (amp.gradientsInWorkingCopies > 0)
    line("  written over working copies", amp.gradientsInWorkingCopies,
         f32.gradientsInWorkingCopies);
  line("saved for backward", amp.savedForBackward, f32.savedForBackward);
  line("per-step values (own bytes)", amp.activations(), f32.activations());
  // Where AMP needs more than f32 (a step whose parameters outweigh its
  // activations), say what the extra bytes are for.
  // Gradients written over the working copies take no bytes of their own.
  const int64_t ownGradients = amp.gradients - amp.gradientsInWorkingCopies;
  if (amp.arena > f32.arena && amp.workingCopies() > 0)
    os << "amp-run:   the AMP step needs " << megabytes(amp.arena - f32.arena)
       << " more: its parameters outweigh its activations, and it keeps "
       << megabytes(amp.workingCopies()) << " of low-precision working copies"
       << (ownGradients > f32.gradients
               ? " and holds " + megabytes(ownGradients - f32.gradients) +
                     " more gradient bytes at once (with loss scaling the "
                     "overflow check reads every gradient before any update)"
               : std::string())
       << "\n";
}

int reportMemory(ModuleOp f32, ModuleOp amp, StringRef name, StringRef path) {
  FailureOr<ArenaBytes> a = measureArena(f32, name);
  FailureOr<ArenaBytes> b = measureArena(amp, name);
  std::string error;
  if (failed(a) || failed(b))
    error = "the lowered @" + name.str() + " has no planned arena to measure";
  else if (succeeded(addMemoryToReport(path, *a, *b, error)))
    return 0;
  return fail(error);
}

} // namespace ampc::tools
