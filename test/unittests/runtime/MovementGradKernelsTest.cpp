//===- MovementGradKernelsTest.cpp - slice_grad and gather_grad -----------===//
//
// Both kernels against finite differences of the forward slice and gather
// in f64 over hand-picked and seeded random shapes (negative steps, empty
// slices, repeated and negative indices, every axis); f32/f16/bf16 runs
// against the f64 run on the same stored values; bad indices and check()
// errors.
//
//===----------------------------------------------------------------------===//
#include "GradCheckUtil.h"

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

//===----------------------------------------------------------------------===//
// slice_grad
//===----------------------------------------------------------------------===//

struct SliceCase {
  Shape data;
  std::vector<int64_t> starts, ends, steps; // normalized, as GraphOps.td says

  Shape sliced() const {
    Shape s;
    for (size_t i = 0; i < data.size(); ++i)
      s.push_back(steps[i] > 0
                      ? (ends[i] - starts[i] + steps[i] - 1) / steps[i]
                      : (starts[i] - ends[i] - steps[i] - 1) / -steps[i]);
    return s;
  }
  std::string str() const {
    return "slice of " + ampc::rt::str(data) + " starts" +
           ampc::rt::str(starts) + " ends" + ampc::rt::str(ends) + " steps" +
           ampc::rt::str(steps);
  }
  Call call(const std::string &op, Buf *in, Buf *out) const {
    Call c{op, {}, {in}, {out}};
    c.attrs.setInts("starts", starts);
    c.attrs.setInts("ends", ends);
    c.attrs.setInts("steps", steps);
    return c;
  }
};

std::vector<SliceCase> sliceCases() {
  std::vector<SliceCase> cases = {
      // mixed positive and negative steps
      {{4, 5, 6}, {1, 4, 0}, {4, -1, 6}, {2, -2, 3}},
      // full reverse
      {{7}, {6}, {-1}, {-1}},
      // empty along one dimension
      {{3, 4}, {0, 2}, {3, 2}, {1, 1}},
      // the whole tensor
      {{2, 3}, {0, 0}, {2, 3}, {1, 1}},
      // rank 0
      {{}, {}, {}, {}},
  };
  std::mt19937 rng(17);
  for (int i = 0; i < 20; ++i) {
    SliceCase sc;
    int rank = randInt(rng, 1, 4);
    for (int d = 0; d < rank; ++d) {
      int size = randInt(rng, 1, 5), step = randInt(rng, 1, 3);
      sc.data.push_back(size);
      if (randInt(rng, 0, 1)) {
        int s = randInt(rng, 0, size);
        sc.starts.push_back(s);
        sc.ends.push_back(randInt(rng, s, size));
        sc.steps.push_back(step);
      } else {
        int s = randInt(rng, 0, size - 1);
        sc.starts.push_back(s);
        sc.ends.push_back(randInt(rng, -1, s));
        sc.steps.push_back(-step);
      }
    }
    cases.push_back(sc);
  }
  return cases;
}

TEST(SliceGrad, MatchesFiniteDifferencesOfSlice) {
  uint32_t seed = 1;
  bool threaded = false;
  for (const SliceCase &sc : sliceCases()) {
    Buf x = randomBuf(DType::F64, sc.data, seed++);
    Buf dy = randomBuf(DType::F64, sc.sliced(), seed++);
    Buf y(DType::F64, sc.sliced());
    std::vector<double> num = numericGrad(sc.call("slice", &x, &y), x, dy);
    // Garbage in the output first: every element must be written.
    Buf dx = randomBuf(DType::F64, sc.data, seed++, 5, 6);
    Status s =
        sc.call("slice_grad", &dy, &dx).run(threaded ? &testPool() : nullptr);
    threaded = !threaded;
    ASSERT_TRUE(s.isOk()) << sc.str() << ": " << s.message();
    expectMatchesNumeric(dx, num, sc.str());
  }
}

class SliceGradDTypeTest : public ::testing::TestWithParam<DType> {};

// Moving values is exact in every dtype.
TEST_P(SliceGradDTypeTest, EqualsTheF64Result) {
  DType t = GetParam();
  uint32_t seed = 40;
  for (const SliceCase &sc : sliceCases()) {
    Buf dy = randomBuf(t, sc.sliced(), seed++);
    Buf dy64 = asF64(dy);
    Buf dx = randomBuf(t, sc.data, seed++, 5, 6), dx64(DType::F64, sc.data);
    ASSERT_TRUE(sc.call("slice_grad", &dy, &dx).run(&testPool()).isOk());
    ASSERT_TRUE(sc.call("slice_grad", &dy64, &dx64).run().isOk());
    EXPECT_EQ(dx.values(), dx64.values()) << sc.str();
  }
}

INSTANTIATE_TEST_SUITE_P(LowFloats, SliceGradDTypeTest,
                         ::testing::ValuesIn(kLowFloats), dtypeName);

TEST(SliceGrad, LargeSliceSplitsAcrossThreads) {
  SliceCase sc{{256, 300}, {255, 1}, {-1, 300}, {-1, 2}};
  Buf dy = randomBuf(DType::BF16, sc.sliced(), 3);
  Buf serial(DType::BF16, sc.data), threaded(DType::BF16, sc.data);
  ASSERT_TRUE(sc.call("slice_grad", &dy, &serial).run().isOk());
  ASSERT_TRUE(sc.call("slice_grad", &dy, &threaded).run(&testPool()).isOk());
  EXPECT_EQ(serial.storage, threaded.storage);
  // Row 255 - r, column 1 + 2k of the result is dy[r, k].
  EXPECT_EQ(serial.get(255 * 300 + 1), dy.get(0));
  EXPECT_EQ(serial.get(0 * 300 + 299), dy.get(255 * 150 + 149));
  EXPECT_EQ(serial.get(5 * 300 + 2), 0.0);
}

TEST(SliceGrad, CheckErrors) {
  SliceCase sc{{4, 6}, {0, 1}, {4, 6}, {2, 2}};
  Buf dy(DType::F32, {2, 3}), dx(DType::F32, {4, 6});
  EXPECT_TRUE(sc.call("slice_grad", &dy, &dx).check().isOk());
  Buf badDy(DType::F32, {2, 2});
  expectError(sc.call("slice_grad", &badDy, &dx).check(),
              "op 'slice_grad': grad of shape [2, 2] does not match slice of "
              "the output shape (op 'slice': output 0 has shape [2, 2] but "
              "the op computes [2, 3])");
  SliceCase unnormalized{{4, 6}, {0, -1}, {4, 6}, {2, 2}};
  expectError(unnormalized.call("slice_grad", &dy, &dx).check(),
              "slice of dimension 1 (size 6) has start -1, end 6, step 2, "
              "which are not normalized");
  Buf dx16(DType::F16, {4, 6});
  expectError(sc.call("slice_grad", &dy, &dx16).check(),
              "output has element type f16 but grad has f32");
  Buf idy(DType::I64, {2, 3}), idx(DType::I64, {4, 6});
  expectError(sc.call("slice_grad", &idy, &idx).check(),
              "grad must be f32, f16, bf16 or f64, got i64");
  Call noSteps{"slice_grad", {}, {&dy}, {&dx}};
  noSteps.attrs.setInts("starts", {0, 1});
  noSteps.attrs.setInts("ends", {4, 6});
  expectError(noSteps.check(), "attribute 'steps' is missing");
}

//===----------------------------------------------------------------------===//
// gather_grad
//===----------------------------------------------------------------------===//

struct GatherCase {
  Shape data;
  int64_t axis;
  Shape indexShape;
  std::vector<double> indices;
  DType indexType = DType::I64;

  Shape gathered() const {
    Shape s(data.begin(), data.begin() + axis);
    s.insert(s.end(), indexShape.begin(), indexShape.end());
    s.insert(s.end(), data.begin() + axis + 1, data.end());
    return s;
  }
  std::string str() const {
    std::string idx;
    for (double v : indices)
      idx += (idx.empty() ? "" : ", ") + std::to_string(int64_t(v));
    return "gather from " + ampc::rt::str(data) + " axis " +
           std::to_string(axis) + " indices [" + idx + "] " +
           std::string(name(indexType));
  }
  Call call(const std::string &op, Buf *in, Buf *idx, Buf *out) const {
    Call c{op, {}, {in, idx}, {out}};
    c.attrs.setInt("axis", axis);
    return c;
  }
};

std::vector<GatherCase> gatherCases() {
  std::vector<GatherCase> cases = {
      // repeated and negative indices (-3 is 0 again), 2-D indices
      {{3, 4, 5}, 0, {2, 3}, {0, 2, -1, 0, -3, 1}},
      {{3, 4, 5}, 1, {4}, {3, -4, 3, 1}, DType::I32},
      {{3, 4, 5}, 2, {2, 2}, {4, 4, 4, -5}},
      // scalar index: the axis disappears
      {{6, 2}, 0, {}, {-2}},
      // no indices at all
      {{3, 2}, 1, {0}, {}},
  };
  std::mt19937 rng(23);
  for (int i = 0; i < 20; ++i) {
    GatherCase gc;
    int rank = randInt(rng, 1, 3);
    for (int d = 0; d < rank; ++d)
      gc.data.push_back(randInt(rng, 1, 4));
    gc.axis = randInt(rng, 0, rank - 1);
    int64_t dim = gc.data[gc.axis];
    int indexRank = randInt(rng, 0, 2);
    for (int d = 0; d < indexRank; ++d)
      gc.indexShape.push_back(randInt(rng, 1, 4));
    for (int64_t k = 0; k < numElements(gc.indexShape); ++k)
      gc.indices.push_back(randInt(rng, int(-dim), int(dim - 1)));
    gc.indexType = randInt(rng, 0, 1) ? DType::I64 : DType::I32;
    cases.push_back(gc);
  }
  return cases;
}

TEST(GatherGrad, MatchesFiniteDifferencesOfGather) {
  uint32_t seed = 60;
  bool threaded = false;
  for (const GatherCase &gc : gatherCases()) {
    Buf x = randomBuf(DType::F64, gc.data, seed++);
    Buf idx = makeBuf(gc.indexType, gc.indexShape, gc.indices);
    Buf dy = randomBuf(DType::F64, gc.gathered(), seed++);
    Buf y(DType::F64, gc.gathered());
    std::vector<double> num =
        numericGrad(gc.call("gather", &x, &idx, &y), x, dy);
    Buf dx = randomBuf(DType::F64, gc.data, seed++, 5, 6);
    Status s = gc.call("gather_grad", &dy, &idx, &dx)
                   .run(threaded ? &testPool() : nullptr);
    threaded = !threaded;
    ASSERT_TRUE(s.isOk()) << gc.str() << ": " << s.message();
    expectMatchesNumeric(dx, num, gc.str());
  }
}

class GatherGradDTypeTest : public ::testing::TestWithParam<DType> {};

// Repeated indices add in f32 before one rounding to t.
TEST_P(GatherGradDTypeTest, MatchesF64OnTheSameValues) {
  DType t = GetParam();
  uint32_t seed = 90;
  for (const GatherCase &gc : gatherCases()) {
    Buf idx = makeBuf(gc.indexType, gc.indexShape, gc.indices);
    Buf dy = randomBuf(t, gc.gathered(), seed++);
    Buf dy64 = asF64(dy);
    Buf dx(t, gc.data), dx64(DType::F64, gc.data);
    ASSERT_TRUE(gc.call("gather_grad", &dy, &idx, &dx).run().isOk());
    ASSERT_TRUE(gc.call("gather_grad", &dy64, &idx, &dx64).run().isOk());
    expectNear(dx, dx64.values(), 1e-6, relTol(t), gc.str());
  }
}

INSTANTIATE_TEST_SUITE_P(LowFloats, GatherGradDTypeTest,
                         ::testing::ValuesIn(kLowFloats), dtypeName);

// An embedding-style gradient: axis 0, rows wider than one column block,
// many repeats. Each element sums its repeats in index order whatever the
// threads, so the bits match.
TEST(GatherGrad, EmbeddingRowsSplitAcrossThreads) {
  GatherCase gc{{10, 2500}, 0, {64}, {}};
  std::mt19937 rng(5);
  for (int k = 0; k < 64; ++k)
    gc.indices.push_back(randInt(rng, -10, 9));
  Buf idx = makeBuf(DType::I64, gc.indexShape, gc.indices);
  Buf dy = randomBuf(DType::F32, gc.gathered(), 6);
  Buf serial(DType::F32, gc.data), threaded(DType::F32, gc.data);
  ASSERT_TRUE(gc.call("gather_grad", &dy, &idx, &serial).run().isOk());
  ASSERT_TRUE(
      gc.call("gather_grad", &dy, &idx, &threaded).run(&testPool()).isOk());
  EXPECT_EQ(serial.storage, threaded.storage);
  double expected = 0;
  for (int k = 0; k < 64; ++k)
    if (gc.indices[k] == 3 || gc.indices[k] == 3 - 10)
      expected += dy.get(k * 2500 + 1234);
  EXPECT_NEAR(serial.get(3 * 2500 + 1234), expected, 1e-5);
}

TEST(GatherGrad, OutOfRangeIndexFailsBeforeWriting) {
  GatherCase gc{{2, 4}, 1, {3}, {1, -5, 2}};
  Buf idx = makeBuf(DType::I32, gc.indexShape, gc.indices);
  Buf dy = randomBuf(DType::F32, gc.gathered(), 1);
  Buf dx = makeBuf(DType::F32, gc.data, {7, 7, 7, 7, 7, 7, 7, 7});
  Status s = gc.call("gather_grad", &dy, &idx, &dx).run();
  expectError(s, "op 'gather_grad': index -5 (element 1 of indices) is out "
                 "of range for axis 1 of size 4");
  EXPECT_EQ(dx.values(), std::vector<double>(8, 7.0));
  idx.set(1, 4);
  expectError(gc.call("gather_grad", &dy, &idx, &dx).run(),
              "index 4 (element 1 of indices)");
}

TEST(GatherGrad, CheckErrors) {
  GatherCase gc{{5, 3}, 0, {2}, {0, 1}};
  Buf idx = makeBuf(DType::I64, {2}, {0, 1});
  Buf dy(DType::F32, {2, 3}), dx(DType::F32, {5, 3});
  EXPECT_TRUE(gc.call("gather_grad", &dy, &idx, &dx).check().isOk());
  Buf badDy(DType::F32, {3, 3});
  expectError(gc.call("gather_grad", &badDy, &idx, &dx).check(),
              "op 'gather_grad': grad of shape [3, 3] does not match gather "
              "of the output shape (op 'gather': output 0 has shape [3, 3] "
              "but the op computes [2, 3])");
  GatherCase badAxis = gc;
  badAxis.axis = 2;
  expectError(badAxis.call("gather_grad", &dy, &idx, &dx).check(),
              "attribute 'axis' 2 is out of range for data of rank 2");
  Buf fidx(DType::F32, {2});
  expectError(gc.call("gather_grad", &dy, &fidx, &dx).check(),
              "indices must be i64 or i32, got f32");
  Buf dx64(DType::F64, {5, 3});
  expectError(gc.call("gather_grad", &dy, &idx, &dx64).check(),
              "output has element type f64 but grad has f32");
  Call noAxis{"gather_grad", {}, {&dy, &idx}, {&dx}};
  expectError(noAxis.check(), "attribute 'axis' is missing");
}

} // namespace
