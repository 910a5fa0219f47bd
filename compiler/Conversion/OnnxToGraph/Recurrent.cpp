//===- Recurrent.cpp - ONNX LSTM and GRU -> graph, unrolled ---------------===//
//
// Sequences are static, so an LSTM or GRU becomes its time steps written out
// with existing graph ops: one GEMM per direction applies the input weights
// to every step at once (with both biases as its C), then each step adds
// the recurrent GEMM of the previous hidden state, slices the gates, and
// applies ONNX's equations elementwise. Gradients come from those ops
// (backpropagation through time), and every backend runs them.
//
// Supported: the default activations (sigmoid, tanh, tanh), directions
// forward, reverse and bidirectional, layout 0 and 1, LSTM peepholes,
// GRU's linear_before_reset (PyTorch exports 1), initial states, and
// sequence_lens only as a constant that is the whole sequence for every
// batch element.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"
#include "dialects/Graph/ShapeInference.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
namespace ampc::onnx_to_graph {
namespace {

constexpr int64_t kMaxSteps = 4096;

/// Emits the graph ops of one recurrent node; every helper returns null
/// after reporting an error on the node.
class Unroller {
public:
  Unroller(NodeBinder &n, int64_t gates) : n(n), gates(gates) {}

  NodeBinder &n;
  int64_t gates; // 4 for LSTM (i o f c), 3 for GRU (z r h)
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, layout = 0;
  bool reverse = false;
  Type elem;
  Value x, w, r; // X in layout 0, and the node's W and R

  /// Rows [begin, end) of dimension `axis` of `v`.
  Value slice(Value v, int64_t axis, int64_t begin, int64_t end) {
    FailureOr<Value> res = sliceAxis(n, v, axis, begin, end);
    return succeeded(res) ? *res : Value();
  }

  template <typename OpTy>
  Value op(ValueRange operands, ArrayRef<NamedAttribute> attrs = {}) {
    auto res = n.create1<OpTy>(operands, attrs);
    return succeeded(res) ? *res : Value();
  }

  /// a [M, K] times b [N, K] transposed, plus c broadcast to [M, N].
  Value linear(Value a, Value b, Value c) {
    SmallVector<Value> operands{a, b};
    if (c)
      operands.push_back(c);
    return op<graph::GemmOp>(operands,
                             {n.named("trans_b", n.b.getBoolAttr(true))});
  }

  Value add(Value a, Value b) {
    return a && b ? op<graph::AddOp>({a, b}) : Value();
  }
  Value mul(Value a, Value b) {
    return a && b ? op<graph::MulOp>({a, b}) : Value();
  }
  Value sub(Value a, Value b) {
    return a && b ? op<graph::SubOp>({a, b}) : Value();
  }
  Value sigmoid(Value a) { return a ? op<graph::SigmoidOp>(a) : Value(); }
  Value tanh(Value a) { return a ? op<graph::TanhOp>(a) : Value(); }

  /// Gate `k` (of `gates`) of a [B, gates * H] value: [B, H].
  Value gate(Value v, int64_t k) {
    return v ? slice(v, 1, k * hidden, (k + 1) * hidden) : Value();
  }

  /// Direction `d` of a [dirs, ...] weight, without that dimension.
  Value ofDirection(Value w, int64_t d) {
    Value s = slice(w, 0, d, d + 1);
    if (!s)
      return {};
    auto shape = n.typeOf(s).getShape().drop_front();
    return n.reshape(s, shape);
  }

  /// Checks X, W, R and the attributes both ops share, and reads the
  /// sizes. X comes back as [seq, batch, input].
  LogicalResult prepare() {
    for (StringRef a : {"activations", "activation_alpha", "activation_beta"})
      if (n.attr(a))
        return n.error() << "attribute '" << a
                         << "' is not supported: ampc runs the default "
                            "activations only (sigmoid, tanh, tanh)",
               failure();
    if (n.attr("clip"))
      return n.error() << "attribute 'clip' is not supported", failure();
    std::string direction = n.strAttr("direction", "forward");
    if (direction != "forward" && direction != "reverse" &&
        direction != "bidirectional")
      return n.error() << "direction '" << direction
                       << "' is not forward, reverse or bidirectional",
             failure();
    reverse = direction == "reverse";
    dirs = direction == "bidirectional" ? 2 : 1;
    layout = n.opset() >= 14 ? n.intAttr("layout", 0) : 0;
    if (layout != 0 && layout != 1)
      return n.error() << "layout must be 0 or 1, got " << layout, failure();
    auto xt = n.typeOf(x);
    if (xt.getRank() != 3 || !isa<FloatType>(xt.getElementType()))
      return n.error() << "X must be a float tensor of rank 3, got " << xt,
             failure();
    elem = xt.getElementType();
    if (layout == 1) {
      auto t = n.create1<graph::TransposeOp>(
          x, {n.named("perm", n.b.getDenseI64ArrayAttr({1, 0, 2}))});
      if (failed(t))
        return failure();
      x = *t;
      xt = n.typeOf(x);
    }
    seq = xt.getDimSize(0);
    batch = xt.getDimSize(1);
    input = xt.getDimSize(2);
    std::optional<int64_t> h = n.intAttr("hidden_size");
    auto wt = n.typeOf(w), rt = n.typeOf(r);
    if (wt.getRank() != 3 || rt.getRank() != 3)
      return n.error() << "W and R must have rank 3, got " << wt << " and "
                       << rt,
             failure();
    hidden = h ? *h : rt.getDimSize(2);
    if (hidden < 1 || hidden > (int64_t(1) << 40) / gates)
      return n.error() << "hidden_size " << hidden << " is out of range",
             failure();
    SmallVector<int64_t> wantW{dirs, gates * hidden, input},
        wantR{dirs, gates * hidden, hidden};
    if (wt.getShape() != ArrayRef<int64_t>(wantW) ||
        rt.getShape() != ArrayRef<int64_t>(wantR))
      return n.error() << "W " << wt << " and R " << rt << " must be "
                       << shape::str(wantW) << " and " << shape::str(wantR)
                       << " for hidden_size " << hidden << ", " << dirs
                       << " direction(s) and input size " << input,
             failure();
    if (wt.getElementType() != elem || rt.getElementType() != elem)
      return n.error() << "W and R must have X's element type " << elem,
             failure();
    if (seq == 0)
      return n.error() << "the sequence is empty", failure();
    // Every step is written out: a sequence this long would make millions
    // of ops (and hours of compiling) before any error.
    if (seq > kMaxSteps)
      return n.error() << "the sequence has " << seq << " steps; ampc unrolls "
                       << "at most " << kMaxSteps << " at compile time",
             failure();
    return success();
  }

  /// Reads X, W and R, checks what both ops share and sequence_lens.
  LogicalResult begin() {
    auto xi = n.required(0, "X"), wi = n.required(1, "W"),
         ri = n.required(2, "R");
    if (failed(xi) || failed(wi) || failed(ri))
      return failure();
    x = *xi;
    w = *wi;
    r = *ri;
    return failure(failed(prepare()) || failed(checkSequenceLens(4)));
  }

  /// sequence_lens, when given, must be a constant of the whole length.
  LogicalResult checkSequenceLens(unsigned index) {
    if (!n.input(index))
      return success();
    auto lens = n.constInts(index, "sequence_lens");
    if (failed(lens))
      return failure();
    for (int64_t l : *lens)
      if (l != seq)
        return n.error() << "sequence_lens has an entry " << l
                         << " shorter than the sequence (" << seq
                         << "): ampc runs the whole static sequence",
               failure();
    return success();
  }

  /// Input `index` ([dirs, batch, hidden], or [batch, dirs, hidden] in
  /// layout 1) for direction d as [B, H], or zeros.
  Value initial(unsigned index, int64_t d) {
    if (Value v = n.input(index)) {
      auto t = n.typeOf(v);
      SmallVector<int64_t> want{dirs, batch, hidden};
      if (layout == 1)
        std::swap(want[0], want[1]);
      if (t.getShape() != ArrayRef<int64_t>(want) || t.getElementType() != elem)
        return n.error() << "input #" << index << " must be "
                         << RankedTensorType::get(want, elem) << ", got " << t,
               Value();
      if (layout == 1)
        v = op<graph::TransposeOp>(
            v, {n.named("perm", n.b.getDenseI64ArrayAttr({1, 0, 2}))});
      return v ? ofDirection(v, d) : Value();
    }
    auto type = RankedTensorType::get({batch, hidden}, elem);
    return n.constant(DenseElementsAttr::get(type, n.b.getFloatAttr(elem, 0)));
  }

  /// The input and recurrent biases of B ([dirs, 2 * gates * H]) for
  /// direction d, each [gates * H]; null when B is absent.
  LogicalResult biases(unsigned index, int64_t d, Value &wb, Value &rb) {
    Value bias = n.input(index);
    if (!bias)
      return success();
    auto t = n.typeOf(bias);
    SmallVector<int64_t> want{dirs, 2 * gates * hidden};
    if (t.getShape() != ArrayRef<int64_t>(want) || t.getElementType() != elem)
      return n.error() << "B must be " << RankedTensorType::get(want, elem)
                       << ", got " << t,
             failure();
    Value bd = ofDirection(bias, d);
    wb = bd ? slice(bd, 0, 0, gates * hidden) : Value();
    rb = bd ? slice(bd, 0, gates * hidden, 2 * gates * hidden) : Value();
    return success(wb && rb);
  }

  /// X times W^T plus the bias for every step at once: [seq, B, gates*H].
  Value inputProjection(Value x, Value w, Value bias) {
    Value flat = n.reshape(x, {seq * batch, input});
    Value p = linear(flat, w, bias);
    return p ? n.reshape(p, {seq, batch, gates * hidden}) : Value();
  }

  /// Step t of a [seq, B, G] value as [B, G].
  Value step(Value v, int64_t t) {
    Value s = slice(v, 0, t, t + 1);
    return s ? n.reshape(s, {batch, n.typeOf(s).getDimSize(2)}) : Value();
  }

  /// Y ([seq, dirs, B, H]) from each direction's hidden states in time
  /// order.
  Value stack(ArrayRef<SmallVector<Value>> perDirection) {
    SmallVector<Value> steps;
    for (int64_t t = 0; t < seq; ++t) {
      SmallVector<Value> dirsAtT;
      for (const SmallVector<Value> &hs : perDirection)
        dirsAtT.push_back(n.reshape(hs[t], {1, 1, batch, hidden}));
      // A concat of one folds to it (one direction, one step).
      Value at = op<graph::ConcatOp>(
          dirsAtT, {n.named("axis", n.b.getI64IntegerAttr(1))});
      if (!at)
        return {};
      steps.push_back(at);
    }
    return op<graph::ConcatOp>(steps,
                               {n.named("axis", n.b.getI64IntegerAttr(0))});
  }

  /// [dirs, B, H] from each direction's final state.
  Value finals(ArrayRef<Value> states) {
    SmallVector<Value> parts;
    for (Value s : states)
      parts.push_back(n.reshape(s, {1, batch, hidden}));
    return op<graph::ConcatOp>(parts,
                               {n.named("axis", n.b.getI64IntegerAttr(0))});
  }

  /// Y in the node's layout: [seq, dirs, B, H], or [B, seq, dirs, H].
  Value layoutY(Value y) {
    if (!y || layout == 0)
      return y;
    return op<graph::TransposeOp>(
        y, {n.named("perm", n.b.getDenseI64ArrayAttr({2, 0, 1, 3}))});
  }
  /// Y_h/Y_c in the node's layout: [dirs, B, H], or [B, dirs, H].
  Value layoutState(Value s) {
    if (!s || layout == 0)
      return s;
    return op<graph::TransposeOp>(
        s, {n.named("perm", n.b.getDenseI64ArrayAttr({1, 0, 2}))});
  }
};

FailureOr<SmallVector<Value>> convertLSTM(NodeBinder &n) {
  Unroller u(n, 4);
  if (failed(u.begin()))
    return failure();
  if (n.intAttr("input_forget", 0))
    return n.error() << "attribute 'input_forget' is not supported", failure();
  Value peep = n.input(7);
  if (peep) {
    auto t = n.typeOf(peep);
    SmallVector<int64_t> want{u.dirs, 3 * u.hidden};
    if (t.getShape() != ArrayRef<int64_t>(want) || t.getElementType() != u.elem)
      return n.error() << "P must be " << RankedTensorType::get(want, u.elem)
                       << ", got " << t,
             failure();
  }
  SmallVector<SmallVector<Value>> outputs;
  SmallVector<Value> lastH, lastC;
  for (int64_t d = 0; d < u.dirs; ++d) {
    Value wd = u.ofDirection(u.w, d), rd = u.ofDirection(u.r, d), wb, rb;
    if (!wd || !rd || failed(u.biases(3, d, wb, rb)))
      return failure();
    Value bias = wb ? u.add(wb, rb) : Value();
    if (wb && !bias)
      return failure();
    Value pi, po, pf;
    if (peep) {
      Value pd = u.ofDirection(peep, d);
      pi = pd ? u.slice(pd, 0, 0, u.hidden) : Value();
      po = pd ? u.slice(pd, 0, u.hidden, 2 * u.hidden) : Value();
      pf = pd ? u.slice(pd, 0, 2 * u.hidden, 3 * u.hidden) : Value();
      if (!pi || !po || !pf)
        return failure();
    }
    Value xw = u.inputProjection(u.x, wd, bias);
    Value h = u.initial(5, d), c = u.initial(6, d);
    if (!xw || !h || !c)
      return failure();
    bool backwards = u.reverse || d == 1;
    SmallVector<Value> hs(u.seq);
    for (int64_t k = 0; k < u.seq; ++k) {
      int64_t t = backwards ? u.seq - 1 - k : k;
      Value g = u.add(u.step(xw, t), u.linear(h, rd, Value()));
      // Gates in ONNX's order: input, output, forget, cell.
      Value i = u.gate(g, 0), o = u.gate(g, 1), f = u.gate(g, 2),
            cc = u.gate(g, 3);
      if (peep) {
        i = u.add(i, u.mul(pi, c));
        f = u.add(f, u.mul(pf, c));
      }
      i = u.sigmoid(i);
      f = u.sigmoid(f);
      c = u.add(u.mul(f, c), u.mul(i, u.tanh(cc)));
      if (peep)
        o = u.add(o, u.mul(po, c));
      h = u.mul(u.sigmoid(o), u.tanh(c));
      if (!h || !c)
        return failure();
      hs[t] = h;
    }
    outputs.push_back(hs);
    lastH.push_back(h);
    lastC.push_back(c);
  }
  Value y = u.layoutY(u.stack(outputs));
  Value yh = u.layoutState(u.finals(lastH));
  Value yc = u.layoutState(u.finals(lastC));
  if (!y || !yh || !yc)
    return failure();
  return SmallVector<Value>{y, yh, yc};
}

FailureOr<SmallVector<Value>> convertGRU(NodeBinder &n) {
  Unroller u(n, 3);
  if (failed(u.begin()))
    return failure();
  bool beforeReset = n.intAttr("linear_before_reset", 0) != 0;
  SmallVector<SmallVector<Value>> outputs;
  SmallVector<Value> last;
  for (int64_t d = 0; d < u.dirs; ++d) {
    Value wd = u.ofDirection(u.w, d), rd = u.ofDirection(u.r, d), wb, rb;
    if (!wd || !rd || failed(u.biases(3, d, wb, rb)))
      return failure();
    // The input GEMM takes every bias that adds outside the reset product:
    // all of them, or with linear_before_reset all but the candidate's
    // recurrent bias Rbh, which the recurrent GEMM adds inside it.
    Value inBias, rbh;
    if (wb) {
      Value sum = u.add(wb, rb);
      inBias = sum;
      if (beforeReset) {
        rbh = u.slice(rb, 0, 2 * u.hidden, 3 * u.hidden);
        Value zr = sum ? u.slice(sum, 0, 0, 2 * u.hidden) : Value();
        Value wbh = u.slice(wb, 0, 2 * u.hidden, 3 * u.hidden);
        inBias = zr && wbh ? u.op<graph::ConcatOp>(
                                 {zr, wbh},
                                 {n.named("axis", n.b.getI64IntegerAttr(0))})
                           : Value();
      }
      if (!inBias || (beforeReset && !rbh))
        return failure();
    }
    Value xw = u.inputProjection(u.x, wd, inBias);
    Value h = u.initial(5, d);
    Value rzr = u.slice(rd, 0, 0, 2 * u.hidden),
          rh = u.slice(rd, 0, 2 * u.hidden, 3 * u.hidden);
    if (!xw || !h || !rzr || !rh)
      return failure();
    Value one = n.constant(DenseElementsAttr::get(
        RankedTensorType::get({}, u.elem), n.b.getFloatAttr(u.elem, 1)));
    bool backwards = u.reverse || d == 1;
    SmallVector<Value> hs(u.seq);
    for (int64_t k = 0; k < u.seq; ++k) {
      int64_t t = backwards ? u.seq - 1 - k : k;
      Value xt = u.step(xw, t);
      if (!xt)
        return failure();
      // z and r: [B, 2H], then the candidate from r.
      Value zr =
          u.add(u.slice(xt, 1, 0, 2 * u.hidden), u.linear(h, rzr, Value()));
      Value z = u.sigmoid(u.gate(zr, 0)), rg = u.sigmoid(u.gate(zr, 1));
      Value xh = u.slice(xt, 1, 2 * u.hidden, 3 * u.hidden);
      Value cand = beforeReset ? u.add(xh, u.mul(rg, u.linear(h, rh, rbh)))
                               : u.add(xh, u.linear(u.mul(rg, h), rh, Value()));
      // H = (1 - z) * tanh(candidate) + z * H.
      h = u.add(u.mul(u.sub(one, z), u.tanh(cand)), u.mul(z, h));
      if (!h)
        return failure();
      hs[t] = h;
    }
    outputs.push_back(hs);
    last.push_back(h);
  }
  Value y = u.layoutY(u.stack(outputs));
  Value yh = u.layoutState(u.finals(last));
  if (!y || !yh)
    return failure();
  return SmallVector<Value>{y, yh};
}

} // namespace

void populateRecurrentHandlers(HandlerTable &t) {
  addHandler(t, "LSTM", kMinOpset, kMaxOpset, convertLSTM);
  addHandler(t, "GRU", kMinOpset, kMaxOpset, convertGRU);
}

} // namespace ampc::onnx_to_graph
