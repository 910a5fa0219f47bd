//===- StepInfoAttr.cpp - the graph.step_info function attribute ----------===//
//
// Its shape is checked where it is parsed, so the Program writer (and any
// .mlir file amp-translate reads) can rely on it: a dictionary with exactly
// the keys of graph::step_info, each of its type.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/GraphOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;

namespace ampc::graph {
namespace {

template <typename Check> bool allEntries(DictionaryAttr d, Check &&check) {
  return llvm::all_of(d, [&](NamedAttribute e) { return check(e.getValue()); });
}

bool isI64(Attribute a) {
  auto i = dyn_cast<IntegerAttr>(a);
  return i && i.getType().isInteger(64);
}

} // namespace

LogicalResult verifyStepInfo(Operation *op, Attribute attr) {
  auto bad = [&](const Twine &why) {
    return op->emitOpError("has ") << kStepInfoAttr << " " << why;
  };
  if (!isa<FunctionOpInterface>(op))
    return bad("but only a function may carry it");
  auto d = dyn_cast<DictionaryAttr>(attr);
  if (!d)
    return bad("that is not a dictionary");
  namespace key = step_info;
  struct Key {
    StringLiteral name;
    const char *what;
    function_ref<bool(Attribute)> ok;
    bool optional = false; // absent means its default
  };
  auto isString = [](Attribute a) { return isa<StringAttr>(a); };
  auto intsByName = [](Attribute a) {
    auto m = dyn_cast<DictionaryAttr>(a);
    return m && allEntries(m, isI64);
  };
  const Key keys[] = {
      {key::kLoss, "a string", isString},
      {key::kChecksOverflow, "a bool",
       [](Attribute a) { return isa<BoolAttr>(a); }},
      {key::kStaticScale, "an f64",
       [](Attribute a) {
         auto f = dyn_cast<FloatAttr>(a);
         return f && f.getType().isF64();
       }},
      {key::kClasses, "a dictionary of i64", intsByName},
      {key::kIgnoreIndex, "a dictionary of i64", intsByName},
      {key::kWeights, "an array of strings",
       [&](Attribute a) {
         auto arr = dyn_cast<ArrayAttr>(a);
         return arr && llvm::all_of(arr, isString);
       }},
      {key::kWorkingCopies, "a dictionary of strings",
       [&](Attribute a) {
         auto m = dyn_cast<DictionaryAttr>(a);
         return m && allEntries(m, isString);
       }},
      {key::kAccumulate, "an i64 >= 1",
       [](Attribute a) {
         return isI64(a) && cast<IntegerAttr>(a).getInt() >= 1;
       }},
      {key::kWorldSize, "an i64 >= 1",
       [](Attribute a) {
         return isI64(a) && cast<IntegerAttr>(a).getInt() >= 1;
       },
       /*optional=*/true},
  };
  for (const Key &k : keys) {
    Attribute v = d.get(k.name);
    if (!v && k.optional)
      continue;
    if (!v)
      return bad("without '" + k.name + "'");
    if (!k.ok(v))
      return bad("whose '" + k.name + "' is not " + k.what);
  }
  for (NamedAttribute e : d)
    if (llvm::none_of(keys,
                      [&](const Key &k) { return k.name == e.getName(); }))
      return bad("with an unknown key '" + e.getName().getValue() + "'");
  return success();
}

} // namespace ampc::graph
