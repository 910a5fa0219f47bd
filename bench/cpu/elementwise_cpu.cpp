//===- elementwise_cpu.cpp - every elementwise CPU kernel, timed ----------===//
//
// Times the CPU kernel of every op of runtime/ops/Elementwise.def (its
// default attributes; clip's bounds -1 and 1) on one f32 tensor, on the calling
// thread, and prints per op the median time per element and a hash of the
// output's bits. The inputs are normal random values with +-0, +-inf, NaN and
// subnormals mixed in, so two builds that print the same hashes computed the
// same bits. Then the cast kernel between f32 and bf16/f16, both ways (the
// 16-bit inputs rounded by the scalar reference of runtime/Half.h).
//
// usage: ampc-elementwise-bench [ELEMENTS] [REPEATS]   (default 4194304 15)
//
//===----------------------------------------------------------------------===//
#include "runtime/Half.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/ops/Check.h"
#include "runtime/ops/ElementwisePlan.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace ampc::rt;

namespace {

std::vector<float> inputs(int64_t n, uint32_t seed, float lo) {
  std::vector<float> v(static_cast<size_t>(n));
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0, 2);
  for (float &x : v)
    x = std::max(d(rng), lo);
  const float inf = std::numeric_limits<float>::infinity();
  const float special[] = {0.0f,   -0.0f,   inf,  -inf, std::nanf(""),
                           1e-40f, -1e-40f, 3.0f, -3.0f};
  for (int64_t i = seed % 97; i < n; i += 97)
    v[i] = std::max(special[(i / 97) % 9], lo);
  return v;
}

uint64_t hashBytes(const void *data, size_t size) {
  uint64_t h = 14695981039346656037ull; // FNV-1a offset basis
  const auto *bytes = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i)
    h = (h ^ bytes[i]) * 1099511628211ull; // FNV-1a
  return h;
}

uint64_t hashBits(const std::vector<float> &v) {
  return hashBytes(v.data(), v.size() * sizeof(float));
}

/// Times one kernel call on the calling thread; the median ns per element.
double medianNs(const ops::OpCall &call, int repeats, int64_t n) {
  cpu::CpuContext ctx; // no pool: the calling thread
  std::vector<double> ns;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    Status s = cpu::runKernel(call, ctx);
    auto t1 = std::chrono::steady_clock::now();
    if (!s) {
      std::fprintf(stderr, "%s: %s\n", call.op.c_str(), s.message().c_str());
      std::exit(1);
    }
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
  }
  std::sort(ns.begin(), ns.end());
  return ns[ns.size() / 2] / static_cast<double>(n);
}

/// The cast kernel between f32 and each 16-bit type, both ways: the
/// conversions every low-precision kernel of the CPU backend makes.
void timeCasts(const std::vector<float> &a, int repeats) {
  const int64_t n = static_cast<int64_t>(a.size());
  const Shape shape{n};
  std::vector<uint16_t> half(a.size()), low(a.size());
  std::vector<float> wide(a.size());
  for (auto [dtype, name] :
       {std::pair{DType::BF16, "bf16"}, std::pair{DType::F16, "f16"}}) {
    for (size_t i = 0; i < a.size(); ++i) // the scalar reference rounding
      half[i] = dtype == DType::BF16 ? floatToBFloatBits(a[i])
                                     : floatToHalfBits(a[i]);
    Attrs attrs;
    ops::OpCall narrow;
    narrow.op = "cast";
    narrow.attrs = &attrs;
    narrow.inputs.push_back(
        TensorView{DType::F32, shape, const_cast<float *>(a.data())});
    narrow.outputs.push_back(TensorView{dtype, shape, low.data()});
    narrow.present.assign(1, true);
    ops::OpCall widen = narrow;
    widen.inputs[0] = TensorView{dtype, shape, half.data()};
    widen.outputs[0] = TensorView{DType::F32, shape, wide.data()};
    for (const ops::OpCall *call : {&narrow, &widen}) {
      if (Status s = ops::checkKernel(*call); !s) {
        std::fprintf(stderr, "cast: %s\n", s.message().c_str());
        std::exit(1);
      }
      double ns = medianNs(*call, repeats, n);
      bool toLow = call == &narrow;
      std::string label = toLow ? std::string("cast f32->") + name
                                : std::string("cast ") + name + "->f32";
      std::printf(
          "%-18s %10.3f  %016llx\n", label.c_str(), ns,
          static_cast<unsigned long long>(
              toLow ? hashBytes(low.data(), low.size() * 2) : hashBits(wide)));
    }
  }
}

} // namespace

int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : int64_t(1) << 22;
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 15;
  if (n < 1 || repeats < 1) {
    std::fprintf(stderr, "usage: %s [ELEMENTS >= 1] [REPEATS >= 1]\n", argv[0]);
    return 2;
  }
  const std::vector<float> a = inputs(n, 1, -INFINITY),
                           b = inputs(n, 2, -INFINITY);
  // log, sqrt and pow read positive inputs where it matters: the time of a
  // NaN-only run would say little.
  const std::vector<float> pos = inputs(n, 3, 1e-3f);
  std::vector<uint8_t> cond(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    cond[i] = (i * 2654435761u >> 7) & 1;
  std::vector<float> y(static_cast<size_t>(n));
  const Shape shape{n};
  std::printf("%-18s %10s  %s\n", "op", "ns/elem", "output bits (hash)");
  for (const ops::ew::OpInfo &op : ops::ew::allOps()) {
    if (op.kind == ops::ew::Kind::Cast || ops::ew::isPredicate(op.sig))
      continue; // a dtype change, or an i1 result: timed by the models
    const bool positive = op.kind == ops::ew::Kind::Log ||
                          op.kind == ops::ew::Kind::Sqrt ||
                          op.kind == ops::ew::Kind::Pow;
    const float *first = positive ? pos.data() : a.data();
    ops::OpCall call;
    call.op = op.name;
    Attrs attrs;
    // clip and clip_grad with both bounds (ReLU6-like), not the identity.
    if (op.kind == ops::ew::Kind::Clip || op.kind == ops::ew::Kind::ClipGrad) {
      attrs.setFloat("min", -1);
      attrs.setFloat("max", 1);
    }
    // ONNX's defaults, which the compiler writes (the runtime keeps none):
    // the values the hashes of earlier builds were taken with.
    attrs.setString("approximate", "none");
    if (op.kind == ops::ew::Kind::HardSigmoid ||
        op.kind == ops::ew::Kind::HardSigmoidGrad) {
      attrs.setFloat("alpha", 0.2);
      attrs.setFloat("beta", 0.5);
    } else {
      attrs.setFloat("alpha", 0.01);
    }
    call.attrs = &attrs;
    if (op.sig == ops::ew::Sig::Where)
      call.inputs.push_back(TensorView{DType::I1, shape, cond.data()});
    call.inputs.push_back(
        TensorView{DType::F32, shape, const_cast<float *>(first)});
    for (int k = static_cast<int>(call.inputs.size());
         k < ops::ew::arity(op.sig); ++k)
      call.inputs.push_back(
          TensorView{DType::F32, shape, const_cast<float *>(b.data())});
    call.present.assign(call.inputs.size(), true);
    call.outputs.push_back(TensorView{DType::F32, shape, y.data()});
    if (Status s = ops::checkKernel(call); !s) {
      std::fprintf(stderr, "%s: %s\n", op.name, s.message().c_str());
      return 1;
    }
    std::printf("%-18s %10.3f  %016llx\n", op.name, medianNs(call, repeats, n),
                static_cast<unsigned long long>(hashBits(y)));
  }
  timeCasts(a, repeats);
  return 0;
}
