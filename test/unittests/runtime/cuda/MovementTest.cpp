//===- MovementTest.cpp - CUDA data movement ops against the CPU ----------===//
//
// Every op runtime/cuda/Movement.cpp registers, in every dtype it takes:
// shapes that take the 16-byte path, its scalar fallback (odd byte counts,
// unaligned concat offsets), the tiled transpose, ranks 1 to 5, size-1 and
// empty dims, negative slice steps and negative gather indices, and
// gather_grad with many repeated indices. An out-of-range gather index,
// which the CPU refuses, gives zeros on the GPU.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

namespace ampc::rt::cuda::test {
namespace {

const DType kAll[] = {DType::F32, DType::F16, DType::BF16, DType::F64,
                      DType::I64, DType::I32, DType::I1};
const DType kFloats[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

OpCase oneInput(const std::string &op, DType t, const Shape &in,
                const Shape &out, uint64_t seed) {
  OpCase c;
  c.op = op;
  c.inputs = {HostTensor::random(t, in, seed, -100, 100)};
  c.outputs = {HostTensor::empty(t, out)};
  return c;
}

TEST(CudaMovement, Copy) {
  AMPC_SKIP_WITHOUT_GPU();
  struct Case {
    Shape in, out;
  };
  for (Case k : {Case{{37}, {37}}, Case{{3, 5, 7}, {105}}, Case{{1}, {1}},
                 Case{{0}, {0}}, Case{{2, 0, 3}, {0, 6}}, Case{{4099}, {4099}},
                 Case{{64, 64}, {4096}}})
    for (DType t : kAll) {
      SCOPED_TRACE(caseLabel("copy", t, k.in));
      expectCudaMatchesCpu(oneInput("copy", t, k.in, k.out, 1));
    }
}

TEST(CudaMovement, BroadcastTo) {
  AMPC_SKIP_WITHOUT_GPU();
  struct Case {
    Shape in, out;
  };
  for (Case k : {Case{{3, 1}, {2, 3, 4}}, Case{{}, {5, 2}}, Case{{4}, {3, 4}},
                 Case{{2, 1, 3}, {2, 5, 3}}, Case{{1, 1}, {1, 1}},
                 Case{{300, 1}, {300, 257}}, Case{{1, 257}, {300, 257}},
                 Case{{0, 1}, {0, 3}}, Case{{2, 1, 3, 1, 8}, {2, 4, 3, 5, 8}}})
    for (DType t : kAll) {
      SCOPED_TRACE(caseLabel("broadcast_to", t, k.in) + " -> " + str(k.out));
      expectCudaMatchesCpu(oneInput("broadcast_to", t, k.in, k.out, 2));
    }
}

TEST(CudaMovement, Transpose) {
  AMPC_SKIP_WITHOUT_GPU();
  struct Case {
    Shape in;
    std::vector<int64_t> perm;
  };
  // 2-D and batched swaps big enough for the tiled kernel, swaps that keep
  // the last dim (vector path), a full reversal of rank 5, size-1 and
  // empty dims.
  for (const Case &k :
       {Case{{2, 3}, {1, 0}}, Case{{64, 33}, {1, 0}}, Case{{67, 45}, {1, 0}},
        Case{{5, 67, 45}, {0, 2, 1}}, Case{{3, 40, 17, 33}, {0, 1, 3, 2}},
        Case{{4, 5, 6}, {1, 0, 2}}, Case{{4, 5, 6}, {2, 0, 1}},
        Case{{2, 3, 4, 5, 6}, {4, 3, 2, 1, 0}}, Case{{3, 1, 5}, {2, 1, 0}},
        Case{{0, 3}, {1, 0}}, Case{{7}, {0}}, Case{{1}, {0}},
        Case{{33, 2, 40}, {2, 1, 0}}})
    for (DType t : kAll) {
      Shape out;
      for (int64_t p : k.perm)
        out.push_back(k.in[p]);
      SCOPED_TRACE(caseLabel("transpose", t, k.in) + " perm " + str(k.perm));
      OpCase c = oneInput("transpose", t, k.in, out, 3);
      c.attrs.setInts("perm", k.perm);
      expectCudaMatchesCpu(c);
    }
}

// More tiles of the output's second-last dim than grid.y's 65535: the
// tiled kernel loops over them (P = 65535 * 32 + 45, a partial last tile).
TEST(CudaMovement, TransposeMoreTilesThanGridY) {
  AMPC_SKIP_WITHOUT_GPU();
  const int64_t p = 65535 * 32 + 45, q = 17;
  OpCase c = oneInput("transpose", DType::F16, {q, p}, {p, q}, 4);
  c.attrs.setInts("perm", {1, 0});
  expectCudaMatchesCpu(c);
}

TEST(CudaMovement, Concat) {
  AMPC_SKIP_WITHOUT_GPU();
  struct Case {
    std::vector<Shape> ins;
    int64_t axis;
  };
  for (const Case &k :
       {Case{{{2, 3}, {4, 3}}, 0}, Case{{{2, 3}, {2, 5}, {2, 1}}, 1},
        Case{{{3, 7, 5}, {3, 0, 5}, {3, 2, 5}}, 1},
        Case{{{2, 3, 8}, {2, 3, 8}}, 2}, Case{{{5}, {11}, {1}}, 0},
        Case{{{1, 2, 3, 4, 5}, {1, 2, 3, 4, 3}}, 4},
        Case{{{300, 64}, {300, 64}}, 1}, Case{{{0, 4}, {0, 2}}, 1}})
    for (DType t : kAll) {
      OpCase c;
      c.op = "concat";
      c.attrs.setInt("axis", k.axis);
      Shape out = k.ins[0];
      out[k.axis] = 0;
      for (size_t i = 0; i < k.ins.size(); ++i) {
        c.inputs.push_back(HostTensor::random(t, k.ins[i], 10 + i, -50, 50));
        out[k.axis] += k.ins[i][k.axis];
      }
      c.outputs = {HostTensor::empty(t, out)};
      SCOPED_TRACE(caseLabel("concat", t, out) + " axis " +
                   std::to_string(k.axis));
      expectCudaMatchesCpu(c);
    }
}

struct SliceCase {
  Shape in;
  std::vector<int64_t> starts, ends, steps;
};

Shape sliceShape(const SliceCase &k) {
  Shape s;
  for (size_t i = 0; i < k.in.size(); ++i) {
    int64_t b = k.starts[i], e = k.ends[i], st = k.steps[i];
    s.push_back(st > 0 ? (e - b + st - 1) / st : (b - e - st - 1) / -st);
  }
  return s;
}

// Normalized slices (the compiler's form): step 1 and 2, reversed with
// step -1 and -3 (end -1 reaches index 0), empty results, ranks 1 to 5.
const SliceCase kSlices[] = {
    {{10}, {2}, {9}, {1}},
    {{10}, {9}, {-1}, {-1}},
    {{10}, {8}, {0}, {-3}},
    {{4, 37}, {1, 3}, {4, 36}, {1, 2}},
    {{4, 64}, {0, 0}, {4, 64}, {1, 1}},
    {{6, 8, 5}, {5, 1, 4}, {-1, 8, -1}, {-2, 3, -1}},
    {{6, 8, 5}, {2, 0, 0}, {2, 8, 5}, {1, 1, 1}},
    {{2, 3, 4, 5}, {1, 0, 1, 0}, {2, 3, 4, 5}, {1, 2, 1, 1}},
    {{2, 3, 4, 5, 6}, {0, 2, 3, 0, 1}, {2, -1, 0, 5, 6}, {1, -1, -1, 2, 4}},
    {{0, 5}, {0, 1}, {0, 4}, {1, 1}},
};

void setSliceAttrs(OpCase &c, const SliceCase &k) {
  c.attrs.setInts("starts", k.starts);
  c.attrs.setInts("ends", k.ends);
  c.attrs.setInts("steps", k.steps);
}

TEST(CudaMovement, Slice) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const SliceCase &k : kSlices)
    for (DType t : kAll) {
      SCOPED_TRACE(caseLabel("slice", t, k.in) + " starts " + str(k.starts) +
                   " ends " + str(k.ends) + " steps " + str(k.steps));
      OpCase c = oneInput("slice", t, k.in, sliceShape(k), 4);
      setSliceAttrs(c, k);
      expectCudaMatchesCpu(c);
    }
}

TEST(CudaMovement, SliceGrad) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const SliceCase &k : kSlices)
    for (DType t : kFloats) {
      SCOPED_TRACE(caseLabel("slice_grad", t, k.in) + " starts " +
                   str(k.starts) + " steps " + str(k.steps));
      OpCase c = oneInput("slice_grad", t, sliceShape(k), k.in, 5);
      setSliceAttrs(c, k);
      expectCudaMatchesCpu(c);
    }
}

struct GatherCase {
  Shape data, idx;
  int64_t axis;
};

// Index shapes of rank 0 to 2, axis first, middle and last, a row of 3
// bytes (scalar path) and of 64 floats (16-byte path).
const GatherCase kGathers[] = {
    {{10, 4}, {6}, 0},    {{10, 64}, {3, 5}, 0},  {{3, 7, 5}, {4}, 1},
    {{3, 7, 5}, {}, 1},   {{2, 3, 9}, {2, 2}, 2}, {{5, 3}, {0}, 0},
    {{50, 33}, {200}, 0}, {{7}, {7}, 0},
};

HostTensor indices(DType it, const Shape &shape, int64_t dim, uint64_t seed) {
  // Every index in [-dim, dim): negative ones count from the end.
  return HostTensor::random(it, shape, seed, -double(dim), double(dim - 1));
}

Shape gatherShape(const GatherCase &k) {
  Shape s(k.data.begin(), k.data.begin() + k.axis);
  s.insert(s.end(), k.idx.begin(), k.idx.end());
  s.insert(s.end(), k.data.begin() + k.axis + 1, k.data.end());
  return s;
}

TEST(CudaMovement, Gather) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const GatherCase &k : kGathers)
    for (DType it : {DType::I64, DType::I32})
      for (DType t : kAll) {
        SCOPED_TRACE(caseLabel("gather", t, k.data) + " indices " +
                     std::string(name(it)) + str(k.idx) + " axis " +
                     std::to_string(k.axis));
        OpCase c;
        c.op = "gather";
        c.attrs.setInt("axis", k.axis);
        c.inputs = {HostTensor::random(t, k.data, 6, -100, 100),
                    indices(it, k.idx, k.data[k.axis], 7)};
        c.outputs = {HostTensor::empty(t, gatherShape(k))};
        expectCudaMatchesCpu(c);
      }
}

// The CPU refuses an index outside [-dim, dim); a captured GPU step cannot
// fail, so such an index gathers zeros and the other rows are unaffected.
TEST(CudaMovement, GatherOutOfRangeGivesZeros) {
  AMPC_SKIP_WITHOUT_GPU();
  OpCase c;
  c.op = "gather";
  c.attrs.setInt("axis", 0);
  c.inputs = {HostTensor::fromValues(DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6}),
              HostTensor::fromValues(DType::I64, {4}, {2, 3, -4, -1})};
  c.outputs = {HostTensor::empty(DType::F32, {4, 2})};
  std::vector<std::vector<HostTensor>> out;
  ASSERT_TRUE(runCuda(*testDevice(), {c}, out));
  HostTensor want =
      HostTensor::fromValues(DType::F32, {4, 2}, {5, 6, 0, 0, 0, 0, 5, 6});
  expectClose(want, out[0][0], {0, 0}, "gather with indices 3 and -4 of 3");
}

TEST(CudaMovement, GatherGrad) {
  AMPC_SKIP_WITHOUT_GPU();
  // Few distinct rows for many indices: every row sums a long bucket
  // (buckets longer than sqrt(count) are ordered by the compaction path).
  const GatherCase cases[] = {
      {{10, 4}, {6}, 0},     {{10, 64}, {3, 5}, 0},  {{3, 7, 5}, {40}, 1},
      {{3, 7, 5}, {}, 1},    {{2, 3, 9}, {2, 2}, 2}, {{5, 3}, {0}, 0},
      {{50, 33}, {2000}, 0}, {{2, 1000}, {300}, 0},  {{4, 3, 2, 6}, {9}, 2},
      {{3, 8}, {3000}, 0},
  };
  for (const GatherCase &k : cases)
    for (DType it : {DType::I64, DType::I32})
      for (DType t : kFloats) {
        SCOPED_TRACE(caseLabel("gather_grad", t, k.data) + " indices " +
                     std::string(name(it)) + str(k.idx) + " axis " +
                     std::to_string(k.axis));
        OpCase c;
        c.op = "gather_grad";
        c.attrs.setInt("axis", k.axis);
        c.inputs = {HostTensor::random(t, gatherShape(k), 8),
                    indices(it, k.idx, k.data[k.axis], 9)};
        c.outputs = {HostTensor::empty(t, k.data)};
        // Each row adds its grads in index order, as the CPU does.
        expectCudaMatchesCpu(c, {0, 0});
      }
}

TEST(CudaMovement, Dropout) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats)
    for (double ratio : {0.0, 0.3, 0.9, 1.0})
      for (int64_t training : {0, 1})
        for (uint64_t step : {0, 7})
          for (const Shape &s : {Shape{37}, Shape{3, 5, 67}, Shape{0}}) {
            SCOPED_TRACE(caseLabel("dropout", t, s) + " ratio " +
                         std::to_string(ratio) + " training " +
                         std::to_string(training) + " step " +
                         std::to_string(step));
            OpCase c;
            c.op = "dropout";
            c.attrs.setFloat("ratio", ratio);
            c.attrs.setInt("training", training);
            c.attrs.setInt("seed", 1234);
            c.rngCounter = step;
            c.inputs = {HostTensor::random(t, s, 11, -4, 4)};
            c.outputs = {HostTensor::empty(t, s),
                         HostTensor::empty(DType::I1, s)};
            expectCudaMatchesCpu(c);
          }
}

} // namespace
} // namespace ampc::rt::cuda::test
