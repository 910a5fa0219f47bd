//===- Einsum.cpp - ONNX Einsum -> transpose, reshape, matmul -------------===//
//
// The contractions attention and bilinear layers write as Einsum, lowered
// to ops that have gradients and kernels: each operand first sums the
// letters only it has and the output lacks; with two operands, the letters
// both have and the output keeps are the batch, the ones both have and the
// output lacks are contracted, and the rest belong to one side. Each side is
// transposed to [batch, own, contracted] (or [batch, contracted, own]),
// reshaped to 3-D, multiplied, and the product reshaped and transposed to
// the output's order. One operand is a sum and a transpose. An ellipsis
// stands for the same leading letters in every term. A letter repeated in
// one term (a diagonal) is not supported.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"

#include "llvm/ADT/StringExtras.h"

using namespace mlir;
namespace ampc::onnx_to_graph {
namespace {

/// Einsum entered the default domain at opset 12.
constexpr int64_t kMinEinsum = 12;

/// One term of the equation as letters, its ellipsis expanded.
using Term = SmallVector<char>;

class Lowering {
public:
  explicit Lowering(NodeBinder &n) : n(n) {}
  NodeBinder &n;
  llvm::DenseMap<char, int64_t> size;

  Value transpose(Value v, const Term &from, const Term &to) {
    if (from == to)
      return v;
    SmallVector<int64_t> perm;
    for (char c : to)
      perm.push_back(llvm::find(from, c) - from.begin());
    auto r = n.create1<graph::TransposeOp>(
        v, {n.named("perm", n.b.getDenseI64ArrayAttr(perm))});
    return succeeded(r) ? *r : Value();
  }

  /// Sums the letters of `t` that `keep` lacks.
  Value sumOthers(Value v, Term &t, const Term &keep) {
    SmallVector<int64_t> axes;
    Term rest;
    for (auto [i, c] : llvm::enumerate(t)) {
      if (llvm::is_contained(keep, c))
        rest.push_back(c);
      else
        axes.push_back(i);
    }
    if (axes.empty())
      return v;
    auto r = n.create1<graph::ReduceSumOp>(
        v, {n.named("axes", n.b.getDenseI64ArrayAttr(axes)),
            n.named("keepdims", n.b.getBoolAttr(false))});
    t = rest;
    return succeeded(r) ? *r : Value();
  }

  int64_t product(const Term &t) {
    int64_t p = 1;
    for (char c : t)
      p *= size[c];
    return p;
  }
  SmallVector<int64_t> shapeOf(const Term &t) {
    SmallVector<int64_t> s;
    for (char c : t)
      s.push_back(size[c]);
    return s;
  }
};

/// Splits "ab,bc->ac" into terms, expanding "..." to the leading letters
/// '0'.. of the operand ranks; error on anything else.
LogicalResult parse(NodeBinder &n, StringRef eq, ArrayRef<int64_t> ranks,
                    SmallVectorImpl<Term> &inputs, Term &output) {
  std::string s;
  for (char c : eq)
    if (c != ' ')
      s.push_back(c);
  StringRef all(s);
  auto [lhs, rhs] = all.split("->");
  bool explicitOut = all.contains("->");
  SmallVector<StringRef> parts;
  lhs.split(parts, ',');
  if (parts.size() != ranks.size())
    return n.error() << "equation '" << eq << "' has " << parts.size()
                     << " input terms but the node has " << ranks.size()
                     << " inputs",
           failure();
  int64_t ellipsisRank = -1;
  auto expand = [&](StringRef p, int64_t rank, Term &t) -> LogicalResult {
    size_t dots = p.find("...");
    int64_t letters =
        static_cast<int64_t>(p.size()) - (dots == StringRef::npos ? 0 : 3);
    int64_t e = dots == StringRef::npos ? 0 : rank - letters;
    if (e < 0 || (dots == StringRef::npos && letters != rank))
      return n.error() << "term '" << p << "' of equation '" << eq
                       << "' does not match its operand's rank " << rank,
             failure();
    if (dots != StringRef::npos) {
      if (ellipsisRank >= 0 && ellipsisRank != e)
        return n.error() << "the ellipsis of equation '" << eq
                         << "' stands for different ranks",
               failure();
      ellipsisRank = e;
    }
    for (size_t i = 0; i < p.size(); ++i) {
      if (i == dots) {
        for (int64_t k = 0; k < e; ++k)
          t.push_back(static_cast<char>('0' + k));
        i += 2;
        continue;
      }
      if (!llvm::isAlpha(p[i]))
        return n.error() << "equation '" << eq << "' has '" << p[i]
                         << "', which is not a letter",
               failure();
      t.push_back(p[i]);
    }
    llvm::SmallDenseSet<char> seen;
    for (char c : t)
      if (!seen.insert(c).second)
        return n.error() << "equation '" << eq << "' repeats '" << c
                         << "' in one term (a diagonal), which is not "
                            "supported",
               failure();
    return success();
  };
  for (auto [p, rank] : llvm::zip(parts, ranks)) {
    inputs.emplace_back();
    if (failed(expand(p, rank, inputs.back())))
      return failure();
  }
  if (explicitOut) {
    for (char c : rhs)
      if (c != '.' && !llvm::any_of(inputs, [&](const Term &t) {
            return llvm::is_contained(t, c);
          }))
        return n.error() << "output letter '" << c << "' of equation '" << eq
                         << "' is in no input",
               failure();
    return expand(rhs,
                  static_cast<int64_t>(rhs.size()) -
                      (rhs.contains("...") ? 3 : 0) +
                      std::max<int64_t>(ellipsisRank, 0),
                  output);
  }
  // Implicit output: the ellipsis, then the letters used once, sorted.
  for (int64_t k = 0; k < ellipsisRank; ++k)
    output.push_back(static_cast<char>('0' + k));
  std::map<char, int> count;
  for (const Term &t : inputs)
    for (char c : t)
      if (llvm::isAlpha(c))
        ++count[c];
  for (auto [c, uses] : count)
    if (uses == 1)
      output.push_back(c);
  return success();
}

FailureOr<SmallVector<Value>> convertEinsum(NodeBinder &n) {
  SmallVector<Value> ops;
  SmallVector<int64_t> ranks;
  for (unsigned i = 0; i < n.numInputs(); ++i) {
    Value v = n.input(i);
    if (!v)
      return n.error() << "input #" << i << " is missing", failure();
    ops.push_back(v);
    ranks.push_back(n.typeOf(v).getRank());
  }
  if (ops.empty() || ops.size() > 2)
    return n.error() << "has " << ops.size()
                     << " inputs; ampc lowers Einsum of one or two",
           failure();
  std::string eq = n.strAttr("equation", "");
  SmallVector<Term> terms;
  Term out;
  if (failed(parse(n, eq, ranks, terms, out)))
    return failure();
  Lowering l(n);
  for (auto [v, t] : llvm::zip(ops, terms))
    for (auto [i, c] : llvm::enumerate(t)) {
      int64_t d = n.typeOf(v).getDimSize(i);
      auto [it, added] = l.size.try_emplace(c, d);
      if (!added && it->second != d)
        return n.error() << "letter '" << c << "' of equation '" << eq
                         << "' has sizes " << it->second << " and " << d,
               failure();
    }
  if (ops.size() == 2 &&
      n.typeOf(ops[0]).getElementType() != n.typeOf(ops[1]).getElementType())
    return n.error() << "the inputs have different element types", failure();
  if (ops.size() == 1) {
    Term t = terms[0];
    Value v = l.sumOthers(ops[0], t, out);
    v = v ? l.transpose(v, t, out) : Value();
    if (!v)
      return failure();
    return SmallVector<Value>{v};
  }
  // Sum what only one side has and the output lacks.
  Term a = terms[0], b = terms[1];
  Term keepA = out, keepB = out;
  keepA.append(b.begin(), b.end());
  keepB.append(a.begin(), a.end());
  Value va = l.sumOthers(ops[0], a, keepA), vb = l.sumOthers(ops[1], b, keepB);
  if (!va || !vb)
    return failure();
  Term batch, contracted, ownA, ownB;
  for (char c : a) {
    bool inB = llvm::is_contained(b, c), inOut = llvm::is_contained(out, c);
    (inB ? (inOut ? batch : contracted) : ownA).push_back(c);
  }
  for (char c : b)
    if (!llvm::is_contained(a, c))
      ownB.push_back(c);
  Term ta = batch, tb = batch;
  ta.append(ownA.begin(), ownA.end());
  ta.append(contracted.begin(), contracted.end());
  tb.append(contracted.begin(), contracted.end());
  tb.append(ownB.begin(), ownB.end());
  int64_t nb = l.product(batch), m = l.product(ownA), k = l.product(contracted),
          nn = l.product(ownB);
  Value pa = l.transpose(va, a, ta), pb = l.transpose(vb, b, tb);
  if (!pa || !pb)
    return failure();
  auto mm = n.create1<graph::MatMulOp>(
      {n.reshape(pa, {nb, m, k}), n.reshape(pb, {nb, k, nn})});
  if (failed(mm))
    return failure();
  Term prod = batch;
  prod.append(ownA.begin(), ownA.end());
  prod.append(ownB.begin(), ownB.end());
  Value y = l.transpose(n.reshape(*mm, l.shapeOf(prod)), prod, out);
  if (!y)
    return failure();
  return SmallVector<Value>{y};
}

} // namespace

void populateEinsumHandlers(HandlerTable &t) {
  addHandler(t, "Einsum", kMinEinsum, kMaxOpset, convertEinsum);
}

} // namespace ampc::onnx_to_graph
