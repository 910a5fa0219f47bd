//===- AmpLists.h - the AMP op categories -----------------------*- C++ -*-===//
//
// The one table that says which graph ops run in low precision at each AMP
// level, and the user's edits to it. amp-auto-cast reads it and
// `amp-opt --amp-print-lists` prints it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TRANSFORMS_AMPLISTS_H
#define AMPC_COMPILER_TRANSFORMS_AMPLISTS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace ampc {

enum class AmpCategory {
  Allow,    // runs low from O1 on: contractions, where Tensor Cores pay
  Infer,    // runs low when its activation inputs are low (O1), always at O2
  Clear,    // data movement and exact ops: like infer, never a cast by itself
  Deny,     // numerically sensitive: f32 at O1 and O2 (but Graph_WideCompute
            // ops at O2: AutoCast.cpp)
  Unlisted, // taken off every list by the user: f32 at O1 and O2
};

llvm::StringRef categoryName(AmpCategory c);

/// Op name (the graph mnemonic, e.g. "matmul") -> category.
class AmpLists {
public:
  /// The defaults: every forward graph op but `cast` and `constant`.
  static AmpLists defaults();

  /// Applies a user's list option: each name moves the op to `to`; a name
  /// with a leading '-' takes it off `to` (it becomes Unlisted). Fails with
  /// a message naming the option and the op when the name is not a listed
  /// graph op, is removed from a list it is not on, or was moved to another
  /// list by an earlier option.
  mlir::LogicalResult edit(llvm::StringRef option, AmpCategory to,
                           llvm::ArrayRef<std::string> names,
                           std::string &error);

  /// The op's category; std::nullopt for ops outside the table (cast,
  /// constant, gradient and optimizer ops).
  std::optional<AmpCategory> lookup(llvm::StringRef opName) const;

  /// Whether a user's option put `opName` on its list.
  bool movedByUser(llvm::StringRef opName) const {
    return namedBy.contains(opName);
  }

  void print(llvm::raw_ostream &os) const;

  /// Every op on the table, in the table's order.
  llvm::ArrayRef<std::string> ops() const { return order; }

private:
  llvm::StringMap<AmpCategory> category;
  std::vector<std::string> order;       // print order: the table's
  llvm::StringMap<std::string> namedBy; // op -> the option that moved it
};

} // namespace ampc

#endif // AMPC_COMPILER_TRANSFORMS_AMPLISTS_H
