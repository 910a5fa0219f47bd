"""Writes damaged copies of a Program file (runtime/program.proto) for
programs.test, as a disk or a copy would damage one.

usage: bad_program.py MODEL.onnx PROGRAM OUT_DIR

The Program is MODEL's (an f32 step keeps the initializers' bytes as they
are). Writes, in OUT_DIR:
  flipped.program      one bit of the initializer 'w' flipped: it still
                       parses, and only the checksum tells
  no-checksum.program  the 5 bytes of the checksum field that ends it cut
  version2.program     as an ampc of Program version 2 wrote it (the
                       version field 2, no checksum)
  cut.program          its first 100 bytes
  garbage.program      bytes that are no protobuf message
  empty.program        no bytes
"""
import os
import sys

import onnx
from onnx import numpy_helper

CHECKSUM_BYTES = 5  # field 6, fixed32: the tag (6 << 3) | 5, then 4 bytes


def main():
    model_path, program_path, out = sys.argv[1:4]
    model = onnx.load(model_path)
    w = next(t for t in model.graph.initializer if t.name == "w")
    weight = numpy_helper.to_array(w).astype("<f4").tobytes()
    data = open(program_path, "rb").read()
    assert data.count(weight) == 1, "the weight's bytes are not in the Program once"
    assert data[-CHECKSUM_BYTES] == 0x35, "the Program does not end with its checksum"
    assert data[:2] == b"\x08\x04", "not a training Program of version 4"

    def write(name, content):
        with open(os.path.join(out, name), "wb") as f:
            f.write(content)

    flipped = bytearray(data)
    flipped[data.index(weight) + 1] ^= 0x01
    write("flipped.program", bytes(flipped))
    write("no-checksum.program", data[:-CHECKSUM_BYTES])
    write("version2.program", b"\x08\x02" + data[2:-CHECKSUM_BYTES])
    write("cut.program", data[:100])
    write("garbage.program", b"\xff\xff\xff not a Program")
    write("empty.program", b"")


if __name__ == "__main__":
    main()
