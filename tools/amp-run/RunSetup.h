//===- RunSetup.h - what amp-run and the Python module check and derive -===//
//
// The steps between options and a compiled training step that amp-run's
// main and the Python module (Api.h) both take, with amp-run's messages:
// the model's recipe, the checks between compile options, the device and
// its memory budget, the cosine schedule's length, and a checkpoint's
// configuration and its check on resume. Flags are named as amp-run spells
// them ("--accumulate"): the Python module's options carry the same names.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_RUNSETUP_H
#define AMPC_TOOLS_AMPRUN_RUNSETUP_H

#include "compiler/Import/Onnx/OnnxImporter.h"
#include "compiler/Pipelines/PipelineOptions.h"
#include "runtime/Program.h"
#include "runtime/Session.h"
#include "runtime/Status.h"
#include "runtime/io/TensorFile.h"
#include "runtime/tooling/Checkpoint.h"
#include "runtime/tooling/RunFlags.h"
#include "runtime/tooling/TrainData.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ampc::tools {

/// An MLIRContext with every dialect a model passes through loaded; an
/// error names its op and location without printing the op (a whole
/// function, weights and all, helps nobody).
std::unique_ptr<mlir::MLIRContext> createCompilerContext();

/// Options a model's metadata may set (`ampc.train.<option>`): the training
/// recipe, nothing that names files or changes what is run.
llvm::ArrayRef<llvm::StringLiteral> recipeOptions();

/// The recipe in the model's metadata as (option, value) pairs, in file
/// order; a key that names no recipe option is an error.
rt::Status readRecipe(llvm::StringRef modelBytes, const std::string &modelPath,
                      std::vector<std::pair<std::string, std::string>> &out);

/// Whether a recipe entry applies: the user did not give `option` (or, for
/// the run's length, either of --steps and --epochs), and it is no length
/// in epochs for synthetic data, which has none.
bool recipeApplies(llvm::StringRef option, const RunOptions &run,
                   bool optionGiven);

/// The checks of the training options' values (optimizer, schedule, loss
/// scaling, data parallelism) that the passes make, made before anything is
/// compiled and said by the flags' names.
rt::Status checkTrainOptions(const TrainPipelineOptions &o);

/// The message for a recipe entry whose value the option refuses.
std::string badRecipeValue(const std::string &modelPath,
                           const std::string &option, const std::string &value);

/// What a step computes in, as a run names it: "AMP O2 f16", or "f32"
/// without AMP (none, or O0).
std::string runLabel(const std::optional<AmpAutoCastPassOptions> &amp);

/// Refuses AMP options (`given`: the names of the AMP group's options
/// given; "amp" itself is allowed) while `level` is O0.
rt::Status checkAmpOptionsNeedAmp(AmpLevel level,
                                  const std::vector<std::string> &given);

/// Opens --device (a missing GPU is the one line a user sees), checks
/// --threads, and gives the memory budget a step must fit: the device's
/// memory unless --memory-budget says otherwise.
rt::Status openRunDevice(const RunOptions &run, uint64_t &budget);

/// ampc.step, which the schedule reads, counts updates. Only the cosine
/// schedule has a length; when --lr-total-steps is 0 it is the run's
/// updates (`steps` / --accumulate, rounded up), and the other schedules
/// keep the option's default, so that a run resumed with a longer --steps
/// compiles the same step.
void resolveScheduleLength(GraphBuildTrainingPassOptions &training,
                           int64_t steps);

/// Whether the run's length is stated: by --steps, or by file data
/// (`fileData`: --data DIR or fashion-mnist), whose --epochs (one unless
/// given) count its steps. Synthetic data alone has no length; the run
/// then takes one step.
bool runLengthKnown(const RunOptions &run, bool fileData);

/// Refuses a cosine schedule that nothing gives a length: no
/// --lr-total-steps, and no run length known (runLengthKnown). Compiled
/// so, it would decay over one update and train at its minimum rate ever
/// after. `fromRecipe`: the model's recipe chose the schedule.
rt::Status checkScheduleLength(const GraphBuildTrainingPassOptions &training,
                               bool lengthKnown, bool fromRecipe);

/// Makes --data synthetic's batches for `specs`, the label inputs drawn in
/// the class range of the loss they feed.
rt::Status openSyntheticData(const RunOptions &run, const rt::StepInfo &step,
                             std::vector<InputSpec> specs, FileData &data);

/// Checks `value`, fed to the model's input `name` of type `want`, and
/// `source` names it in messages ("--input x: 'x.npy'"): an f32 value
/// feeding a bf16 input (NumPy has no bfloat16) is rounded to nearest even
/// once into `converted`, which `value` then views; any other dtype, and
/// the shape, must be equal; every element must be finite (`samples`:
/// axis 0 counts samples in the message).
rt::Status checkFeedValue(const rt::TensorView &want, const std::string &name,
                          const std::string &source, bool samples,
                          rt::TensorView &value, rt::HostTensor &converted);

/// Copies of the step's model weights (StepInfo::weights, not its state),
/// in the session's parameter order: what --save-onnx writes.
rt::Status weightsOf(const rt::Session &session, const rt::StepInfo &step,
                     std::vector<rt::HostTensor> &out);

/// `t` as a graph input compiled as a constant (--bind), named `name`.
OnnxBoundInput boundInputOf(const std::string &name, const rt::HostTensor &t);

/// What a checkpoint must have been written with to be resumed: every
/// option of the compiled step as it resolved, what decides the data
/// order, and the compiled step's hash.
std::map<std::string, std::string>
checkpointConfig(const TrainPipelineOptions &flags,
                 const GraphBuildTrainingPassOptions &training,
                 const std::optional<AmpLossScalePassOptions> &lossScale,
                 const InferencePipelineOptions &lowering,
                 const RunOptions &run, bool shuffled, uint64_t programHash);

/// Sets --data-parallel to the `ranks` that `started` runs ("mpirun
/// started", "--nproc starts"), or refuses a --data-parallel given as
/// another count: amp-run's ranks and a Python program's.
rt::Status setDataParallelRanks(TrainPipelineOptions &flags, int64_t ranks,
                                const std::string &started);

/// The data-parallel exchange's flags (bucket size, overlap, wire type) as
/// `flags` set them: the ranks must share them (LoopOptions::rankConfig),
/// but checkpointConfig leaves them to the compiled step's hash.
std::map<std::string, std::string>
exchangeConfig(const TrainPipelineOptions &flags);

/// Checks that `ckpt`, read from `dir`, was written under `config`: the
/// first option that differs is named, a different compiled step is
/// refused. Data directories spelt differently (data, ./data/) match.
rt::Status checkResumable(const Checkpoint &ckpt,
                          const std::map<std::string, std::string> &config,
                          const std::string &dir);

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_RUNSETUP_H
