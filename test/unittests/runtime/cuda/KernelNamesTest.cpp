//===- KernelNamesTest.cpp - kernel names formed from KernelNames.def -----===//
//
// Needs no GPU: the names the host asks for are the ones its call sites
// spelled by hand before the table, and a variant outside a family's set
// is an error naming it. The ctest cuda-kernel-symbols checks the same
// names against the fatbins.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/KernelNames.h"

#include "gtest/gtest.h"

#include <set>

namespace ampc::rt::cuda {
namespace {

std::string nameOf(CudaKernel k, KernelVariant v) {
  std::string n;
  Status s = kernelName(k, v, n);
  EXPECT_TRUE(s.isOk()) << s.message();
  return n;
}

TEST(CudaKernelNames, FormsTheNamesTheKernelsDefine) {
  EXPECT_EQ(nameOf(CudaKernel::SoftmaxWarp, {"f16", "k8"}),
            "ampc_softmax_warp_f16_k8");
  EXPECT_EQ(nameOf(CudaKernel::LayerNormGradBlock, {"bf16"}),
            "ampc_layer_norm_grad_block_bf16");
  EXPECT_EQ(nameOf(CudaKernel::StridedCopy, {"16", "i64"}),
            "ampc_strided_copy_16_i64");
  EXPECT_EQ(nameOf(CudaKernel::Gather, {"1", "i32"}), "ampc_gather_1_i32");
  EXPECT_EQ(nameOf(CudaKernel::BnNormalize, {"f64", "c32"}),
            "ampc_bn_normalize_f64_c32");
  EXPECT_EQ(nameOf(CudaKernel::ConvCrop, {"b4"}), "ampc_conv_crop_b4");
  EXPECT_EQ(nameOf(CudaKernel::ReduceFinish, {"i32"}),
            "ampc_reduce_finish_i32");
  EXPECT_EQ(nameOf(CudaKernel::MomentumUpdate, {"f16"}),
            "ampc_momentum_update_f16");
  EXPECT_EQ(nameOf(CudaKernel::LrSchedule, {}), "ampc_lr_schedule");
  EXPECT_EQ(nameOf(CudaKernel::ElementwiseVec8, {}), "ampc_elementwise_vec8");
  EXPECT_STREQ(kernelModule(CudaKernel::GatherGradSum), "Movement");
}

TEST(CudaKernelNames, RefusesAVariantNotBuilt) {
  std::string n;
  Status s = kernelName(CudaKernel::Gather, {"3", "i32"}, n);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("ampc_gather_3_i32"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("'3'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("kernels/Movement.cu"), std::string::npos)
      << s.message();
  // f64 has no row kernels, i1 no float ones.
  EXPECT_FALSE(kernelName(CudaKernel::SoftmaxBlock, {"f64"}, n).isOk());
  EXPECT_FALSE(kernelName(CudaKernel::Dropout, {"i1"}, n).isOk());
  EXPECT_FALSE(kernelName(CudaKernel::SoftmaxWarp, {"f32", "k64"}, n).isOk());
  // One value per axis.
  EXPECT_FALSE(kernelName(CudaKernel::StridedCopy, {"4"}, n).isOk());
  EXPECT_FALSE(kernelName(CudaKernel::LrSchedule, {"f32"}, n).isOk());
}

TEST(CudaKernelNames, EveryNameIsFormedOnce) {
  std::vector<KernelNameEntry> all = allKernelNames();
  ASSERT_FALSE(all.empty());
  std::set<std::string> seen;
  for (const KernelNameEntry &e : all) {
    EXPECT_TRUE(seen.insert(e.name).second) << e.name << " twice";
    EXPECT_EQ(e.name.rfind("ampc_", 0), 0u) << e.name;
  }
}

} // namespace
} // namespace ampc::rt::cuda
