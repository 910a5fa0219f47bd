//===- PipelineOptions.h - the options of the two pipelines -----*- C++ -*-===//
//
// Each option of the two pipelines is declared once, here, as an MLIR
// pipeline option named as amp-run's flag: amp-opt takes them
// (`--ampc-train="amp=O2 lr=0.1"`), amp-run registers the same objects as
// its flags (exposeAsFlags), and a checkpoint records their values
// (values). A default is the pass's own (Passes.td), read from its options
// struct, except where the pipeline means something else by an option left
// out (no AMP, the run's length for a cosine schedule).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_PIPELINES_PIPELINEOPTIONS_H
#define AMPC_COMPILER_PIPELINES_PIPELINEOPTIONS_H

#include "compiler/Conversion/Passes.h"
#include "compiler/Pipelines/Pipelines.h"

#include "mlir/Pass/PassOptions.h"
#include "llvm/Support/CommandLine.h"

#include <functional>
#include <map>
#include <optional>
#include <string>

namespace ampc {

/// Where a pipeline option belongs, for a tool's help.
enum class PipelineOptionGroup { Amp, LossScaling, Training, Lowering };

/// The help category of a group ("Automatic mixed precision
/// (amp-auto-cast)", ...); a tool may list its own options there too.
llvm::cl::OptionCategory &pipelineCategory(PipelineOptionGroup group);

/// The options both pipelines take: AMP and lowering. `Derived` is the
/// pipeline's options struct (MLIR's PassPipelineOptions is a CRTP base).
template <typename Derived>
struct CompileOptions : mlir::PassPipelineOptions<Derived> {
  template <typename T>
  using Option =
      typename mlir::PassPipelineOptions<Derived>::template Option<T>;
  template <typename T>
  using ListOption =
      typename mlir::PassPipelineOptions<Derived>::template ListOption<T>;

  Option<AmpLevel> amp{
      *this, "amp",
      llvm::cl::desc("AMP level: O0 (none), O1 (lists), O2 (all but the deny "
                     "list), O3 (all)"),
      llvm::cl::init(AmpLevel::O0),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Amp))};
  Option<AmpDtype> ampDtype{
      *this, "amp-dtype", llvm::cl::desc("Low-precision type: f16 | bf16"),
      llvm::cl::init(AmpAutoCastPassOptions().dtype),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Amp))};
  ListOption<std::string> ampAllow{
      *this, "amp-allow",
      llvm::cl::desc("Graph ops to move to the allow list ('-op' takes one off "
                     "it)"),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Amp))};
  ListOption<std::string> ampDeny{
      *this, "amp-deny", llvm::cl::desc("Graph ops to move to the deny list"),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Amp))};
  ListOption<std::string> ampInfer{
      *this, "amp-infer", llvm::cl::desc("Graph ops to move to the infer list"),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Amp))};
  ListOption<std::string> ampClear{
      *this, "amp-clear", llvm::cl::desc("Graph ops to move to the clear list"),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Amp))};
  ListOption<std::string> ampFp32Nodes{
      *this, "amp-fp32-nodes",
      llvm::cl::desc("ONNX nodes (by name) forced to f32"),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Amp))};
  ListOption<std::string> ampLowNodes{
      *this, "amp-low-nodes",
      llvm::cl::desc("ONNX nodes (by name) forced to low precision"),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Amp))};
  Option<bool> ampMasterWeights{
      *this, "amp-master-weights",
      llvm::cl::desc("O3: keep f32 master weights (O1 and O2 always do)"),
      llvm::cl::init(AmpAutoCastPassOptions().masterWeights),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Amp))};

  Option<bool> noFuse{
      *this, "no-fuse",
      llvm::cl::desc("Do not fuse elementwise chains or GEMM epilogues"),
      llvm::cl::init(!ConvertGraphToRtPassOptions().fuse),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Lowering))};
  Option<bool> noMemoryReuse{
      *this, "no-memory-reuse",
      llvm::cl::desc("Give every value its own arena bytes"),
      llvm::cl::init(!ConvertGraphToRtPassOptions().reuseMemory),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Lowering))};

  /// amp-auto-cast's options; none at O0 unless a decision report is to be
  /// written to `report` (the pass then only reports).
  std::optional<AmpAutoCastPassOptions>
  autoCastOptions(const std::string &report = "") const;
  /// convert-graph-to-rt's options; `memoryBudget` in bytes (0: none).
  InferencePipelineOptions loweringOptions(uint64_t memoryBudget = 0) const;

  /// Registers every option as a flag of the tool (llvm::cl's top level),
  /// in its group's category, with its default appended to its help. Call
  /// once, before llvm::cl parses.
  void exposeAsFlags();

  /// Every option's value as a flag would give it ("--lr" -> "0.02"): what
  /// a checkpoint records, so a resume with another value names the flag.
  std::map<std::string, std::string> values() const;

  /// The flag names given (on the command line, in a pipeline string, or
  /// added as occurrences).
  bool given(llvm::StringRef name) const;
  /// The names of the options of `group` that were given, in name order.
  std::vector<std::string> givenIn(PipelineOptionGroup group) const;
  /// Whether an option is named `name` ("amp-dtype").
  bool has(llvm::StringRef name) const;
  /// Every option's name.
  std::vector<std::string> names() const;
  /// Sets option `name` from `text` as a pipeline string would ("bf16";
  /// a list comma-separated) and records it as given. The error says what
  /// is wrong with the value.
  mlir::LogicalResult set(llvm::StringRef name, llvm::StringRef text,
                          std::string &error);

private:
  std::vector<std::string> helpTexts_;
};

/// ampc-infer: AMP and lowering.
struct InferPipelineOptions : CompileOptions<InferPipelineOptions> {};

/// ampc-train: the above, graph-build-training's and amp-loss-scale's.
struct TrainPipelineOptions : CompileOptions<TrainPipelineOptions> {
  Option<std::string> loss{
      *this, "loss",
      llvm::cl::desc("The output to minimize (empty: the output named 'loss', "
                     "or the only scalar output)"),
      llvm::cl::init(GraphBuildTrainingPassOptions().loss),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<std::string> optimizer{
      *this, "optimizer",
      llvm::cl::desc("sgd | momentum | nesterov | adam | adamw | adagrad"),
      llvm::cl::init(GraphBuildTrainingPassOptions().optimizer),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<double> lr{
      *this, "lr", llvm::cl::desc("Learning rate"),
      llvm::cl::init(GraphBuildTrainingPassOptions().lr),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<double> momentum{
      *this, "momentum", llvm::cl::desc("Momentum factor"),
      llvm::cl::init(GraphBuildTrainingPassOptions().momentum),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<double> dampening{
      *this, "dampening", llvm::cl::desc("Momentum dampening"),
      llvm::cl::init(GraphBuildTrainingPassOptions().dampening),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<double> beta1{
      *this, "beta1", llvm::cl::desc("Adam beta1"),
      llvm::cl::init(GraphBuildTrainingPassOptions().beta1),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<double> beta2{
      *this, "beta2", llvm::cl::desc("Adam beta2"),
      llvm::cl::init(GraphBuildTrainingPassOptions().beta2),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<OptionalNumber> epsilon{
      *this, "epsilon",
      llvm::cl::desc("Adam/Adagrad epsilon ('default': PyTorch's, 1e-8 for "
                     "Adam and AdamW, 1e-10 for Adagrad)"),
      llvm::cl::init(GraphBuildTrainingPassOptions().epsilon),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<OptionalNumber> weightDecay{
      *this, "weight-decay",
      llvm::cl::desc("Weight decay (AdamW: decoupled; 'default': PyTorch's, "
                     "0.01 for AdamW, 0 otherwise)"),
      llvm::cl::init(GraphBuildTrainingPassOptions().weightDecay),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<double> lrDecay{
      *this, "lr-decay", llvm::cl::desc("Adagrad learning-rate decay"),
      llvm::cl::init(GraphBuildTrainingPassOptions().lrDecay),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<std::string> lrSchedule{
      *this, "lr-schedule", llvm::cl::desc("constant | step | cosine"),
      llvm::cl::init(GraphBuildTrainingPassOptions().lrSchedule),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<int64_t> lrStepSize{
      *this, "lr-step-size",
      llvm::cl::desc("step schedule: updates between decays"),
      llvm::cl::init(GraphBuildTrainingPassOptions().lrStepSize),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<double> lrGamma{
      *this, "lr-gamma", llvm::cl::desc("step schedule: decay factor"),
      llvm::cl::init(GraphBuildTrainingPassOptions().lrGamma),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<int64_t> lrTotalSteps{
      *this, "lr-total-steps",
      llvm::cl::desc("cosine schedule: updates to reach --lr-min (0: the "
                     "run's updates in amp-run; the pass's default in "
                     "amp-opt)"),
      llvm::cl::init(0),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<double> lrMin{
      *this, "lr-min", llvm::cl::desc("cosine schedule: final lr"),
      llvm::cl::init(GraphBuildTrainingPassOptions().lrMin),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<int64_t> accumulate{
      *this, "accumulate",
      llvm::cl::desc("Micro-batches per update: each step adds its gradients "
                     "and every N-th updates with their mean (one unscale and "
                     "one overflow check per update)"),
      llvm::cl::init(GraphBuildTrainingPassOptions().accumulate),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  ListOption<std::string> freeze{
      *this, "freeze",
      llvm::cl::desc("Parameters to leave untrained (initializer names)"),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};

  Option<LossScaleMode> lossScale{
      *this, "loss-scale",
      llvm::cl::desc("none | static | dynamic | auto (dynamic when the step "
                     "computes in f16, none otherwise)"),
      llvm::cl::init(AmpLossScalePassOptions().mode),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::LossScaling))};
  Option<double> initScale{
      *this, "init-scale", llvm::cl::desc("First loss scale"),
      llvm::cl::init(AmpLossScalePassOptions().initScale),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::LossScaling))};
  Option<double> scaleGrowth{
      *this, "scale-growth", llvm::cl::desc("Growth factor of the scale"),
      llvm::cl::init(AmpLossScalePassOptions().scaleGrowth),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::LossScaling))};
  Option<double> scaleBackoff{
      *this, "scale-backoff", llvm::cl::desc("Backoff factor of the scale"),
      llvm::cl::init(AmpLossScalePassOptions().scaleBackoff),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::LossScaling))};
  Option<int64_t> growthInterval{
      *this, "growth-interval",
      llvm::cl::desc("Clean steps in a row before the scale grows"),
      llvm::cl::init(AmpLossScalePassOptions().growthInterval),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::LossScaling))};
  Option<int64_t> decrEveryN{
      *this, "decr-every-n",
      llvm::cl::desc("Overflowing steps in a row before the scale backs off "
                     "(Paddle's decr_every_n_nan_or_inf)"),
      llvm::cl::init(AmpLossScalePassOptions().decrEveryN),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::LossScaling))};
  Option<double> minScale{
      *this, "min-scale",
      llvm::cl::desc(
          "Lower bound of the scale (the smallest normal f32: none)"),
      llvm::cl::init(AmpLossScalePassOptions().minScale),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::LossScaling))};
  Option<double> maxScale{
      *this, "max-scale",
      llvm::cl::desc("Upper bound of the scale (the largest f32: none)"),
      llvm::cl::init(AmpLossScalePassOptions().maxScale),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::LossScaling))};

  /// graph-build-training's options; lr-total-steps 0 stays 0 (the caller
  /// knows the run's length).
  GraphBuildTrainingPassOptions trainingOptions() const;
  /// amp-loss-scale's options: with AMP (an --amp level above O0), or when
  /// any of its options is given (then, without AMP, `auto` means
  /// dynamic); otherwise none. (Not whether amp-auto-cast runs: it also
  /// runs at O0 to write --amp-report, on rank 0 alone.)
  std::optional<AmpLossScalePassOptions> lossScaleOptions() const;

  Option<int64_t> dataParallel{
      *this, "data-parallel",
      llvm::cl::desc("Ranks whose gradients each update averages "
                     "(graph-data-parallel; amp-run under mpirun takes the "
                     "launch's)"),
      llvm::cl::init(GraphDataParallelPassOptions().worldSize),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<double> bucketMb{
      *this, "bucket-mb",
      llvm::cl::desc("Data parallelism: the most gradient MiB one all-reduce "
                     "takes"),
      llvm::cl::init(GraphDataParallelPassOptions().bucketMb),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<bool> syncBatchNorm{
      *this, "sync-batch-norm",
      llvm::cl::desc("Data parallelism: batch norm statistics over every "
                     "rank's batch (PyTorch's SyncBatchNorm; false: each "
                     "rank's own, as DDP)"),
      llvm::cl::init(GraphDataParallelPassOptions().syncBatchNorm),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<bool> lowPrecisionExchange{
      *this, "low-precision-exchange",
      llvm::cl::desc("Data parallelism: exchange f16/bf16 gradients in "
                     "their own type, half the bytes (false: as f32)"),
      llvm::cl::init(GraphDataParallelPassOptions().lowPrecisionExchange),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  Option<bool> overlapExchange{
      *this, "overlap-exchange",
      llvm::cl::desc("Data parallelism: run each bucket's all-reduce behind "
                     "the backward work that follows it (false: wait for it "
                     "at once)"),
      llvm::cl::init(GraphDataParallelPassOptions().overlap),
      llvm::cl::cat(pipelineCategory(PipelineOptionGroup::Training))};
  /// graph-data-parallel's options.
  GraphDataParallelPassOptions dataParallelOptions() const;
};

} // namespace ampc

#endif // AMPC_COMPILER_PIPELINES_PIPELINEOPTIONS_H
