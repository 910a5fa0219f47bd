//===- DnnlConvolution.cpp - oneDNN convolution passes --------------------===//
//
// Each pass is one oneDNN primitive whose operands oneDNN lays out as its
// fastest kernel wants ("any"); the stored NCHW/OIHW tensors are reordered
// into those layouts before the primitive and its result back after it.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Dnnl.h"
#include "runtime/cpu/DnnlEngine.h"
#include "runtime/cpu/Scratch.h"

#include <unordered_map>
#include <vector>

namespace ampc::rt::cpu {
namespace {

using dims = dnnl::memory::dims;
using dt = dnnl::memory::data_type;
using tag = dnnl::memory::format_tag;

} // namespace

struct DnnlConvolution::Impl {
  // One operand of the primitive: the tensor as stored (`user`), the
  // layout the primitive wants, and the reorder between them (none when
  // they are the same).
  struct Operand {
    int arg = 0;
    int slot = 0; // 0, 1: run's in0, in1; 2: bias; 3: the result
    dnnl::memory::desc user, inside;
    dnnl::reorder reorder;
    bool reordered = false;
  };
  dnnl::primitive prim;
  std::string impl;
  std::vector<Operand> operands;
  dnnl::stream stream;
};

DnnlConvolution::DnnlConvolution(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
DnnlConvolution::~DnnlConvolution() = default;

Status DnnlConvolution::create(const DnnlConvShape &s,
                               std::unique_ptr<DnnlConvolution> &out) {
  // oneDNN counts dilation from 0 and wants both pads of each dimension;
  // the trailing pad is what makes the output extent the plan's.
  int64_t pb = (s.oh - 1) * s.sh + (s.kh - 1) * s.dh + 1 - s.h - s.pt;
  int64_t pr = (s.ow - 1) * s.sw + (s.kw - 1) * s.dw + 1 - s.w - s.pl;
  if (pb < 0 || pr < 0)
    return Status::error("the input is cropped at its end");
  dt in = s.bf16 ? dt::bf16 : dt::f32;
  dims x{s.n, s.c, s.h, s.w}, y{s.n, s.o, s.oh, s.ow};
  dims w = s.group == 1
               ? dims{s.o, s.c, s.kh, s.kw}
               : dims{s.group, s.o / s.group, s.c / s.group, s.kh, s.kw};
  tag wTag = s.group == 1 ? tag::oihw : tag::goihw;
  dims strides{s.sh, s.sw}, dil{s.dh - 1, s.dw - 1}, padL{s.pt, s.pl},
      padR{pb, pr};
  auto any = [](const dims &d, dt t) {
    return dnnl::memory::desc(d, t, tag::any);
  };
  auto impl = std::make_unique<Impl>();
  using Operand = Impl::Operand;
  try {
    const dnnl::engine &eng = dnnlEngine();
    // The forward descriptor: the primitive itself, or the backward
    // passes' hint. Its result is f32 whatever the operands are.
    dnnl::memory::desc fwdBias = s.bias
                                     ? dnnl::memory::desc(dims{s.o}, in, tag::x)
                                     : dnnl::memory::desc();
    dnnl::convolution_forward::primitive_desc fwd(
        dnnl::convolution_forward::desc(
            dnnl::prop_kind::forward_training,
            dnnl::algorithm::convolution_direct, any(x, in), any(w, in),
            fwdBias, any(y, dt::f32), strides, dil, padL, padR),
        eng);
    auto operand = [](int arg, int slot, const dims &d, dt t, tag layout,
                      const dnnl::memory::desc &inside) {
      Operand o;
      o.arg = arg;
      o.slot = slot;
      o.user = dnnl::memory::desc(d, t, layout);
      o.inside = inside;
      return o;
    };
    switch (s.pass) {
    case DnnlConvPass::Forward:
      impl->prim = dnnl::convolution_forward(fwd);
      impl->impl = fwd.impl_info_str();
      impl->operands = {
          operand(DNNL_ARG_SRC, 0, x, in, tag::nchw, fwd.src_desc()),
          operand(DNNL_ARG_WEIGHTS, 1, w, in, wTag, fwd.weights_desc()),
          operand(DNNL_ARG_DST, 3, y, dt::f32, tag::nchw, fwd.dst_desc())};
      if (s.bias)
        impl->operands.push_back(
            operand(DNNL_ARG_BIAS, 2, dims{s.o}, in, tag::x, fwdBias));
      break;
    case DnnlConvPass::BackwardData: {
      dnnl::convolution_backward_data::primitive_desc pd(
          dnnl::convolution_backward_data::desc(
              dnnl::algorithm::convolution_direct, any(x, dt::f32), any(w, in),
              any(y, in), strides, dil, padL, padR),
          eng, fwd);
      impl->prim = dnnl::convolution_backward_data(pd);
      impl->impl = pd.impl_info_str();
      impl->operands = {
          operand(DNNL_ARG_DIFF_DST, 0, y, in, tag::nchw, pd.diff_dst_desc()),
          operand(DNNL_ARG_WEIGHTS, 1, w, in, wTag, pd.weights_desc()),
          operand(DNNL_ARG_DIFF_SRC, 3, x, dt::f32, tag::nchw,
                  pd.diff_src_desc())};
      break;
    }
    case DnnlConvPass::BackwardFilter: {
      dnnl::convolution_backward_weights::primitive_desc pd(
          dnnl::convolution_backward_weights::desc(
              dnnl::algorithm::convolution_direct, any(x, in), any(w, dt::f32),
              any(y, in), strides, dil, padL, padR),
          eng, fwd);
      impl->prim = dnnl::convolution_backward_weights(pd);
      impl->impl = pd.impl_info_str();
      impl->operands = {
          operand(DNNL_ARG_DIFF_DST, 0, y, in, tag::nchw, pd.diff_dst_desc()),
          operand(DNNL_ARG_SRC, 1, x, in, tag::nchw, pd.src_desc()),
          operand(DNNL_ARG_DIFF_WEIGHTS, 3, w, dt::f32, wTag,
                  pd.diff_weights_desc())};
      break;
    }
    }
    for (Operand &o : impl->operands) {
      if (o.user == o.inside)
        continue;
      o.reordered = true;
      o.reorder = o.slot == 3 ? dnnl::reorder(dnnl::reorder::primitive_desc(
                                    eng, o.inside, eng, o.user))
                              : dnnl::reorder(dnnl::reorder::primitive_desc(
                                    eng, o.user, eng, o.inside));
    }
    impl->stream = dnnl::stream(eng);
  } catch (const dnnl::error &e) {
    return dnnlError("convolution creation", e);
  }
  out.reset(new DnnlConvolution(std::move(impl)));
  return Status::ok();
}

std::string DnnlConvolution::implementation() const { return impl_->impl; }

Status DnnlConvolution::run(const void *in0, const void *in1, const void *bias,
                            float *out) const {
  try {
    const dnnl::engine &eng = dnnlEngine();
    dnnl::stream &stream = impl_->stream;
    const void *slots[] = {in0, in1, bias, out};
    std::unordered_map<int, dnnl::memory> args;
    std::vector<std::pair<const Impl::Operand *, dnnl::memory>> results;
    // The operands in oneDNN's layouts; kept between runs (Scratch.h).
    Scratch<uint8_t> layouts[4];
    for (const Impl::Operand &o : impl_->operands) {
      dnnl::memory user(o.user, eng, const_cast<void *>(slots[o.slot]));
      if (!o.reordered) {
        args.emplace(o.arg, user);
        continue;
      }
      dnnl::memory inside(o.inside, eng,
                          layouts[o.slot].resize(o.inside.get_size()));
      if (o.slot == 3)
        results.emplace_back(&o, user);
      else
        o.reorder.execute(stream, user, inside);
      args.emplace(o.arg, inside);
    }
    impl_->prim.execute(stream, args);
    for (auto &[o, user] : results)
      o->reorder.execute(stream, args.at(o->arg), user);
    stream.wait();
  } catch (const dnnl::error &e) {
    return dnnlError("convolution", e);
  }
  return Status::ok();
}

} // namespace ampc::rt::cpu
