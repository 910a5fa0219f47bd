//===- Format.h - numbers as amp-run's messages write them ------*- C++ -*-===//
//
// The few number formats more than one file of amp-run writes into its
// messages. MLIR-free, so amp-exec can share them. (Metrics.h has its own:
// the shortest text that reads back as the same double.)
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_FORMAT_H
#define AMPC_RUNTIME_TOOLING_FORMAT_H

#include "runtime/Checksum.h"

#include <cstdint>
#include <string>

namespace ampc::tools {

/// `v` with nine significant digits ("%.9g"), as amp-run's messages give a
/// value or a loss scale: enough for an f32 to read back exactly.
std::string nineDigits(double v);

/// "0x" and the eight lowercase hex digits of `v` (a magic number, a CRC):
/// the runtime's, which the Program loader's messages use too.
using ::ampc::rt::hex32;

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_FORMAT_H
