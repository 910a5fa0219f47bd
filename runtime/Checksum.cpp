//===- Checksum.cpp - the CRC-32 that guards the files ampc writes --------===//

#include "runtime/Checksum.h"

#include <zlib.h>

#include <cstdio>

namespace ampc::rt {

uint32_t crc32Of(const void *data, size_t size, uint32_t before) {
  // zlib answers a null buffer (an empty vector's data()) with the initial
  // value, 0, whatever came before.
  if (size == 0)
    return before;
  return static_cast<uint32_t>(
      crc32_z(before, static_cast<const unsigned char *>(data), size));
}

std::string hex32(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%08x", static_cast<unsigned>(v));
  return text;
}

} // namespace ampc::rt
