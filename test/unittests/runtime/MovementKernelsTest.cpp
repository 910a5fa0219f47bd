//===- MovementKernelsTest.cpp - data movement CPU kernels ----------------===//
//
// broadcast_to, transpose, concat, slice, gather, dropout and copy against
// naive index loops written here, for several dtypes (they move bytes).
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "runtime/cpu/Parallel.h"

#include <gtest/gtest.h>

using namespace ampc::rt;
using namespace ampc::rt::test;

namespace {

const DType kAllTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64,
                           DType::I64, DType::I32, DType::I1};

Tensor iota(DType t, Shape s) {
  Tensor x = randomTensor(t, std::move(s), -1000, 1000, 17);
  if (t == DType::I1)
    x = randomTensor(t, x.shape, 0, 2, 17);
  return x;
}

void expectCheckError(Call &c, const std::string &fragment) {
  Status s = c.check();
  ASSERT_FALSE(s) << "expected an error containing: " << fragment;
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
}

TEST(MovementKernels, BroadcastTo) {
  cpu::ThreadPool pool(3);
  struct Case {
    Shape in, out;
  };
  for (Case c : {Case{{3, 1}, {2, 3, 4}}, Case{{}, {5, 2}}, Case{{4}, {3, 4}},
                 Case{{2, 1, 3}, {2, 5, 3}}, Case{{1, 1}, {1, 1}},
                 Case{{300, 1}, {300, 257}}, Case{{0, 1}, {0, 3}}})
    for (DType t : kAllTypes) {
      SCOPED_TRACE(str(c.in) + " -> " + str(c.out) + " " +
                   std::string(name(t)));
      Tensor in = iota(t, c.in), out(t, c.out);
      ASSERT_TRUE(Call("broadcast_to", {&in}, {&out}).run(&pool));
      for (int64_t i = 0; i < out.size(); ++i)
        ASSERT_EQ(out.bits(i),
                  in.bits(broadcastSource(unravel(i, c.out), c.in)));
    }
  Tensor a(DType::F32, {3}), b(DType::F32, {2, 4}), h(DType::F16, {2, 3});
  Call bad("broadcast_to", {&a}, {&b});
  expectCheckError(bad, "input of shape [3] does not broadcast to the output "
                        "shape [2, 4]");
  Call badT("broadcast_to", {&a}, {&h});
  expectCheckError(badT, "output 0 has dtype f16 but the input has f32");
}

TEST(MovementKernels, Transpose) {
  cpu::ThreadPool pool(4);
  struct Case {
    Shape in;
    std::vector<int64_t> perm;
  };
  for (Case c :
       {Case{{2, 3}, {1, 0}}, Case{{2, 3, 4}, {2, 0, 1}},
        Case{{2, 3, 4, 5}, {0, 2, 1, 3}}, Case{{2, 3, 4, 5}, {3, 2, 1, 0}},
        Case{{5}, {0}}, Case{{1, 4, 1}, {2, 1, 0}}, Case{{300, 301}, {1, 0}}})
    for (DType t : kAllTypes) {
      SCOPED_TRACE(str(c.in) + " " + str(c.perm) + " " + std::string(name(t)));
      Shape os;
      for (int64_t p : c.perm)
        os.push_back(c.in[p]);
      Tensor in = iota(t, c.in), out(t, os);
      Call call("transpose", {&in}, {&out});
      call.attrs.setInts("perm", c.perm);
      ASSERT_TRUE(call.run(&pool));
      for (int64_t i = 0; i < out.size(); ++i) {
        auto oi = unravel(i, os);
        std::vector<int64_t> ii(c.in.size());
        for (size_t d = 0; d < c.perm.size(); ++d)
          ii[c.perm[d]] = oi[d];
        int64_t lin = 0;
        for (size_t d = 0; d < ii.size(); ++d)
          lin = lin * c.in[d] + ii[d];
        ASSERT_EQ(out.bits(i), in.bits(lin)) << i;
      }
    }
  Tensor a(DType::F32, {2, 3}), b(DType::F32, {3, 2}), c3(DType::F32, {2, 3});
  Call bad("transpose", {&a}, {&b});
  bad.attrs.setInts("perm", {0, 0});
  expectCheckError(bad, "[0, 0] is not a permutation of [0, 2)");
  Call shortPerm("transpose", {&a}, {&b});
  shortPerm.attrs.setInts("perm", {0});
  expectCheckError(shortPerm, "has 1 entries for a rank-2 input");
  Call wrongOut("transpose", {&a}, {&c3});
  wrongOut.attrs.setInts("perm", {1, 0});
  expectCheckError(wrongOut,
                   "output 0 has shape [2, 3] but the op computes [3, 2]");
  Call missing("transpose", {&a}, {&b});
  expectCheckError(missing, "attribute 'perm' is missing");
  Call kind("transpose", {&a}, {&b});
  kind.attrs.setInt("perm", 1);
  expectCheckError(kind, "attribute 'perm' must be a list of integers");
}

TEST(MovementKernels, Concat) {
  for (DType t : kAllTypes)
    for (int64_t axis : {0, 1, 2}) {
      SCOPED_TRACE(std::string(name(t)) + " axis " + std::to_string(axis));
      Shape s0 = {2, 3, 4}, s1 = s0, s2 = s0;
      s1[axis] = 1;
      s2[axis] = 0; // empty inputs are allowed
      Shape so = s0;
      so[axis] = s0[axis] + 1;
      Tensor a = iota(t, s0), b = iota(t, s1), e(t, s2), out(t, so);
      Call call("concat", {&a, &e, &b}, {&out});
      call.attrs.setInt("axis", axis);
      ASSERT_TRUE(call.run());
      for (int64_t i = 0; i < out.size(); ++i) {
        auto idx = unravel(i, so);
        uint64_t want;
        if (idx[axis] < s0[axis]) {
          want = a.bits(broadcastSource(idx, s0));
        } else {
          idx[axis] -= s0[axis];
          int64_t lin = 0;
          for (size_t d = 0; d < 3; ++d)
            lin = lin * s1[d] + idx[d];
          want = b.bits(lin);
        }
        ASSERT_EQ(out.bits(i), want) << i;
      }
    }
  Tensor a(DType::F32, {2, 3}), b(DType::F32, {2, 4}), h(DType::F16, {2, 3}),
      o(DType::F32, {4, 3}), r(DType::F32, {2, 3, 1});
  Call badDim("concat", {&a, &b}, {&o});
  badDim.attrs.setInt("axis", 0);
  expectCheckError(badDim, "input 1 [2, 4] differs from input 0 [2, 3] in "
                           "dimension 1 (not the axis)");
  Call badType("concat", {&a, &h}, {&o});
  badType.attrs.setInt("axis", 0);
  expectCheckError(badType, "input 1 has dtype f16 but input 0 has f32");
  Call badAxis("concat", {&a, &a}, {&o});
  badAxis.attrs.setInt("axis", 2);
  expectCheckError(badAxis, "attribute 'axis' 2 is out of range for rank 2");
  Call badRank("concat", {&a, &r}, {&o});
  badRank.attrs.setInt("axis", 0);
  expectCheckError(badRank, "has a different rank");
  Call badOut("concat", {&a, &a}, {&a});
  badOut.attrs.setInt("axis", 0);
  expectCheckError(badOut,
                   "output 0 has shape [2, 3] but the op computes [4, 3]");
  Call none("concat", {}, {&a});
  none.attrs.setInt("axis", 0);
  expectCheckError(none, "needs at least one input");
}

TEST(MovementKernels, Slice) {
  struct Case {
    Shape in;
    std::vector<int64_t> starts, ends, steps;
  };
  for (Case c : {Case{{10}, {2}, {9}, {3}},             // 2 5 8
                 Case{{10}, {9}, {-1}, {-1}},           // reversed
                 Case{{10}, {8}, {0}, {-3}},            // 8 5 2
                 Case{{4, 6}, {1, 5}, {3, 0}, {1, -2}}, // rows 1-2, cols 5 3 1
                 Case{{3, 4, 5}, {0, 0, 0}, {3, 4, 5}, {1, 1, 1}},
                 Case{{3, 4, 5}, {2, 1, 4}, {-1, 4, 0}, {-1, 2, -4}},
                 Case{{5, 3}, {2, 0}, {2, 3}, {1, 1}}}) // empty
    for (DType t : kAllTypes) {
      SCOPED_TRACE(str(c.in) + " " + str(c.starts) + " " + str(c.ends) + " " +
                   str(c.steps) + " " + std::string(name(t)));
      Shape os;
      for (size_t d = 0; d < c.in.size(); ++d) {
        int64_t n = 0;
        for (int64_t j = c.starts[d];
             c.steps[d] > 0 ? j < c.ends[d] : j > c.ends[d]; j += c.steps[d])
          ++n;
        os.push_back(n);
      }
      Tensor in = iota(t, c.in), out(t, os);
      Call call("slice", {&in}, {&out});
      call.attrs.setInts("starts", c.starts);
      call.attrs.setInts("ends", c.ends);
      call.attrs.setInts("steps", c.steps);
      Status s = call.run();
      ASSERT_TRUE(s) << s.message();
      for (int64_t i = 0; i < out.size(); ++i) {
        auto oi = unravel(i, os);
        int64_t lin = 0;
        for (size_t d = 0; d < oi.size(); ++d)
          lin = lin * c.in[d] + c.starts[d] + oi[d] * c.steps[d];
        ASSERT_EQ(out.bits(i), in.bits(lin)) << i;
      }
    }
  Tensor a(DType::F32, {4, 6}), o(DType::F32, {2, 3});
  Call bad("slice", {&a}, {&o});
  bad.attrs.setInts("starts", {0, 0});
  bad.attrs.setInts("ends", {5, 3});
  bad.attrs.setInts("steps", {1, 1});
  expectCheckError(bad, "slice of dimension 0 (size 4) has start 0, end 5, "
                        "step 1, which are not normalized");
  Call zero("slice", {&a}, {&o});
  zero.attrs.setInts("starts", {0, 0});
  zero.attrs.setInts("ends", {2, 3});
  zero.attrs.setInts("steps", {0, 1});
  expectCheckError(zero, "step 0, which are not normalized");
  Call count("slice", {&a}, {&o});
  count.attrs.setInts("starts", {0});
  count.attrs.setInts("ends", {2});
  count.attrs.setInts("steps", {1});
  expectCheckError(count, "need one entry per dimension");
}

TEST(MovementKernels, SliceOutputShapeIsChecked) {
  Tensor a(DType::F32, {4, 6}), o(DType::F32, {2, 2});
  Call shape("slice", {&a}, {&o});
  shape.attrs.setInts("starts", {0, 0});
  shape.attrs.setInts("ends", {2, 6});
  shape.attrs.setInts("steps", {1, 2});
  expectCheckError(shape,
                   "output 0 has shape [2, 2] but the op computes [2, 3]");
}

TEST(MovementKernels, Gather) {
  cpu::ThreadPool pool(3);
  for (DType it : {DType::I64, DType::I32})
    for (DType t : {DType::F32, DType::F16, DType::I1, DType::I64})
      for (int64_t axis : {0, 1, 2}) {
        SCOPED_TRACE(std::string(name(it)) + " " + std::string(name(t)) +
                     " axis " + std::to_string(axis));
        Shape ds = {3, 4, 5};
        Tensor data = iota(t, ds);
        Tensor idx(it, {2, 3});
        int64_t dim = ds[axis];
        std::vector<int64_t> vals = {0, dim - 1, -1, -dim, 1, 2 % dim};
        for (int i = 0; i < 6; ++i)
          idx.setInt(i, vals[i]);
        Shape os(ds.begin(), ds.begin() + axis);
        os.push_back(2);
        os.push_back(3);
        os.insert(os.end(), ds.begin() + axis + 1, ds.end());
        Tensor out(t, os);
        Call call("gather", {&data, &idx}, {&out});
        call.attrs.setInt("axis", axis);
        Status s = call.run(&pool);
        ASSERT_TRUE(s) << s.message();
        for (int64_t i = 0; i < out.size(); ++i) {
          auto oi = unravel(i, os);
          std::vector<int64_t> di(oi.begin(), oi.begin() + axis);
          int64_t v = vals[oi[axis] * 3 + oi[axis + 1]];
          di.push_back(v < 0 ? v + dim : v);
          di.insert(di.end(), oi.begin() + axis + 2, oi.end());
          int64_t lin = 0;
          for (size_t d = 0; d < 3; ++d)
            lin = lin * ds[d] + di[d];
          ASSERT_EQ(out.bits(i), data.bits(lin)) << i;
        }
      }
  // A large embedding-like gather on the pool.
  Tensor table = iota(DType::F32, {1000, 64});
  Tensor ids(DType::I64, {4000});
  for (int64_t i = 0; i < 4000; ++i)
    ids.setInt(i, (i * 7919) % 1000);
  Tensor emb(DType::F32, {4000, 64});
  Call big("gather", {&table, &ids}, {&emb});
  big.attrs.setInt("axis", 0);
  ASSERT_TRUE(big.run(&pool));
  for (int64_t i = 0; i < 4000; ++i)
    for (int64_t j = 0; j < 64; j += 13)
      ASSERT_EQ(emb.bits(i * 64 + j), table.bits(((i * 7919) % 1000) * 64 + j));
}

TEST(MovementKernels, GatherErrors) {
  Tensor data(DType::F32, {4, 2}), idx(DType::I64, {3}),
      out(DType::F32, {3, 2});
  idx.setInt(0, 1);
  idx.setInt(1, 4);
  idx.setInt(2, 0);
  Call call("gather", {&data, &idx}, {&out});
  call.attrs.setInt("axis", 0);
  Status s = call.run();
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("index 4 (element 1 of indices) is out of range "
                             "for axis 0 of size 4"),
            std::string::npos)
      << s.message();
  idx.setInt(1, -5);
  s = call.run();
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("index -5"), std::string::npos) << s.message();
  idx.setInt(1, -4); // -4 is the first row
  ASSERT_TRUE(call.run());

  Tensor fidx(DType::F32, {3});
  Call badIdx("gather", {&data, &fidx}, {&out});
  badIdx.attrs.setInt("axis", 0);
  expectCheckError(badIdx, "indices have dtype f32 but must be i64 or i32");
  Call badAxis("gather", {&data, &idx}, {&out});
  badAxis.attrs.setInt("axis", 2);
  expectCheckError(badAxis,
                   "attribute 'axis' 2 is out of range for data of rank 2");
  Call badOut("gather", {&data, &idx}, {&data});
  badOut.attrs.setInt("axis", 0);
  expectCheckError(badOut,
                   "output 0 has shape [4, 2] but the op computes [3, 2]");
}

Call dropoutCall(Tensor &in, Tensor &out, Tensor &mask, double ratio,
                 int64_t training, int64_t seed, uint64_t counter) {
  Call c("dropout", {&in}, {&out, &mask});
  c.attrs.setFloat("ratio", ratio);
  c.attrs.setInt("training", training);
  c.attrs.setInt("seed", seed);
  c.call.rngCounter = counter;
  return c;
}

TEST(MovementKernels, DropoutTraining) {
  cpu::ThreadPool pool(4);
  const int64_t n = 200000;
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    SCOPED_TRACE(name(t));
    Tensor in = randomTensor(t, {n}, -4, 4, 9);
    for (double ratio : {0.1, 0.5, 0.9}) {
      Tensor out(t, {n}), mask(DType::I1, {n});
      Call c = dropoutCall(in, out, mask, ratio, 1, 1234, 7);
      ASSERT_TRUE(c.run(&pool));
      int64_t kept = 0;
      const double scale = 1 / (1 - ratio);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_LE(mask.bits(i), 1u);
        if (mask.bits(i)) {
          ++kept;
          // x * scale computed in f32 (f64 for f64) and rounded once.
          double want =
              t == DType::F64
                  ? in.get(i) * scale
                  : static_cast<double>(static_cast<float>(in.get(i)) *
                                        static_cast<float>(scale));
          Tensor r(t, {1});
          r.set(0, want);
          ASSERT_EQ(out.bits(i), r.bits(0)) << i;
        } else {
          ASSERT_EQ(out.bits(i), 0u) << i; // +0
        }
      }
      // Keep rate 1 - ratio within 6 standard deviations.
      double p = 1 - ratio, sd = std::sqrt(n * p * (1 - p));
      EXPECT_NEAR(static_cast<double>(kept), n * p, 6 * sd) << ratio;
    }
  }
}

TEST(MovementKernels, DropoutIsDeterministicPerSeedAndCounter) {
  cpu::ThreadPool pool(4);
  const int64_t n = 100000;
  Tensor in = randomTensor(DType::F32, {n}, 1, 2, 3);
  auto maskOf = [&](int64_t seed, uint64_t counter, cpu::ThreadPool *p) {
    Tensor out(DType::F32, {n}), mask(DType::I1, {n});
    Call c = dropoutCall(in, out, mask, 0.5, 1, seed, counter);
    EXPECT_TRUE(c.run(p));
    std::vector<uint8_t> m(n);
    for (int64_t i = 0; i < n; ++i)
      m[i] = static_cast<uint8_t>(mask.bits(i));
    return m;
  };
  auto a = maskOf(42, 3, &pool);
  EXPECT_EQ(a, maskOf(42, 3, nullptr)); // independent of threading
  auto diffFrac = [&](const std::vector<uint8_t> &x,
                      const std::vector<uint8_t> &y) {
    int64_t d = 0;
    for (int64_t i = 0; i < n; ++i)
      d += x[i] != y[i];
    return static_cast<double>(d) / n;
  };
  // Another counter or seed gives an unrelated mask (about half differ).
  EXPECT_NEAR(diffFrac(a, maskOf(42, 4, &pool)), 0.5, 0.02);
  EXPECT_NEAR(diffFrac(a, maskOf(43, 3, &pool)), 0.5, 0.02);
  // Neighbouring elements are not correlated: runs of equal bits are short.
  int64_t same = 0;
  for (int64_t i = 1; i < n; ++i)
    same += a[i] == a[i - 1];
  EXPECT_NEAR(static_cast<double>(same) / (n - 1), 0.5, 0.02);
}

TEST(MovementKernels, DropoutInferenceAndEdgeRatios) {
  Tensor in = randomTensor(DType::F16, {1000}, -4, 4, 1);
  for (auto [ratio, training] :
       {std::pair<double, int64_t>{0.5, 0}, std::pair<double, int64_t>{0, 1}}) {
    Tensor out(DType::F16, {1000}), mask(DType::I1, {1000});
    Call c = dropoutCall(in, out, mask, ratio, training, 5, 1);
    ASSERT_TRUE(c.run());
    for (int64_t i = 0; i < 1000; ++i) {
      ASSERT_EQ(out.bits(i), in.bits(i));
      ASSERT_EQ(mask.bits(i), 1u);
    }
  }
  Tensor out(DType::F16, {1000}), mask(DType::I1, {1000});
  Call all = dropoutCall(in, out, mask, 1.0, 1, 5, 1);
  ASSERT_TRUE(all.run());
  for (int64_t i = 0; i < 1000; ++i) {
    ASSERT_EQ(out.bits(i), 0u);
    ASSERT_EQ(mask.bits(i), 0u);
  }
}

TEST(MovementKernels, DropoutCheckErrors) {
  Tensor in(DType::F32, {4}), out(DType::F32, {4}), mask(DType::I1, {4}),
      badMask(DType::F32, {4}), i32(DType::I32, {4});
  Call ratio = dropoutCall(in, out, mask, 1.5, 1, 0, 0);
  expectCheckError(ratio, "attribute 'ratio' must be in [0, 1], got 1.5");
  Call training = dropoutCall(in, out, mask, 0.5, 2, 0, 0);
  expectCheckError(training, "attribute 'training' must be 0 or 1, got 2");
  Call m = dropoutCall(in, out, badMask, 0.5, 1, 0, 0);
  expectCheckError(m, "output 1 has dtype f32 but the op computes i1");
  Call ints = dropoutCall(i32, i32, mask, 0.5, 1, 0, 0);
  expectCheckError(ints, "input has dtype i32 but must be a float type");
  Call noSeed("dropout", {&in}, {&out, &mask});
  noSeed.attrs.setFloat("ratio", 0.5);
  noSeed.attrs.setInt("training", 1);
  expectCheckError(noSeed, "attribute 'seed' is missing");
  Call oneOut("dropout", {&in}, {&out});
  expectCheckError(oneOut, "expects 2 outputs, got 1");
}

TEST(MovementKernels, Copy) {
  cpu::ThreadPool pool(2);
  for (DType t : kAllTypes) {
    Tensor in = iota(t, {6, 7}), out(t, {42});
    ASSERT_TRUE(Call("copy", {&in}, {&out}).run(&pool));
    for (int64_t i = 0; i < 42; ++i)
      ASSERT_EQ(out.bits(i), in.bits(i));
  }
  Tensor big = iota(DType::F64, {1 << 19}), big2(DType::F64, {1 << 19});
  ASSERT_TRUE(Call("copy", {&big}, {&big2}).run(&pool));
  EXPECT_EQ(big.storage, big2.storage);
  Tensor a(DType::F32, {6}), b(DType::F32, {5}), h(DType::F16, {6});
  Call n("copy", {&a}, {&b});
  expectCheckError(n, "output 0 [5] has 5 elements but the input [6] has 6");
  Call d("copy", {&a}, {&h});
  expectCheckError(d, "output 0 has dtype f16 but the input has f32");
}

} // namespace
