//===- CudnnConvolution.cpp - conv2d and its gradients through cuDNN ------===//
//
// conv2d (with its optional bias), conv2d_backward_data and
// conv2d_backward_filter with the semantics of the CPU backend's
// Contraction.cpp / ConvolutionGrad.cpp (NCHW input, OIHW filter, groups,
// strides, dilations, cross-correlation), through cuDNN's legacy API.
// Descriptors are built and the algorithm chosen once, at prepare time:
// cuDNN's heuristics (the *_v7 queries), the first algorithm whose
// workspace fits kMaxConvWorkspace, a deterministic one preferred so that
// a step gives the same bits every run. f16/bf16 run on Tensor Cores with
// f32 accumulation; f32 uses TF32 Tensor Cores only when the session
// allows it (CUDNN_FMA_MATH otherwise: cuDNN's default math would allow
// TF32); f64 computes in f64.
//
// cuDNN pads both ends of a dimension by the same amount. Pads that differ
// at the two ends but give the same windows as symmetric begin padding
// (the same output size) run directly; otherwise the input is copied into
// a zero-padded buffer in the workspace (kernels/Convolution.cu) and the
// convolution runs unpadded, the data gradient being cropped back.
//
// The bias is added by cudnnAddTensor after the convolution result is
// stored, so an f16/bf16 output is rounded twice (the CPU rounds once):
// at most one unit in the last place apart.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudnnFamily.h"
#include "runtime/cuda/Launch.h"
#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/WindowGeometry.h"

#include <climits>

namespace ampc::rt::cuda {
namespace {

// The most workspace one convolution's algorithm may use.
constexpr size_t kMaxConvWorkspace = size_t(256) << 20;

enum class ConvKind { Forward, BackwardData, BackwardFilter };

const char *opName(ConvKind k) {
  switch (k) {
  case ConvKind::Forward:
    return "conv2d";
  case ConvKind::BackwardData:
    return "conv2d_backward_data";
  case ConvKind::BackwardFilter:
    return "conv2d_backward_filter";
  }
  return "?";
}

Status toInt(int64_t v, const char *op, const char *what, int &out) {
  if (v < INT_MIN || v > INT_MAX)
    return Status::error(std::string(op) + ": " + what + " " +
                         std::to_string(v) +
                         " does not fit cuDNN's 32-bit descriptors");
  out = static_cast<int>(v);
  return Status::ok();
}

Status cudnnTypes(DType t, const char *op, cudnnDataType_t &data,
                  cudnnDataType_t &compute) {
  switch (t) {
  case DType::F32:
    data = compute = CUDNN_DATA_FLOAT;
    return Status::ok();
  case DType::F16:
    data = CUDNN_DATA_HALF;
    compute = CUDNN_DATA_FLOAT;
    return Status::ok();
  case DType::BF16:
    data = CUDNN_DATA_BFLOAT16;
    compute = CUDNN_DATA_FLOAT;
    return Status::ok();
  case DType::F64:
    data = compute = CUDNN_DATA_DOUBLE;
    return Status::ok();
  default:
    return Status::error(std::string(op) + ": cuDNN has no convolution of " +
                         std::string(name(t)) + " tensors");
  }
}

// The first result that succeeded, fits the workspace limit and (for f32
// without TF32) does not use Tensor Cores; deterministic ones first.
template <typename Perf>
bool pickAlgorithm(const Perf *perf, int count, bool noTensorOps,
                   Perf &chosen) {
  for (int pass = 0; pass < 2; ++pass)
    for (int i = 0; i < count; ++i) {
      const Perf &p = perf[i];
      if (p.status != CUDNN_STATUS_SUCCESS || p.memory > kMaxConvWorkspace)
        continue;
      if (noTensorOps && (p.mathType == CUDNN_TENSOR_OP_MATH ||
                          p.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION))
        continue;
      if (pass == 0 && p.determinism != CUDNN_DETERMINISTIC)
        continue;
      chosen = p;
      return true;
    }
  return false;
}

class ConvKernel final : public PreparedKernel {
public:
  ~ConvKernel() override {
    if (!api_)
      return;
    // Destroying a descriptor only frees host memory; nothing to report.
    if (imageDesc_)
      (void)api_->cudnnDestroyTensorDescriptor(imageDesc_);
    if (responseDesc_)
      (void)api_->cudnnDestroyTensorDescriptor(responseDesc_);
    if (biasDesc_)
      (void)api_->cudnnDestroyTensorDescriptor(biasDesc_);
    if (filterDesc_)
      (void)api_->cudnnDestroyFilterDescriptor(filterDesc_);
    if (convDesc_)
      (void)api_->cudnnDestroyConvolutionDescriptor(convDesc_);
  }

  static Status prepare(const std::vector<const ops::OpCall *> &calls,
                        PrepareContext &ctx,
                        std::unique_ptr<PreparedKernel> &out, ConvKind kind) {
    auto k = std::make_unique<ConvKernel>();
    AMPC_RETURN_IF_ERROR(k->init(*calls.front(), ctx, kind));
    out = std::move(k);
    return Status::ok();
  }

  Status launch(const LaunchContext &ctx) override;

private:
  enum class Mode { Nothing, Zero, Cudnn };

  Status init(const ops::OpCall &call, PrepareContext &ctx, ConvKind kind);
  Status buildDescriptors(const ops::ConvPlan &p, int64_t padBottom,
                          int64_t padRight, PrepareContext &ctx);
  Status chooseAlgorithm();
  Status addBias();

  const CudaApi *api_ = nullptr;
  cudnnHandle_t handle_ = nullptr;
  ConvKind kind_ = ConvKind::Forward;
  const char *op_ = "";
  Mode mode_ = Mode::Nothing;
  DType dtype_ = DType::F32;
  // The conv2d input (or its gradient), the filter (or its gradient), the
  // conv2d output (or its gradient), and the optional bias.
  TensorView image_, filter_, response_, bias_;
  bool hasBias_ = false;
  cudnnTensorDescriptor_t imageDesc_ = nullptr, responseDesc_ = nullptr,
                          biasDesc_ = nullptr;
  cudnnFilterDescriptor_t filterDesc_ = nullptr;
  cudnnConvolutionDescriptor_t convDesc_ = nullptr;
  cudnnDataType_t dataType_ = CUDNN_DATA_FLOAT, computeType_ = CUDNN_DATA_FLOAT;
  bool noTensorOps_ = false;
  cudnnConvolutionFwdAlgo_t fwdAlgo_{};
  cudnnConvolutionBwdDataAlgo_t dataAlgo_{};
  cudnnConvolutionBwdFilterAlgo_t filterAlgo_{};
  size_t algoBytes_ = 0;
  // Explicit padding: the padded image lives at the workspace's start.
  bool padded_ = false;
  int64_t planes_ = 0, h_ = 0, w_ = 0, hp_ = 0, wp_ = 0, pt_ = 0, pl_ = 0;
  size_t padBytes_ = 0;
  CUfunction padFn_ = nullptr, cropFn_ = nullptr;
  LaunchDims padDims_, cropDims_;
  float oneF_ = 1.f, zeroF_ = 0.f;
  double oneD_ = 1.0, zeroD_ = 0.0;
};

Status ConvKernel::init(const ops::OpCall &call, PrepareContext &ctx,
                        ConvKind kind) {
  kind_ = kind;
  op_ = opName(kind);
  api_ = &ctx.device.api();
  ops::ConvPlan p;
  switch (kind) {
  case ConvKind::Forward:
    image_ = call.inputs[0];
    filter_ = call.inputs[1];
    response_ = call.outputs[0];
    hasBias_ = ops::hasInput(call, 2);
    if (hasBias_)
      bias_ = call.inputs[2];
    break;
  case ConvKind::BackwardData:
    response_ = call.inputs[0];
    filter_ = call.inputs[1];
    image_ = call.outputs[0];
    break;
  case ConvKind::BackwardFilter:
    response_ = call.inputs[0];
    image_ = call.inputs[1];
    filter_ = call.outputs[0];
    break;
  }
  AMPC_RETURN_IF_ERROR(
      ops::planConv(*call.attrs, image_.shape, filter_.shape, p)
          .withContext(op_));
  dtype_ = call.inputs[0].dtype;
  AMPC_RETURN_IF_ERROR(cudnnTypes(dtype_, op_, dataType_, computeType_));
  noTensorOps_ = dtype_ == DType::F32 && !ctx.allowTf32;
  const TensorView &result = call.outputs[0];
  if (result.numElements() == 0) {
    mode_ = Mode::Nothing;
    return Status::ok();
  }
  // cuDNN is loaded here, at the first convolution with something to
  // compute; without it this is the prepare's one error.
  AMPC_RETURN_IF_ERROR(ctx.device.cudnn(handle_).withContext(op_));
  // With an empty operand the result is a sum over nothing: zeros (plus
  // the bias); cuDNN's descriptors take no zero sizes.
  bool emptyOperand = image_.numElements() == 0 || filter_.numElements() == 0 ||
                      response_.numElements() == 0;
  mode_ = emptyOperand ? Mode::Zero : Mode::Cudnn;
  std::vector<int64_t> pads;
  AMPC_RETURN_IF_ERROR(
      ops::getInts(*call.attrs, "pads", pads).withContext(op_));
  return buildDescriptors(p, pads[2], pads[3], ctx);
}

// A window of `span` taps moved by `stride` over `in` padded by `pad` at
// both ends gives cuDNN's output size; 0 when no window fits.
int64_t symmetricOutput(int64_t in, int64_t pad, int64_t span, int64_t stride) {
  int64_t padded = in + 2 * pad;
  return padded < span ? 0 : (padded - span) / stride + 1;
}

Status ConvKernel::buildDescriptors(const ops::ConvPlan &p, int64_t padBottom,
                                    int64_t padRight, PrepareContext &ctx) {
  const CudaApi &api = *api_;
  int n, c, o, cg, kh, kw, oh, ow;
  AMPC_RETURN_IF_ERROR(toInt(p.n, op_, "batch size", n));
  AMPC_RETURN_IF_ERROR(toInt(p.c, op_, "channel count", c));
  AMPC_RETURN_IF_ERROR(toInt(p.o, op_, "output channel count", o));
  AMPC_RETURN_IF_ERROR(toInt(p.cg, op_, "channels per group", cg));
  AMPC_RETURN_IF_ERROR(toInt(p.kh, op_, "kernel height", kh));
  AMPC_RETURN_IF_ERROR(toInt(p.kw, op_, "kernel width", kw));
  AMPC_RETURN_IF_ERROR(toInt(p.oh, op_, "output height", oh));
  AMPC_RETURN_IF_ERROR(toInt(p.ow, op_, "output width", ow));

  // In Zero mode only conv2d's output (not empty) and bias are described.
  if (mode_ == Mode::Cudnn || hasBias_) {
    AMPC_CUDNN_CHECK(api, cudnnCreateTensorDescriptor(&responseDesc_));
    AMPC_CUDNN_CHECK(api, cudnnSetTensor4dDescriptor(responseDesc_,
                                                     CUDNN_TENSOR_NCHW,
                                                     dataType_, n, o, oh, ow));
  }
  if (hasBias_) {
    AMPC_CUDNN_CHECK(api, cudnnCreateTensorDescriptor(&biasDesc_));
    AMPC_CUDNN_CHECK(api,
                     cudnnSetTensor4dDescriptor(biasDesc_, CUDNN_TENSOR_NCHW,
                                                dataType_, 1, o, 1, 1));
  }
  if (mode_ != Mode::Cudnn)
    return Status::ok();

  // Symmetric begin padding reads exactly our windows when it gives our
  // output size (extra end padding is then never read, or reads zeros
  // either way).
  int64_t spanH = p.dh * (p.kh - 1) + 1, spanW = p.dw * (p.kw - 1) + 1;
  padded_ = !(p.pt == padBottom && p.pl == padRight) &&
            (symmetricOutput(p.h, p.pt, spanH, p.sh) != p.oh ||
             symmetricOutput(p.w, p.pl, spanW, p.sw) != p.ow);
  int64_t imgH = p.h, imgW = p.w, padH = p.pt, padW = p.pl;
  if (padded_) {
    planes_ = p.n * p.c;
    h_ = p.h;
    w_ = p.w;
    pt_ = p.pt;
    pl_ = p.pl;
    hp_ = imgH = p.h + p.pt + padBottom;
    wp_ = imgW = p.w + p.pl + padRight;
    padH = padW = 0;
    size_t elem = sizeOf(dtype_);
    padBytes_ = alignUp(static_cast<size_t>(planes_ * hp_ * wp_) * elem);
    const char *suffix = elem == 2 ? "b2" : elem == 4 ? "b4" : "b8";
    if (kind_ == ConvKind::BackwardData) {
      AMPC_RETURN_IF_ERROR(
          kernelFunction(ctx.device, CudaKernel::ConvCrop, {suffix}, cropFn_)
              .withContext(op_));
      cropDims_ = gridFor(ctx.device, planes_ * h_ * w_);
    } else {
      AMPC_RETURN_IF_ERROR(
          kernelFunction(ctx.device, CudaKernel::ConvPad, {suffix}, padFn_)
              .withContext(op_));
      padDims_ = gridFor(ctx.device, planes_ * hp_ * wp_);
    }
  }
  int h, w, ph, pw, sh, sw, dh, dw, group;
  AMPC_RETURN_IF_ERROR(toInt(imgH, op_, "input height", h));
  AMPC_RETURN_IF_ERROR(toInt(imgW, op_, "input width", w));
  AMPC_RETURN_IF_ERROR(toInt(padH, op_, "pad", ph));
  AMPC_RETURN_IF_ERROR(toInt(padW, op_, "pad", pw));
  AMPC_RETURN_IF_ERROR(toInt(p.sh, op_, "stride", sh));
  AMPC_RETURN_IF_ERROR(toInt(p.sw, op_, "stride", sw));
  AMPC_RETURN_IF_ERROR(toInt(p.dh, op_, "dilation", dh));
  AMPC_RETURN_IF_ERROR(toInt(p.dw, op_, "dilation", dw));
  AMPC_RETURN_IF_ERROR(toInt(p.group, op_, "group", group));

  AMPC_CUDNN_CHECK(api, cudnnCreateTensorDescriptor(&imageDesc_));
  AMPC_CUDNN_CHECK(api,
                   cudnnSetTensor4dDescriptor(imageDesc_, CUDNN_TENSOR_NCHW,
                                              dataType_, n, c, h, w));
  AMPC_CUDNN_CHECK(api, cudnnCreateFilterDescriptor(&filterDesc_));
  AMPC_CUDNN_CHECK(api, cudnnSetFilter4dDescriptor(filterDesc_, dataType_,
                                                   CUDNN_TENSOR_NCHW, o, cg, kh,
                                                   kw));
  AMPC_CUDNN_CHECK(api, cudnnCreateConvolutionDescriptor(&convDesc_));
  AMPC_CUDNN_CHECK(api, cudnnSetConvolution2dDescriptor(
                            convDesc_, ph, pw, sh, sw, dh, dw,
                            CUDNN_CROSS_CORRELATION, computeType_));
  AMPC_CUDNN_CHECK(api, cudnnSetConvolutionGroupCount(convDesc_, group));
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  if (dtype_ == DType::F16 || dtype_ == DType::BF16)
    math = CUDNN_TENSOR_OP_MATH;
  else if (noTensorOps_)
    math = CUDNN_FMA_MATH;
  AMPC_CUDNN_CHECK(api, cudnnSetConvolutionMathType(convDesc_, math));
  AMPC_RETURN_IF_ERROR(chooseAlgorithm());
  ctx.requestWorkspace(padBytes_ + algoBytes_);
  return Status::ok();
}

Status ConvKernel::chooseAlgorithm() {
  const CudaApi &api = *api_;
  int returned = 0;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
  size_t bytes = 0;
  auto noAlgorithm = [&] {
    return Status::error(
        std::string(op_) +
        ": cuDNN offers no algorithm for this convolution within " +
        std::to_string(kMaxConvWorkspace >> 20) + " MiB of workspace" +
        (noTensorOps_ ? " without TF32 Tensor Cores" : ""));
  };
  switch (kind_) {
  case ConvKind::Forward: {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT],
        chosen;
    AMPC_CUDNN_CHECK(api, cudnnGetConvolutionForwardAlgorithm_v7(
                              handle_, imageDesc_, filterDesc_, convDesc_,
                              responseDesc_, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                              &returned, perf));
    if (!pickAlgorithm(perf, returned, noTensorOps_, chosen))
      return noAlgorithm();
    fwdAlgo_ = chosen.algo;
    math = chosen.mathType;
    bytes = chosen.memory;
    break;
  }
  case ConvKind::BackwardData: {
    cudnnConvolutionBwdDataAlgoPerf_t
        perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT],
        chosen;
    AMPC_CUDNN_CHECK(api, cudnnGetConvolutionBackwardDataAlgorithm_v7(
                              handle_, filterDesc_, responseDesc_, convDesc_,
                              imageDesc_, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                              &returned, perf));
    if (!pickAlgorithm(perf, returned, noTensorOps_, chosen))
      return noAlgorithm();
    dataAlgo_ = chosen.algo;
    math = chosen.mathType;
    bytes = chosen.memory;
    break;
  }
  case ConvKind::BackwardFilter: {
    cudnnConvolutionBwdFilterAlgoPerf_t
        perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT],
        chosen;
    AMPC_CUDNN_CHECK(
        api, cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                 handle_, imageDesc_, responseDesc_, convDesc_, filterDesc_,
                 CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, perf));
    if (!pickAlgorithm(perf, returned, noTensorOps_, chosen))
      return noAlgorithm();
    filterAlgo_ = chosen.algo;
    math = chosen.mathType;
    bytes = chosen.memory;
    break;
  }
  }
  // Run the algorithm with the math it was rated with, except that f32
  // without TF32 stays on FMA math.
  if (!noTensorOps_)
    AMPC_CUDNN_CHECK(api, cudnnSetConvolutionMathType(convDesc_, math));
  // The size for the math type now set (it can differ from the rating's).
  size_t exact = 0;
  switch (kind_) {
  case ConvKind::Forward:
    AMPC_CUDNN_CHECK(api, cudnnGetConvolutionForwardWorkspaceSize(
                              handle_, imageDesc_, filterDesc_, convDesc_,
                              responseDesc_, fwdAlgo_, &exact));
    break;
  case ConvKind::BackwardData:
    AMPC_CUDNN_CHECK(api, cudnnGetConvolutionBackwardDataWorkspaceSize(
                              handle_, filterDesc_, responseDesc_, convDesc_,
                              imageDesc_, dataAlgo_, &exact));
    break;
  case ConvKind::BackwardFilter:
    AMPC_CUDNN_CHECK(api, cudnnGetConvolutionBackwardFilterWorkspaceSize(
                              handle_, imageDesc_, responseDesc_, convDesc_,
                              filterDesc_, filterAlgo_, &exact));
    break;
  }
  algoBytes_ = alignUp(std::max(bytes, exact));
  return Status::ok();
}

Status ConvKernel::addBias() {
  const void *one = dtype_ == DType::F64 ? static_cast<const void *>(&oneD_)
                                         : static_cast<const void *>(&oneF_);
  AMPC_CUDNN_CHECK(*api_, cudnnAddTensor(handle_, one, biasDesc_, bias_.data,
                                         one, responseDesc_, response_.data));
  return Status::ok();
}

Status ConvKernel::launch(const LaunchContext &ctx) {
  if (mode_ == Mode::Nothing)
    return Status::ok();
  const CudaApi &api = *api_;
  AMPC_CUDNN_CHECK(api, cudnnSetStream(handle_, ctx.stream));
  if (mode_ == Mode::Zero) {
    const TensorView &result = kind_ == ConvKind::Forward        ? response_
                               : kind_ == ConvKind::BackwardData ? image_
                                                                 : filter_;
    AMPC_CU_CHECK(api, cuMemsetD8Async(devicePtr(result), 0, result.byteSize(),
                                       ctx.stream));
    return hasBias_ ? addBias() : Status::ok();
  }
  size_t need = padBytes_ + algoBytes_;
  if (ctx.workspaceBytes < need)
    return Status::error(std::string(op_) + ": the workspace has " +
                         std::to_string(ctx.workspaceBytes) +
                         " bytes, the convolution needs " +
                         std::to_string(need));
  const bool f64 = dtype_ == DType::F64;
  const void *one = f64 ? static_cast<const void *>(&oneD_)
                        : static_cast<const void *>(&oneF_);
  const void *zero = f64 ? static_cast<const void *>(&zeroD_)
                         : static_cast<const void *>(&zeroF_);
  void *algoWs = reinterpret_cast<void *>(ctx.workspace + padBytes_);
  // The image cuDNN sees: the tensor itself, or its padded copy.
  void *image = image_.data;
  if (padded_) {
    CUdeviceptr padded = ctx.workspace;
    image = reinterpret_cast<void *>(padded);
    if (kind_ != ConvKind::BackwardData) {
      CUdeviceptr src = devicePtr(image_);
      void *args[] = {&src, &padded, &planes_, &h_, &w_,
                      &hp_, &wp_,    &pt_,     &pl_};
      AMPC_RETURN_IF_ERROR(launchKernel(ctx, padFn_, padDims_, args, op_));
    }
  }
  switch (kind_) {
  case ConvKind::Forward:
    AMPC_CUDNN_CHECK(api, cudnnConvolutionForward(
                              handle_, one, imageDesc_, image, filterDesc_,
                              filter_.data, convDesc_, fwdAlgo_, algoWs,
                              algoBytes_, zero, responseDesc_, response_.data));
    return hasBias_ ? addBias() : Status::ok();
  case ConvKind::BackwardData: {
    AMPC_CUDNN_CHECK(api,
                     cudnnConvolutionBackwardData(
                         handle_, one, filterDesc_, filter_.data, responseDesc_,
                         response_.data, convDesc_, dataAlgo_, algoWs,
                         algoBytes_, zero, imageDesc_, image));
    if (!padded_)
      return Status::ok();
    CUdeviceptr padded = ctx.workspace, dst = devicePtr(image_);
    void *args[] = {&padded, &dst, &planes_, &h_, &w_, &hp_, &wp_, &pt_, &pl_};
    return launchKernel(ctx, cropFn_, cropDims_, args, op_);
  }
  case ConvKind::BackwardFilter:
    AMPC_CUDNN_CHECK(api, cudnnConvolutionBackwardFilter(
                              handle_, one, imageDesc_, image, responseDesc_,
                              response_.data, convDesc_, filterAlgo_, algoWs,
                              algoBytes_, zero, filterDesc_, filter_.data));
    return Status::ok();
  }
  return Status::ok();
}

template <ConvKind K>
Status prepareConv(const std::vector<const ops::OpCall *> &calls,
                   PrepareContext &ctx, std::unique_ptr<PreparedKernel> &out) {
  return ConvKernel::prepare(calls, ctx, out, K);
}

} // namespace

void addCudnnConvolutionKernels(std::vector<KernelEntry> &out) {
  out.push_back({"conv2d", prepareConv<ConvKind::Forward>});
  out.push_back({"conv2d_backward_data", prepareConv<ConvKind::BackwardData>});
  out.push_back({"conv_transpose2d", prepareConv<ConvKind::BackwardData>});
  out.push_back(
      {"conv2d_backward_filter", prepareConv<ConvKind::BackwardFilter>});
}

void addCudnnKernels(std::vector<KernelEntry> &out) {
  addCudnnConvolutionKernels(out);
  addBatchNormKernels(out);
  addPoolingKernels(out);
}

} // namespace ampc::rt::cuda
