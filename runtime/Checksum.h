//===- Checksum.h - the CRC-32 that guards the files ampc writes *- C++ -*-===//
//
// Checkpoints and Program files end with the CRC-32 of their bytes, so that
// a file damaged after it was written is refused rather than read as other
// numbers. zlib's CRC-32 (ISO-HDLC: reflected 0x04C11DB7, the one of gzip,
// PNG and Python's zlib.crc32), so a script can check one too.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CHECKSUM_H
#define AMPC_RUNTIME_CHECKSUM_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace ampc::rt {

/// The CRC-32 of `size` bytes at `data`; given the CRC-32 of the bytes
/// before them as `before`, the CRC-32 of both.
uint32_t crc32Of(const void *data, size_t size, uint32_t before = 0);

/// "0x" and the eight lowercase hex digits of `v` (a CRC, a magic number).
std::string hex32(uint32_t v);

} // namespace ampc::rt

#endif // AMPC_RUNTIME_CHECKSUM_H
