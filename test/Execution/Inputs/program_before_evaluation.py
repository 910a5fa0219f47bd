"""Copies a training Program (runtime/program.proto) as an ampc before
Program version 4 wrote it: without the @forward that evaluates the test
split, version 3, its checksum computed again. It reads the protobuf wire
format itself: the Program's top-level fields, and each function's name.

usage: program_before_evaluation.py IN.program OUT.program
"""
import struct
import sys
import zlib

VARINT, FIXED64, BYTES, FIXED32 = 0, 1, 2, 5
VERSION, FUNCTIONS, CHECKSUM = 1, 3, 6  # Program's fields
NAME = 1  # Function's


def varint(data, at):
    value, shift = 0, 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def encode_varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def fields(data):
    """(field number, wire type, the field's bytes, its payload) in order."""
    at = 0
    while at < len(data):
        start = at
        key, at = varint(data, at)
        number, kind = key >> 3, key & 7
        if kind == VARINT:
            payload, at = varint(data, at)
        elif kind == FIXED64:
            payload, at = data[at:at + 8], at + 8
        elif kind == FIXED32:
            payload, at = data[at:at + 4], at + 4
        elif kind == BYTES:
            size, at = varint(data, at)
            payload, at = data[at:at + size], at + size
        else:
            sys.exit("unexpected wire type %d" % kind)
        yield number, kind, data[start:at], payload


def name_of(function):
    for number, kind, _, payload in fields(function):
        if number == NAME and kind == BYTES:
            return payload.decode()
    return ""


def main():
    src, dst = sys.argv[1:3]
    data = open(src, "rb").read()
    out = bytearray()
    dropped = False
    for number, kind, raw, payload in fields(data):
        if number == VERSION:
            if payload != 4:
                sys.exit("%s: a Program of version %d, not 4" % (src, payload))
            out += encode_varint(VERSION << 3 | VARINT) + encode_varint(3)
        elif number == FUNCTIONS and name_of(payload) == "forward":
            dropped = True
        elif number != CHECKSUM:
            out += raw
    if not dropped:
        sys.exit("%s: the Program has no @forward" % src)
    # The CRC-32 of every byte before the checksum field (its tag excluded).
    crc = zlib.crc32(bytes(out)) & 0xFFFFFFFF
    out += encode_varint(CHECKSUM << 3 | FIXED32) + struct.pack("<I", crc)
    with open(dst, "wb") as f:
        f.write(bytes(out))


if __name__ == "__main__":
    main()
