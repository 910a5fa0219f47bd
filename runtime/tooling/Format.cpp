//===- Format.cpp - numbers as amp-run's messages write them --------------===//

#include "runtime/tooling/Format.h"

#include <cinttypes>
#include <cstdio>

namespace ampc::tools {

std::string nineDigits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

} // namespace ampc::tools
