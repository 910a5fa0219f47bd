//===- ShapeInferenceTest.cpp - the static shape rules --------------------===//
//
// The shape rules of ShapeInference.h on cases chosen against ONNX's and
// PyTorch's documented results, including every error path.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/ShapeInference.h"

#include <gtest/gtest.h>

using namespace ampc::shape;
using V = std::vector<int64_t>;

static V vec(const std::optional<Shape> &s) {
  return s ? V(s->begin(), s->end()) : V{-999};
}

TEST(Broadcast, Numpy) {
  std::string e;
  EXPECT_EQ(vec(broadcast({2, 1, 4}, {3, 1}, e)), (V{2, 3, 4}));
  EXPECT_EQ(vec(broadcast({}, {5}, e)), (V{5}));
  EXPECT_EQ(vec(broadcast({0, 1}, {1, 7}, e)), (V{0, 7}));
  EXPECT_FALSE(broadcast({2, 3}, {4, 3}, e));
  EXPECT_NE(e.find("[2, 3] and [4, 3] do not broadcast"), std::string::npos)
      << e;
  EXPECT_TRUE(broadcastsTo({3, 1}, {2, 3, 5}));
  EXPECT_FALSE(broadcastsTo({2, 3, 5}, {3, 5}));
}

TEST(MatMul, PromotionAndBatch) {
  std::string e;
  EXPECT_EQ(vec(matmul({3}, {3}, e)), (V{}));
  EXPECT_EQ(vec(matmul({3}, {3, 4}, e)), (V{4}));
  EXPECT_EQ(vec(matmul({2, 3}, {3}, e)), (V{2}));
  EXPECT_EQ(vec(matmul({5, 1, 2, 3}, {4, 3, 7}, e)), (V{5, 4, 2, 7}));
  EXPECT_FALSE(matmul({2, 3}, {4, 5}, e));
  EXPECT_NE(e.find("contracting dimensions differ"), std::string::npos);
  EXPECT_FALSE(matmul({}, {3}, e));
}

TEST(Gemm, TransposesAndBias) {
  std::string e;
  int64_t c[] = {4};
  EXPECT_EQ(vec(gemm({3, 2}, {4, 3}, llvm::ArrayRef<int64_t>(c), true, true, e)),
            (V{2, 4}));
  int64_t bad[] = {3};
  EXPECT_FALSE(gemm({2, 3}, {3, 4}, llvm::ArrayRef<int64_t>(bad), false, false, e));
  EXPECT_NE(e.find("does not broadcast to [2, 4]"), std::string::npos) << e;
  EXPECT_FALSE(gemm({2, 3, 1}, {3, 4}, std::nullopt, false, false, e));
}

TEST(Conv2d, LeNetAndGroups) {
  std::string e;
  // LeNet-5 conv1: 32x1x32x32, 6x1x5x5 -> 32x6x28x28.
  EXPECT_EQ(vec(conv2d({32, 1, 32, 32}, {6, 1, 5, 5}, {1, 1}, {0, 0, 0, 0},
                       {1, 1}, 1, e)),
            (V{32, 6, 28, 28}));
  // Strided, asymmetric padding (ONNX test_conv_with_strides_and_asymmetric_padding).
  EXPECT_EQ(vec(conv2d({1, 1, 7, 5}, {1, 1, 3, 3}, {2, 2}, {1, 0, 1, 0},
                       {1, 1}, 1, e)),
            (V{1, 1, 4, 2}));
  // Depthwise.
  EXPECT_EQ(vec(conv2d({1, 8, 10, 10}, {8, 1, 3, 3}, {1, 1}, {1, 1, 1, 1},
                       {2, 2}, 8, e)),
            (V{1, 8, 8, 8}));
  EXPECT_FALSE(conv2d({1, 3, 8, 8}, {4, 2, 3, 3}, {1, 1}, {0, 0, 0, 0},
                      {1, 1}, 1, e));
  EXPECT_NE(e.find("input channels"), std::string::npos) << e;
  EXPECT_FALSE(conv2d({1, 1, 2, 2}, {1, 1, 3, 3}, {1, 1}, {0, 0, 0, 0},
                      {1, 1}, 1, e));
  EXPECT_FALSE(conv2d({1, 1, 8, 8}, {1, 1, 3, 3}, {0, 1}, {0, 0, 0, 0},
                      {1, 1}, 1, e));
}

TEST(Pool2d, CeilModeDropsWindowInPadding) {
  std::string e;
  // ONNX test_maxpool_2d_ceil: 4x4, kernel 3, stride 2, ceil -> 2x2.
  EXPECT_EQ(vec(pool2d({1, 1, 4, 4}, {3, 3}, {2, 2}, {0, 0, 0, 0}, {1, 1},
                       true, e)),
            (V{1, 1, 2, 2}));
  // PyTorch: 5 wide, kernel 2, stride 2, pad 1, ceil -> 3 (not 4: the
  // fourth window would start in the end padding).
  EXPECT_EQ(vec(pool2d({1, 1, 5, 5}, {2, 2}, {2, 2}, {1, 1, 1, 1}, {1, 1},
                       true, e)),
            (V{1, 1, 3, 3}));
  EXPECT_EQ(vec(pool2d({1, 1, 5, 5}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1},
                       false, e)),
            (V{1, 1, 2, 2}));
  EXPECT_FALSE(pool2d({1, 1, 5, 5}, {2, 2}, {2, 2}, {2, 0, 0, 0}, {1, 1},
                      false, e));
}

TEST(Reduce, KeepAndDrop) {
  std::string e;
  EXPECT_EQ(vec(reduce({2, 3, 4}, {0, 2}, true, e)), (V{1, 3, 1}));
  EXPECT_EQ(vec(reduce({2, 3, 4}, {0, 2}, false, e)), (V{3}));
  EXPECT_FALSE(reduce({2, 3}, {2}, true, e));
  EXPECT_FALSE(reduce({2, 3}, {1, 1}, true, e));
}

TEST(DataMovement, TransposeConcatSliceGather) {
  std::string e;
  EXPECT_EQ(vec(transpose({2, 3, 4}, {2, 0, 1}, e)), (V{4, 2, 3}));
  EXPECT_FALSE(transpose({2, 3}, {0, 0}, e));
  EXPECT_EQ(vec(concat({Shape{2, 3}, Shape{2, 5}}, 1, e)), (V{2, 8}));
  EXPECT_FALSE(concat({Shape{2, 3}, Shape{3, 5}}, 1, e));
  EXPECT_EQ(vec(slice({10, 4}, {1, 3}, {7, -1}, {2, -1}, e)), (V{3, 4}));
  EXPECT_EQ(vec(slice({10}, {9}, {-1}, {-3}, e)), (V{4}));
  EXPECT_FALSE(slice({10}, {5}, {3}, {1}, e));
  EXPECT_EQ(vec(gather({5, 6, 7}, {2, 3}, 1, e)), (V{5, 2, 3, 7}));
  EXPECT_EQ(vec(gather({5}, {}, 0, e)), (V{}));
  EXPECT_FALSE(gather({5}, {1}, 1, e));
}

TEST(Elements, Overflow) {
  EXPECT_EQ(numElements({2, 3, 4}), 24);
  EXPECT_FALSE(numElements({INT64_MAX / 2, 3}));
  EXPECT_FALSE(numElements({-1, 3}));
}

// Pads, dilations, groups and concatenated sizes come from the model: sums
// and products of them that overflow int64 are errors, not wrapped sizes.
TEST(Overflow, WindowsGroupsAndConcat) {
  std::string e;
  const int64_t big = INT64_MAX - 1;
  EXPECT_FALSE(conv2d({1, 1, 8, 8}, {1, 1, 3, 3}, {1, 1}, {big, 0, big, 0},
                      {1, 1}, 1, e));
  EXPECT_EQ(e, "the input of size 8 padded by 9223372036854775806 and "
               "9223372036854775806 in spatial dimension 0 is not a size "
               "int64 can count");
  EXPECT_FALSE(
      conv2d({1, 1, 8, 8}, {1, 1, 3, 3}, {1, 1}, {0, 0, 0, 0}, {1, big}, 1, e));
  EXPECT_EQ(e, "the window of size 3 dilated by 9223372036854775806 in "
               "spatial dimension 1 is not a size int64 can count");
  // input[1] == 0: any group divides it, filter[1] * group overflows.
  EXPECT_FALSE(conv2d({1, 0, 8, 8}, {int64_t(1) << 40, int64_t(1) << 40, 3, 3},
                      {1, 1}, {0, 0, 0, 0}, {1, 1}, int64_t(1) << 40, e));
  EXPECT_NE(e.find("expects more input channels than int64 can count"),
            std::string::npos)
      << e;
  EXPECT_FALSE(
      pool2d({1, 1, big, 8}, {3, 3}, {1, 1}, {2, 0, 2, 0}, {1, 1}, false, e));
  EXPECT_NE(e.find("is not a size int64 can count"), std::string::npos) << e;
  // The last window's start past int64 counts as past the input.
  EXPECT_EQ(vec(pool2d({1, 1, INT64_MAX - 8, 1}, {1, 1}, {int64_t(1) << 62, 1},
                       {0, 0, 0, 0}, {1, 1}, true, e)),
            (V{1, 1, 2, 1}));
  EXPECT_FALSE(concat({Shape{big, 2}, Shape{big, 2}}, 0, e));
  EXPECT_EQ(e, "the inputs' sizes along axis 0 add up to more than int64 "
               "can count");
}
