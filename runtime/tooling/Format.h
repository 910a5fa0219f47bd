//===- Format.h - numbers as amp-run's messages write them ------*- C++ -*-===//
//
// The few number formats more than one file of amp-run writes into its
// messages. MLIR-free, so amp-exec can share them. (Metrics.h has its own:
// the shortest text that reads back as the same double.)
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_FORMAT_H
#define AMPC_RUNTIME_TOOLING_FORMAT_H

#include <cstdint>
#include <string>

namespace ampc::tools {

/// `v` with nine significant digits ("%.9g"), as amp-run's messages give a
/// value or a loss scale: enough for an f32 to read back exactly.
std::string nineDigits(double v);

/// "0x" and the eight lowercase hex digits of `v` (a magic number, a CRC).
std::string hex32(uint32_t v);

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_FORMAT_H
