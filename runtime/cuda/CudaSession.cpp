//===- CudaSession.cpp - the GPU executor ---------------------------------===//
#include "runtime/cuda/CudaSession.h"

#include "runtime/ByteSize.h"
#include "runtime/Collective.h"
#include "runtime/cuda/Launch.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ampc::rt::cuda {
namespace {

constexpr size_t kConstantAlignment = 256;

// AMPC_CUDA_GRAPH: "0" or "off" turns CUDA graphs off whatever the
// session's options say (a test suite or a script run without them, no
// flag needed); "test-fallback" breaks the capture on purpose, so that the
// fallback to kernel by kernel can be tested on a GPU.
enum class GraphEnv { Default, Off, TestFallback };

GraphEnv graphEnv() {
  const char *e = std::getenv("AMPC_CUDA_GRAPH");
  if (!e)
    return GraphEnv::Default;
  if (!std::strcmp(e, "0") || !std::strcmp(e, "off"))
    return GraphEnv::Off;
  if (!std::strcmp(e, "test-fallback"))
    return GraphEnv::TestFallback;
  return GraphEnv::Default;
}

// "cuGraphInstantiate (CUDA_ERROR_INVALID_VALUE)".
std::string describeCall(const CudaApi &api, const char *call, CUresult r) {
  return std::string(call) + " (" + cuErrorName(api, r) + ")";
}

/// The one warning of a session that gives up CUDA graphs for good:
/// "<tool>: warning: <why>: running the step kernel by kernel".
void warnKernelByKernel(const std::string &why) {
  std::fprintf(stderr, "%s: warning: %s: running the step kernel by kernel\n",
               program_invocation_short_name, why.c_str());
}

// NCCL's rule, as the warnings of a fallback for another rank say it.
constexpr const char *kNcclGraphRule =
    "NCCL needs every rank's exchanges captured or none";

} // namespace

CudaSession::CudaSession(FunctionInfo fn, std::shared_ptr<CudaDevice> device)
    : Session(std::move(fn)), device_(std::move(device)) {}

CudaSession::~CudaSession() {
  if (!device_)
    return;
  const CudaApi &api = device_->api();
  // Closed on another thread than the steps ran on (a Python session
  // collected elsewhere), the driver calls below need the context.
  (void)device_->makeCurrent();
  // A step that exchanges may wait for a rank that died: its stream is
  // waited for as long as the collective's timeout, after which the
  // communicator has failed (the exchanges still queued are the
  // communicator's destructor's, below).
  if (nccl_ && !nccl_->failed())
    (void)sync("closing the session");
  // The graphs go before the communicator, which NCCL keeps until the
  // graphs that captured its exchanges are destroyed (one still running
  // is freed when it ends).
  if (graphExec_)
    api.cuGraphExecDestroy(graphExec_);
  if (graph_)
    api.cuGraphDestroy(graph_);
  // A failed communicator is aborted, which ends its kernels, so that the
  // wait below ends.
  if (nccl_ && nccl_->failed())
    nccl_->abort();
  // Nothing may still run on memory about to be freed: the step's stream
  // here, the exchange stream in the communicator's destructor, before
  // the buckets' buffers, the workspace and the arena.
  if (stream_)
    api.cuStreamSynchronize(stream_);
  nccl_.reset();
  launches_.clear();
  if (stream_)
    api.cuStreamDestroy(stream_);
}

TensorView CudaSession::view(int value) const {
  const ValueInfo &v = fn_.values[value];
  TensorView t;
  t.dtype = v.dtype;
  t.shape = v.shape;
  CUdeviceptr p = v.inArena ? arena_.get() + v.offset
                            : constants_.get() + constantOffset_[v.constant];
  t.data = reinterpret_cast<void *>(p);
  return t;
}

Status CudaSession::hostView(const TensorView &device, TensorView &host) const {
  AMPC_RETURN_IF_ERROR(sync("the non-finite probe"));
  probeScratch_.resize(device.byteSize());
  host = device;
  host.data = probeScratch_.data();
  if (!probeScratch_.empty())
    AMPC_CU_CHECK(device_->api(),
                  cuMemcpyDtoH(probeScratch_.data(), devicePtr(device),
                               probeScratch_.size()));
  return Status::ok();
}

std::string CudaSession::deviceName() const {
  return "cuda:" + std::to_string(device_->ordinal()) + " (" +
         device_->describe() + ")";
}

uint64_t CudaSession::deviceBytes() const {
  uint64_t n = arena_.size() + constants_.size() + staging_.size() +
               workspace_.size() + stepCounter_.size();
  for (const Launch &l : launches_)
    n += l.kernel->deviceBytes();
  return n;
}

Status CudaSession::create(FunctionInfo function, int ordinal,
                           const SessionOptions &options,
                           std::unique_ptr<Session> &out) {
  const std::string device = "cuda:" + std::to_string(ordinal);
  std::shared_ptr<CudaDevice> dev;
  AMPC_RETURN_IF_ERROR(CudaDevice::open(ordinal, dev)
                           .withContext("device '" + options.device + "'"));
  std::unique_ptr<CudaSession> s(new CudaSession(std::move(function), dev));
  GraphEnv env = graphEnv();
  s->useGraph_ = options.cudaGraph && env != GraphEnv::Off;
  s->breakCapture_ = env == GraphEnv::TestFallback;
  const FunctionInfo &fn = s->fn_;
  const CudaApi &api = dev->api();
  AMPC_RETURN_IF_ERROR(s->planUpdateCopies(s->updateCopies_, s->stagingBytes_));
  size_t constantBytes = 0;
  for (const std::string &c : fn.constants) {
    s->constantOffset_.push_back(constantBytes);
    constantBytes += alignUp(c.size(), kConstantAlignment);
  }
  // Arena sizes are at most 2^42 bytes (Program.cpp).
  const uint64_t arenaBytes =
      alignUp(std::max<int64_t>(fn.arenaSize, 1), kArenaAlignment);
  // Refuse before allocating what cannot fit (the kernels' workspace comes
  // later and is checked by its own allocation).
  uint64_t need = arenaBytes + constantBytes + s->stagingBytes_;
  uint64_t free = 0;
  AMPC_RETURN_IF_ERROR(dev->freeBytes(free));
  uint64_t room = options.memoryLimit
                      ? std::min<uint64_t>(
                            free, options.memoryLimit > dev->heldBytes()
                                      ? options.memoryLimit - dev->heldBytes()
                                      : 0)
                      : free;
  if (need > room)
    return Status::error(
        "arena of " + describeBytes(arenaBytes) + ", constants of " +
        describeBytes(constantBytes) +
        (s->stagingBytes_
             ? " and update staging of " + describeBytes(s->stagingBytes_)
             : std::string()) +
        " for function '" + fn.name + "' do not fit on " + device + " (" +
        dev->name() + "): " + describeBytes(room) +
        (options.memoryLimit ? " left under the session's memory limit"
                             : " free of " + describeBytes(dev->totalBytes())));
  AMPC_CU_CHECK(api, cuStreamCreate(&s->stream_, CU_STREAM_NON_BLOCKING));
  AMPC_RETURN_IF_ERROR(s->arena_.allocate(
      *dev, arenaBytes, "the arena of function '" + fn.name + "'"));
  // Zeroed so a kernel bug reading unwritten bytes is deterministic.
  AMPC_CU_CHECK(api,
                cuMemsetD8Async(s->arena_.get(), 0, arenaBytes, s->stream_));
  AMPC_RETURN_IF_ERROR(s->constants_.allocate(
      *dev, constantBytes, "the constants of function '" + fn.name + "'"));
  for (size_t i = 0; i < fn.constants.size(); ++i)
    if (!fn.constants[i].empty())
      AMPC_CU_CHECK(
          api, cuMemcpyHtoD(s->constants_.get() + s->constantOffset_[i],
                            fn.constants[i].data(), fn.constants[i].size()));
  if (s->stagingBytes_)
    AMPC_RETURN_IF_ERROR(s->staging_.allocate(
        *dev, s->stagingBytes_,
        "the parameter-update staging of function '" + fn.name + "'"));
  uint64_t zero = 0;
  AMPC_RETURN_IF_ERROR(
      s->stepCounter_.upload(*dev, &zero, sizeof(zero), "the step counter"));
  AMPC_RETURN_IF_ERROR(s->sync("clearing the arena"));
  for (BindingInfo &p : s->fn_.params) {
    if (!p.init.empty())
      AMPC_CU_CHECK(
          api, cuMemcpyHtoD(s->arena_.get() + s->fn_.values[p.value].offset,
                            p.init.data(), p.init.size()));
    std::string().swap(p.init); // the device holds the value now
  }
  AMPC_RETURN_IF_ERROR(s->joinExchanges(options));
  AMPC_RETURN_IF_ERROR(s->prepareKernels(options));
  out = std::move(s);
  return Status::ok();
}

Status CudaSession::joinExchanges(const SessionOptions &options) {
  // Gradient buckets and synchronised batch norm exchange over NCCL.
  bool exchanges = false;
  for (const KernelInfo &k : fn_.kernels)
    exchanges |=
        k.kind == "all_reduce_start" || k.attrs.find("sync_ranks") != nullptr;
  Collective *ranks = options.collective.get();
  // Without ranks the exchange kernels say what the launch lacks.
  if (!exchanges || !ranks || ranks->size() < 2)
    return Status::ok();
  // Everything that can fail on one rank alone happens before the others
  // wait for it; then rank 0 makes the communicator's id and the launch
  // hands it on.
  std::unique_ptr<NcclCommunicator> comm;
  AMPC_RETURN_IF_ERROR(NcclCommunicator::prepare(
      *device_, ranks->rank(), ranks->size(), ranks->timeoutSeconds(), comm));
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  if (ranks->rank() == 0)
    AMPC_RETURN_IF_ERROR(NcclCommunicator::uniqueId(id));
  AMPC_RETURN_IF_ERROR(ranks->broadcast(&id, sizeof id)
                           .withContext("the ranks' NCCL communicator"));
  AMPC_RETURN_IF_ERROR(comm->join(id));
  nccl_ = std::move(comm);
  ncclRanks_ = options.collective;
  return Status::ok();
}

Status CudaSession::prepareKernels(const SessionOptions &options) {
  AMPC_RETURN_IF_ERROR(buildCalls());
  const std::string where = "function '" + fn_.name + "': ";
  PrepareContext prep{*device_};
  prep.allowTf32 = options.allowTf32;
  prep.nccl = nccl_.get();
  for (size_t k = 0; k < calls_.size();) {
    const KernelEntry *e = findKernel(calls_[k].op);
    if (!e)
      return Status::error(where + fn_.kernels[k].describe(k) +
                           ": the CUDA backend has no kernel for op '" +
                           calls_[k].op + "'");
    std::vector<const ops::OpCall *> group{&calls_[k]};
    while (e->canGroup && k + group.size() < calls_.size() &&
           calls_[k + group.size()].op == calls_[k].op &&
           e->canGroup(calls_[k], calls_[k + group.size()]))
      group.push_back(&calls_[k + group.size()]);
    Launch l{nullptr, k, group.size()};
    std::string what = fn_.kernels[k].describe(k);
    if (group.size() > 1)
      what += " and the " + std::to_string(group.size() - 1) +
              " after it, as one launch";
    AMPC_RETURN_IF_ERROR(
        e->prepare(group, prep, l.kernel).withContext(where + what));
    launches_.push_back(std::move(l));
    k += group.size();
  }
  return workspace_.allocate(*device_, prep.workspaceBytes,
                             "the kernels' workspace of function '" + fn_.name +
                                 "'");
}

Status CudaSession::sync(const char *what) const {
  // A step that exchanges over NCCL waits for the other ranks, which may
  // have died: the communicator's wait gives up after the timeout.
  if (nccl_)
    return nccl_->waitFor(stream_, what);
  CUresult r = device_->api().cuStreamSynchronize(stream_);
  if (r != CUDA_SUCCESS)
    return cuError(device_->api(), r,
                   ("cuStreamSynchronize (" + std::string(what) +
                    ") after run " + std::to_string(runs_) + " of function '" +
                    fn_.name + "'")
                       .c_str());
  return Status::ok();
}

Status CudaSession::setInput(const std::string &name, const TensorView &value) {
  AMPC_RETURN_IF_ERROR(device_->makeCurrent());
  size_t i = 0;
  AMPC_RETURN_IF_ERROR(findInput(name, i));
  TensorView dst = view(fn_.inputs[i].value);
  if (value.dtype != dst.dtype || value.shape != dst.shape)
    return Status::error("input '" + name + "' must be " + dst.typeStr() +
                         ", got " + value.typeStr());
  // From pageable memory the copy is staged before the call returns, so
  // the caller may reuse its buffer; on the step's stream it cannot
  // overtake the previous run still reading these bytes.
  if (size_t bytes = dst.byteSize())
    AMPC_CU_CHECK(device_->api(), cuMemcpyHtoDAsync(devicePtr(dst), value.data,
                                                    bytes, stream_));
  inputSet_[i] = true;
  return Status::ok();
}

Status CudaSession::enqueueUpdateCopies() {
  const CudaApi &api = device_->api();
  for (const UpdateCopy &c : updateCopies_)
    if (c.staged) {
      TensorView src = view(fn_.params[c.param].update);
      AMPC_CU_CHECK(api,
                    cuMemcpyDtoDAsync(staging_.get() + c.stageOffset,
                                      devicePtr(src), src.byteSize(), stream_));
    }
  for (const UpdateCopy &c : updateCopies_) {
    const BindingInfo &p = fn_.params[c.param];
    TensorView dst = view(p.value), src = view(p.update);
    CUdeviceptr from =
        c.staged ? staging_.get() + c.stageOffset : devicePtr(src);
    if (dst.byteSize())
      AMPC_CU_CHECK(api, cuMemcpyDtoDAsync(devicePtr(dst), from, dst.byteSize(),
                                           stream_));
  }
  return Status::ok();
}

Status CudaSession::enqueueStep() {
  LaunchContext ctx{*device_, stream_, workspace_.get(), workspace_.size(),
                    stepCounter_.get()};
  for (Launch &l : launches_)
    if (Status st = l.kernel->launch(ctx); !st)
      return st.withContext("function '" + fn_.name +
                            "': " + fn_.kernels[l.first].describe(l.first));
  return enqueueUpdateCopies();
}

Status CudaSession::runProbed() {
  LaunchContext ctx{*device_, stream_, workspace_.get(), workspace_.size(),
                    stepCounter_.get()};
  for (Launch &l : launches_) {
    // A group launches as one: the probe looks at its calls together.
    std::vector<bool> inputsBad(l.count, false);
    bool probe = probing();
    for (size_t i = 0; probe && i < l.count; ++i)
      inputsBad[i] = inputsNonFinite(l.first + i, true);
    if (Status st = l.kernel->launch(ctx); !st)
      return st.withContext("function '" + fn_.name +
                            "': " + fn_.kernels[l.first].describe(l.first));
    AMPC_RETURN_IF_ERROR(sync(fn_.kernels[l.first].describe(l.first).c_str()));
    for (size_t i = 0; probe && i < l.count; ++i)
      probeOutputs(l.first + i, inputsBad[i]);
  }
  return enqueueUpdateCopies();
}

Status CudaSession::run() {
  nonFinite_.reset();
  if (nccl_ && nccl_->failed())
    return Status::error("function '" + fn_.name +
                         "': the ranks' NCCL communicator failed in an "
                         "earlier run (an exchange failed or did not end)");
  AMPC_RETURN_IF_ERROR(checkInputsSet());
  AMPC_RETURN_IF_ERROR(device_->makeCurrent());
  const CudaApi &api = device_->api();
  counterHost_ = runs_;
  AMPC_CU_CHECK(api, cuMemcpyHtoDAsync(stepCounter_.get(), &counterHost_,
                                       sizeof(counterHost_), stream_));
  if (probe_) {
    AMPC_RETURN_IF_ERROR(runProbed());
  } else if (graphExec_) {
    AMPC_CU_CHECK(api, cuGraphLaunch(graphExec_, stream_));
  } else if (runs_ > 0 && !captureTried_) {
    // The first run went kernel by kernel (libraries initialize lazily,
    // and a failing launch is named); from the second on, replay.
    captureTried_ = true;
    AMPC_RETURN_IF_ERROR(captureAndLaunch());
  } else {
    AMPC_RETURN_IF_ERROR(enqueueStep());
  }
  ++runs_;
  inputSet_.assign(inputSet_.size(), false);
  return Status::ok();
}

Status CudaSession::captureStep(std::string &failedAt) {
  const CudaApi &api = device_->api();
  CUresult r =
      api.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  if (r != CUDA_SUCCESS) {
    failedAt = describeCall(api, "cuStreamBeginCapture", r);
    return Status::ok();
  }
  // A synchronize is illegal in a capture: the driver refuses it and
  // invalidates the capture, as it would a library doing the same.
  if (breakCapture_)
    if (CUresult b = api.cuStreamSynchronize(stream_); b != CUDA_SUCCESS)
      failedAt = describeCall(api, "cuStreamSynchronize", b) +
                 " on purpose (AMPC_CUDA_GRAPH=test-fallback)";
  Status st = failedAt.empty() ? enqueueStep() : Status::ok();
  // Ended whatever happened, so the stream leaves capture mode; a capture
  // that was invalidated gives no graph.
  CUgraph graph = nullptr;
  CUresult end = api.cuStreamEndCapture(stream_, &graph);
  if (failedAt.empty() && !st)
    failedAt = st.message();
  else if (failedAt.empty() && end != CUDA_SUCCESS)
    failedAt = describeCall(api, "cuStreamEndCapture", end);
  if (!failedAt.empty()) {
    if (graph)
      api.cuGraphDestroy(graph);
  } else {
    graph_ = graph;
    if (r = api.cuGraphInstantiate(&graphExec_, graph_, 0); r != CUDA_SUCCESS) {
      graphExec_ = nullptr;
      failedAt = describeCall(api, "cuGraphInstantiate", r);
    }
  }
  // A query that fails (a sticky error) leaves the verdict to the
  // synchronize of the fallback.
  CUstreamCaptureStatus capturing = CU_STREAM_CAPTURE_STATUS_NONE;
  if (api.cuStreamIsCapturing(stream_, &capturing) == CUDA_SUCCESS &&
      capturing != CU_STREAM_CAPTURE_STATUS_NONE)
    return Status::error("the stream of function '" + fn_.name +
                         "' is still capturing after cuStreamEndCapture" +
                         (failedAt.empty() ? "" : " (" + failedAt + ")"));
  return Status::ok();
}

Status CudaSession::allRanks(bool &yes) {
  double count = yes ? 1 : 0;
  AMPC_RETURN_IF_ERROR(ncclRanks_->sumOverRanks(&count, 1).withContext(
      "function '" + fn_.name + "': the ranks agreeing on CUDA graphs"));
  yes = count == static_cast<double>(ncclRanks_->size());
  return Status::ok();
}

Status CudaSession::captureAndLaunch() {
  const CudaApi &api = device_->api();
  // NCCL's exchanges are captured on every rank or on none (NCCL's "Using
  // NCCL with CUDA Graphs"), capture included: a rank that captures or
  // replays while another launches kernel by kernel would hang in its
  // exchange or sum the wrong buffers. So the ranks agree twice, every
  // rank both times or none: before capturing (one with graphs off stops
  // all), and before launching (one whose capture failed stops all). A
  // capture records and runs nothing, so the second vote covers a failure
  // anywhere in it, unless an NCCL version works across ranks while
  // capturing; a rank whose capture errs (a stream left capturing) ends,
  // and its launch ends the others.
  bool allReplay = useGraph_;
  if (nccl_)
    AMPC_RETURN_IF_ERROR(allRanks(allReplay));
  if (!allReplay) {
    if (useGraph_)
      warnKernelByKernel("another rank runs function '" + fn_.name +
                         "' without CUDA graphs, and " + kNcclGraphRule);
    useGraph_ = false;
    return enqueueStep();
  }
  // The call that failed and its error; empty while all goes well.
  std::string failedAt;
  AMPC_RETURN_IF_ERROR(captureStep(failedAt));
  bool othersCannot = false;
  if (nccl_) {
    bool allCaptured = failedAt.empty();
    AMPC_RETURN_IF_ERROR(allRanks(allCaptured));
    othersCannot = failedAt.empty() && !allCaptured;
  }
  if (failedAt.empty() && !othersCannot) {
    CUresult r = api.cuGraphLaunch(graphExec_, stream_);
    if (r == CUDA_SUCCESS)
      return Status::ok();
    // The ranks agreed to replay: this one alone may not fall back.
    if (nccl_)
      return Status::error("function '" + fn_.name +
                           "': " + describeCall(api, "cuGraphLaunch", r) +
                           ", after the ranks agreed to replay their steps");
    failedAt = describeCall(api, "cuGraphLaunch", r);
  }
  if (graphExec_)
    api.cuGraphExecDestroy(graphExec_);
  if (graph_)
    api.cuGraphDestroy(graph_);
  graphExec_ = nullptr;
  graph_ = nullptr;
  useGraph_ = false;
  // A fault of an earlier kernel (CUDA_ERROR_ILLEGAL_ADDRESS) is sticky:
  // every call returns it, the capture's included. It fails the run here,
  // as it would have without graphs, rather than hide behind the fallback.
  AMPC_RETURN_IF_ERROR(sync(othersCannot ? "a CUDA graph another rank could "
                                           "not capture"
                                         : "a failed CUDA graph capture"));
  // Nothing of the step ran: a stream records, not runs, while capturing.
  // A launch that fails kernel by kernel too fails the run below.
  warnKernelByKernel(
      othersCannot ? "another rank could not capture function '" + fn_.name +
                         "' as a CUDA graph, and " + kNcclGraphRule
                   : "CUDA graph capture of function '" + fn_.name +
                         "' failed at " + failedAt);
  return enqueueStep();
}

Status CudaSession::readBack(const TensorView &deviceView,
                             const std::string &key, TensorView &out) const {
  AMPC_RETURN_IF_ERROR(device_->makeCurrent());
  AMPC_RETURN_IF_ERROR(sync(("reading '" + key + "'").c_str()));
  std::vector<uint8_t> &buf = host_[key];
  buf.resize(deviceView.byteSize());
  if (!buf.empty())
    AMPC_CU_CHECK(device_->api(),
                  cuMemcpyDtoH(buf.data(), devicePtr(deviceView), buf.size()));
  out = deviceView;
  out.data = buf.empty() ? nullptr : buf.data();
  return Status::ok();
}

Status CudaSession::output(const std::string &name, TensorView &out) const {
  for (const BindingInfo &b : fn_.outputs)
    if (b.name == name)
      return readBack(view(b.value), "output " + name, out);
  return Status::error("the model has no output '" + name + "'");
}

Status CudaSession::param(const std::string &name, TensorView &out) const {
  const BindingInfo *b = findParam(name);
  if (!b)
    return Status::error("the model has no parameter '" + name + "'");
  return readBack(view(b->value), "parameter " + name, out);
}

Status CudaSession::setParam(const std::string &name, const TensorView &value) {
  const BindingInfo *b = findParam(name);
  if (!b)
    return Status::error("the model has no parameter '" + name + "'");
  TensorView dst = view(b->value);
  if (value.dtype != dst.dtype || value.shape != dst.shape)
    return Status::error("parameter '" + name + "' must be " + dst.typeStr() +
                         ", got " + value.typeStr());
  AMPC_RETURN_IF_ERROR(device_->makeCurrent());
  AMPC_RETURN_IF_ERROR(sync(("writing parameter '" + name + "'").c_str()));
  if (size_t bytes = dst.byteSize())
    AMPC_CU_CHECK(device_->api(),
                  cuMemcpyHtoD(devicePtr(dst), value.data, bytes));
  return Status::ok();
}

} // namespace ampc::rt::cuda
