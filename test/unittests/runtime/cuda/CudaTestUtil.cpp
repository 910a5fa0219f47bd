//===- CudaTestUtil.cpp - running one op on the CPU and on CUDA -----------===//
#include "CudaTestUtil.h"

#include "runtime/TypedIO.h"
#include "runtime/cuda/CudaKernels.h"
#include "runtime/ops/Check.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <sstream>

namespace ampc::rt::cuda::test {

CudaDevice *testDevice(std::string *why) {
  static std::shared_ptr<CudaDevice> device;
  static Status status = CudaDevice::open(0, device);
  if (!status) {
    if (why)
      *why = status.message();
    return nullptr;
  }
  if (Status st = device->makeCurrent(); !st) {
    if (why)
      *why = st.message();
    return nullptr;
  }
  return device.get();
}

HostTensor HostTensor::absent() {
  HostTensor t;
  t.present = false;
  return t;
}

HostTensor HostTensor::empty(DType dtype, Shape shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.bytes.assign(t.numElements() * sizeOf(dtype), 0);
  return t;
}

TensorView HostTensor::view() const {
  TensorView v;
  v.dtype = dtype;
  v.shape = shape;
  v.data = bytes.empty() ? nullptr : const_cast<uint8_t *>(bytes.data());
  return v;
}

HostTensor HostTensor::fromValues(DType dtype, Shape shape,
                                  const std::vector<double> &values) {
  HostTensor t = empty(dtype, std::move(shape));
  EXPECT_EQ(static_cast<int64_t>(values.size()), t.numElements())
      << "fromValues: " << values.size() << " values for " << str(t.shape);
  if (static_cast<int64_t>(values.size()) == t.numElements() && !values.empty())
    storeF64(values.data(), t.numElements(), t.view(), 0);
  return t;
}

HostTensor HostTensor::random(DType dtype, Shape shape, uint64_t seed,
                              double lo, double hi) {
  int64_t n = rt::numElements(shape);
  std::mt19937_64 rng(seed);
  std::vector<double> v(n);
  if (isFloat(dtype)) {
    std::uniform_real_distribution<double> d(lo, hi);
    for (double &x : v)
      x = d(rng);
  } else if (dtype == DType::I1) {
    for (double &x : v)
      x = double(rng() & 1);
  } else {
    std::uniform_int_distribution<int64_t> d{static_cast<int64_t>(lo),
                                             static_cast<int64_t>(hi)};
    for (double &x : v)
      x = double(d(rng));
  }
  return fromValues(dtype, std::move(shape), v);
}

double HostTensor::at(int64_t i) const { return elementAsDouble(view(), i); }

namespace {

// Views of each case's tensors in one buffer, with in-place outputs
// sharing their input's bytes.
struct Layout {
  std::vector<size_t> inOffset, outOffset;
  size_t bytes = 0;
};

Layout layOut(const OpCase &c) {
  Layout l;
  // Each view c.misalign bytes past a 256-byte boundary.
  auto take = [&](size_t n) {
    size_t at = l.bytes + c.misalign;
    l.bytes += (c.misalign + n + 255) / 256 * 256;
    return at;
  };
  for (const HostTensor &t : c.inputs)
    l.inOffset.push_back(t.present ? take(t.bytes.size()) : 0);
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    int in = o < c.inPlace.size() ? c.inPlace[o] : -1;
    l.outOffset.push_back(in >= 0 ? l.inOffset[in]
                                  : take(c.outputs[o].numElements() *
                                         sizeOf(c.outputs[o].dtype)));
  }
  return l;
}

ops::OpCall makeCall(const OpCase &c, const Layout &l, uint8_t *base) {
  ops::OpCall call;
  call.op = c.op;
  call.attrs = &c.attrs;
  call.steps = &c.steps;
  call.rngCounter = c.rngCounter;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const HostTensor &t = c.inputs[i];
    call.present.push_back(t.present);
    TensorView v;
    if (t.present) {
      v.dtype = t.dtype;
      v.shape = t.shape;
      v.data = base + l.inOffset[i];
    }
    call.inputs.push_back(v);
  }
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    TensorView v;
    v.dtype = c.outputs[o].dtype;
    v.shape = c.outputs[o].shape;
    v.data = base + l.outOffset[o];
    call.outputs.push_back(v);
  }
  return call;
}

} // namespace

Status runCpu(const OpCase &c, std::vector<HostTensor> &outputs) {
  Layout l = layOut(c);
  std::vector<uint8_t> mem(std::max<size_t>(l.bytes, 1));
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (c.inputs[i].present && !c.inputs[i].bytes.empty())
      std::memcpy(mem.data() + l.inOffset[i], c.inputs[i].bytes.data(),
                  c.inputs[i].bytes.size());
  ops::OpCall call = makeCall(c, l, mem.data());
  AMPC_RETURN_IF_ERROR(ops::checkKernel(call));
  cpu::CpuContext ctx;
  AMPC_RETURN_IF_ERROR(cpu::runKernel(call, ctx));
  outputs.clear();
  for (size_t o = 0; o < c.outputs.size(); ++o) {
    HostTensor t = HostTensor::empty(c.outputs[o].dtype, c.outputs[o].shape);
    if (!t.bytes.empty())
      std::memcpy(t.bytes.data(), mem.data() + l.outOffset[o], t.bytes.size());
    outputs.push_back(std::move(t));
  }
  return Status::ok();
}

Status runCuda(CudaDevice &device, const std::vector<OpCase> &group,
               std::vector<std::vector<HostTensor>> &outputs, bool allowTf32) {
  const CudaApi &api = device.api();
  AMPC_RETURN_IF_ERROR(device.makeCurrent());
  if (group.empty())
    return Status::error("runCuda: an empty group");
  const KernelEntry *entry = findKernel(group[0].op);
  if (!entry)
    return Status::error("the CUDA backend has no kernel for op '" +
                         group[0].op + "'");
  std::vector<Layout> layouts;
  std::vector<DeviceBuffer> memory(group.size());
  std::vector<ops::OpCall> calls;
  for (size_t g = 0; g < group.size(); ++g) {
    const OpCase &c = group[g];
    layouts.push_back(layOut(c));
    AMPC_RETURN_IF_ERROR(
        memory[g].allocate(device, layouts[g].bytes, "the test's tensors"));
    for (size_t i = 0; i < c.inputs.size(); ++i)
      if (c.inputs[i].present && !c.inputs[i].bytes.empty())
        AMPC_CU_CHECK(api,
                      cuMemcpyHtoD(memory[g].get() + layouts[g].inOffset[i],
                                   c.inputs[i].bytes.data(),
                                   c.inputs[i].bytes.size()));
    calls.push_back(
        makeCall(c, layouts[g], reinterpret_cast<uint8_t *>(memory[g].get())));
    AMPC_RETURN_IF_ERROR(ops::checkKernel(calls.back()));
  }
  std::vector<const ops::OpCall *> ptrs;
  for (size_t g = 0; g < calls.size(); ++g) {
    if (g > 0 && (!entry->canGroup || !entry->canGroup(calls[0], calls[g])))
      return Status::error("op '" + group[0].op +
                           "': its canGroup refused call " + std::to_string(g));
    ptrs.push_back(&calls[g]);
  }
  PrepareContext prep{device};
  prep.allowTf32 = allowTf32;
  std::unique_ptr<PreparedKernel> kernel;
  AMPC_RETURN_IF_ERROR(entry->prepare(ptrs, prep, kernel));
  DeviceBuffer workspace, counter;
  AMPC_RETURN_IF_ERROR(
      workspace.allocate(device, prep.workspaceBytes, "the kernel workspace"));
  uint64_t step = group[0].rngCounter;
  AMPC_RETURN_IF_ERROR(
      counter.upload(device, &step, sizeof(step), "the step counter"));
  CUstream stream = nullptr;
  AMPC_CU_CHECK(api, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  LaunchContext ctx{device, stream, workspace.get(), prep.workspaceBytes,
                    counter.get()};
  Status st = kernel->launch(ctx);
  CUresult sync = api.cuStreamSynchronize(stream);
  api.cuStreamDestroy(stream);
  AMPC_RETURN_IF_ERROR(st);
  if (sync != CUDA_SUCCESS)
    return cuError(api, sync, "cuStreamSynchronize after the kernel");
  outputs.assign(group.size(), {});
  for (size_t g = 0; g < group.size(); ++g)
    for (size_t o = 0; o < group[g].outputs.size(); ++o) {
      HostTensor t = HostTensor::empty(group[g].outputs[o].dtype,
                                       group[g].outputs[o].shape);
      if (!t.bytes.empty())
        AMPC_CU_CHECK(api,
                      cuMemcpyDtoH(t.bytes.data(),
                                   memory[g].get() + layouts[g].outOffset[o],
                                   t.bytes.size()));
      outputs[g].push_back(std::move(t));
    }
  return Status::ok();
}

std::string caseLabel(const std::string &op, DType dtype, const Shape &shape) {
  return op + " " + std::string(name(dtype)) + " " + str(shape);
}

void expectClose(const HostTensor &expected, const HostTensor &actual,
                 Tolerance tol, const std::string &what) {
  ASSERT_EQ(expected.dtype, actual.dtype) << what;
  ASSERT_EQ(expected.shape, actual.shape) << what;
  double atol = tol.atol, rtol = tol.rtol;
  double dflt = 0;
  switch (expected.dtype) {
  case DType::F64:
    dflt = 1e-12;
    break;
  case DType::F32:
    dflt = 1e-5;
    break;
  case DType::F16:
    dflt = 2e-3;
    break;
  case DType::BF16:
    dflt = 1.6e-2;
    break;
  default:
    dflt = 0;
    break;
  }
  if (atol < 0)
    atol = dflt;
  if (rtol < 0)
    rtol = dflt;
  int shown = 0;
  int64_t bad = 0;
  std::ostringstream os;
  for (int64_t i = 0; i < expected.numElements(); ++i) {
    double e = expected.at(i), a = actual.at(i);
    bool ok;
    if (std::isnan(e) || std::isnan(a))
      ok = std::isnan(e) && std::isnan(a);
    else if (std::isinf(e) || std::isinf(a))
      ok = e == a;
    else
      ok = std::fabs(a - e) <= atol + rtol * std::fabs(e);
    if (ok)
      continue;
    ++bad;
    if (shown++ < 10)
      os << "\n  element " << i << ": cpu " << e << ", cuda " << a;
  }
  EXPECT_EQ(bad, 0) << what << " (" << expected.view().typeStr() << "): " << bad
                    << " elements differ beyond atol " << atol << ", rtol "
                    << rtol << os.str();
}

void expectCudaGroupMatchesCpu(const std::vector<OpCase> &group,
                               Tolerance tol) {
  CudaDevice *device = testDevice();
  ASSERT_NE(device, nullptr);
  std::vector<std::vector<HostTensor>> gpu;
  Status st = runCuda(*device, group, gpu);
  ASSERT_TRUE(st.isOk()) << "cuda: " << st.message();
  for (size_t g = 0; g < group.size(); ++g) {
    std::vector<HostTensor> cpu;
    Status cs = runCpu(group[g], cpu);
    ASSERT_TRUE(cs.isOk()) << "cpu: " << cs.message();
    for (size_t o = 0; o < cpu.size(); ++o)
      expectClose(cpu[o], gpu[g][o], tol,
                  "op '" + group[g].op + "' call " + std::to_string(g) +
                      " output " + std::to_string(o));
  }
}

void expectCudaMatchesCpu(const OpCase &c, Tolerance tol) {
  expectCudaGroupMatchesCpu({c}, tol);
}

} // namespace ampc::rt::cuda::test
