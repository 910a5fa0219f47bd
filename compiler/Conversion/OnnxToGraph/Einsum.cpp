//===- Einsum.cpp - ONNX Einsum -> transpose, reshape, matmul -------------===//
//
// The contractions attention and bilinear layers write as Einsum, lowered
// to ops that have gradients and kernels: each operand first sums the
// letters only it has and the output lacks; with two operands, the letters
// both have and the output keeps are the batch, the ones both have and the
// output lacks are contracted, and the rest belong to one side. Each side is
// transposed to [batch, own, contracted] (or [batch, contracted, own]),
// reshaped to 3-D, multiplied, and the product reshaped and transposed to
// the output's order. One operand is a sum and a transpose; three or more
// are contracted pairwise from the left, each product keeping the letters
// the output or a later operand needs. An ellipsis stands for the same
// leading letters in every term. A letter repeated in one input term takes
// that operand's diagonal first (a gather on the two axes merged).
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
    auto r = n.transpose(v, perm);
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

  /// Takes the diagonal of every letter `t` repeats: the two axes moved
  /// last, merged, and gathered at k * (d + 1); the letter then appears
  /// once, last.
  Value diagonals(Value v, Term &t) {
    for (;;) {
      // The first letter that appears twice, at i and j.
      size_t i = 0, j = 0;
      for (size_t k = 1; k < t.size() && !j; ++k)
        for (size_t p = 0; p < k && !j; ++p)
          if (t[p] == t[k])
            i = p, j = k;
      if (!j)
        return v;
      char c = t[i];
      // By position: transpose() finds letters by value, and c is twice.
      Term moved;
      SmallVector<int64_t> perm;
      for (size_t k = 0; k < t.size(); ++k)
        if (k != i && k != j) {
          moved.push_back(t[k]);
          perm.push_back(k);
        }
      perm.push_back(i);
      perm.push_back(j);
      auto r = n.transpose(v, perm);
      if (failed(r))
        return Value();
      SmallVector<int64_t> merged = shapeOf(moved);
      int64_t d = size[c];
      merged.push_back(d * d);
      SmallVector<int64_t> index;
      for (int64_t k = 0; k < d; ++k)
        index.push_back(k * (d + 1));
      auto g = gatherAxis(n, n.reshape(*r, merged), merged.size() - 1, index);
      if (failed(g))
        return Value();
      v = *g;
      moved.push_back(c);
      t = moved;
    }
  }

  /// `va` (letters `a`) times `vb` (letters `b`), summed over the letters
  /// `keep` lacks, in `keep`'s order.
  Value contract(Value va, Term a, Value vb, Term b, const Term &keep) {
    // Sum what only one side has and `keep` lacks.
    Term keepA = keep, keepB = keep;
    keepA.append(b.begin(), b.end());
    keepB.append(a.begin(), a.end());
    va = sumOthers(va, a, keepA);
    vb = sumOthers(vb, b, keepB);
    if (!va || !vb)
      return Value();
    Term batch, contracted, ownA, ownB;
    for (char c : a) {
      bool inB = llvm::is_contained(b, c), kept = llvm::is_contained(keep, c);
      (inB ? (kept ? batch : contracted) : ownA).push_back(c);
    }
    for (char c : b)
      if (!llvm::is_contained(a, c))
        ownB.push_back(c);
    Term ta = batch, tb = batch;
    ta.append(ownA.begin(), ownA.end());
    ta.append(contracted.begin(), contracted.end());
    tb.append(contracted.begin(), contracted.end());
    tb.append(ownB.begin(), ownB.end());
    int64_t nb = product(batch), m = product(ownA), k = product(contracted),
            nn = product(ownB);
    Value pa = transpose(va, a, ta), pb = transpose(vb, b, tb);
    if (!pa || !pb)
      return Value();
    auto mm = n.create1<graph::MatMulOp>(
        {n.reshape(pa, {nb, m, k}), n.reshape(pb, {nb, k, nn})});
    if (failed(mm))
      return Value();
    Term prod = batch;
    prod.append(ownA.begin(), ownA.end());
    prod.append(ownB.begin(), ownB.end());
    return transpose(n.reshape(*mm, shapeOf(prod)), prod, keep);
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
  auto expand = [&](StringRef p, int64_t rank, Term &t,
                    bool isOutput) -> LogicalResult {
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
      if (isOutput && !seen.insert(c).second)
        return n.error() << "equation '" << eq << "' repeats '" << c
                         << "' in its output term",
               failure();
    return success();
  };
  for (auto [p, rank] : llvm::zip(parts, ranks)) {
    inputs.emplace_back();
    if (failed(expand(p, rank, inputs.back(), /*isOutput=*/false)))
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
                  output, /*isOutput=*/true);
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
  if (ops.empty())
    return n.error() << "has no inputs", failure();
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
  for (Value v : ops)
    if (n.typeOf(v).getElementType() != n.typeOf(ops[0]).getElementType())
      return n.error() << "the inputs have different element types", failure();
  for (size_t i = 0; i < ops.size(); ++i)
    if (!(ops[i] = l.diagonals(ops[i], terms[i])))
      return failure();
  if (ops.size() == 1) {
    Term t = terms[0];
    Value v = l.sumOthers(ops[0], t, out);
    v = v ? l.transpose(v, t, out) : Value();
    if (!v)
      return failure();
    return SmallVector<Value>{v};
  }
  // From the left: each product keeps the letters the output or a later
  // operand has, the last one exactly the output's.
  Value acc = ops[0];
  Term accTerm = terms[0];
  for (size_t i = 1; i < ops.size(); ++i) {
    Term keep;
    if (i + 1 == ops.size()) {
      keep = out;
    } else {
      auto needed = [&](char c) {
        if (llvm::is_contained(out, c))
          return true;
        for (size_t j = i + 1; j < terms.size(); ++j)
          if (llvm::is_contained(terms[j], c))
            return true;
        return false;
      };
      for (const Term *t : {&accTerm, &terms[i]})
        for (char c : *t)
          if (needed(c) && !llvm::is_contained(keep, c))
            keep.push_back(c);
    }
    acc = l.contract(acc, accTerm, ops[i], terms[i], keep);
    if (!acc)
      return failure();
    accTerm = keep;
  }
  return SmallVector<Value>{acc};
}

} // namespace

void populateEinsumHandlers(HandlerTable &t) {
  addHandler(t, "Einsum", kMinEinsum, kMaxOpset, convertEinsum);
}

} // namespace ampc::onnx_to_graph
