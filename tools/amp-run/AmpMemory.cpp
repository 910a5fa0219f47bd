//===- AmpMemory.cpp - planned memory of the f32 and AMP steps ------------===//
#include "tools/amp-run/AmpMemory.h"

#include "compiler/Transforms/AmpReport.h"
#include "dialects/Rt/RtOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace ampc::tools {

FailureOr<ArenaBytes> measureArena(ModuleOp lowered, StringRef name) {
  auto f = lowered.lookupSymbol<func::FuncOp>(name);
  if (!f)
    return failure();
  auto size = f->getAttrOfType<IntegerAttr>(rtir::kArenaSizeAttr);
  if (!size)
    return failure();
  ArenaBytes bytes;
  bytes.arena = size.getInt();
  f.walk([&](Operation *op) {
    if (isa<rtir::ParamOp>(op))
      bytes.params +=
          rtir::byteSize(cast<ShapedType>(op->getResult(0).getType()));
    else if (isa<rtir::InputOp>(op))
      bytes.inputs +=
          rtir::byteSize(cast<ShapedType>(op->getResult(0).getType()));
    else if (auto k = dyn_cast<rtir::KernelOp>(op))
      if (k.getKind() == "cast" && k.getInputs().size() == 1 &&
          k.getInputs()[0].getDefiningOp<rtir::ParamOp>())
        bytes.workingCopies +=
            rtir::byteSize(cast<ShapedType>(k->getResult(0).getType()));
  });
  return bytes;
}

static llvm::json::Object toJson(const ArenaBytes &b) {
  return llvm::json::Object{{"arena_bytes", b.arena},
                            {"param_and_state_bytes", b.params},
                            {"input_bytes", b.inputs},
                            {"working_copy_bytes", b.workingCopies},
                            {"activation_bytes", b.activations()}};
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
  if (f32.activations() > 0)
    memory["activation_ratio"] =
        static_cast<double>(amp.activations()) / f32.activations();
  report["memory"] = std::move(memory);
  return AmpReport::write(report, path, error);
}

int reportMemory(ModuleOp f32, ModuleOp amp, StringRef name, StringRef path) {
  FailureOr<ArenaBytes> a = measureArena(f32, name);
  FailureOr<ArenaBytes> b = measureArena(amp, name);
  std::string error;
  if (failed(a) || failed(b))
    error = "the lowered @" + name.str() + " has no planned arena to measure";
  else if (succeeded(addMemoryToReport(path, *a, *b, error)))
    return 0;
  llvm::errs() << "amp-run: error: " << error << "\n";
  return 1;
}

} // namespace ampc::tools
