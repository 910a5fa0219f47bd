//===- AmpReport.cpp - what amp-auto-cast decided, as JSON ----------------===//
#include "compiler/Transforms/AmpReport.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace llvm;

namespace ampc {

json::Object AmpReport::toJson() const {
  json::Array opsJson;
  std::map<std::string, int64_t> byPrecision;
  for (const Op &o : ops) {
    opsJson.push_back(json::Object{{"node", o.node},
                                   {"op", o.op},
                                   {"precision", o.precision},
                                   {"rule", o.rule}});
    ++byPrecision[o.precision];
  }
  json::Array paramsJson;
  for (const Param &p : params) {
    json::Array copies;
    for (const std::string &c : p.workingCopies)
      copies.push_back(c);
    paramsJson.push_back(json::Object{{"name", p.name},
                                      {"stored", p.stored},
                                      {"working", std::move(copies)}});
  }
  json::Object counts;
  for (auto &[k, v] : byPrecision)
    counts[k] = v;
  return json::Object{{"level", level},
                      {"dtype", dtype},
                      {"ops", std::move(opsJson)},
                      {"ops_by_precision", std::move(counts)},
                      {"params", std::move(paramsJson)},
                      {"casts_inserted", castsInserted}};
}

mlir::LogicalResult AmpReport::write(const json::Object &json, StringRef path,
                                     std::string &error) {
  Error e = writeToOutput(path, [&](raw_ostream &os) {
    os << formatv("{0:2}", json::Value(json::Object(json))) << "\n";
    return Error::success();
  });
  if (e) {
    error = "cannot write the AMP report '" + path.str() +
            "': " + toString(std::move(e));
    return mlir::failure();
  }
  return mlir::success();
}

} // namespace ampc
