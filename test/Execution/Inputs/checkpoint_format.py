"""amp-run's checkpoint format, version 1, as runtime/tooling/Checkpoint.h
documents it, read and written independently of amp-run: resume_check.py
and kill_loop.py compare checkpoints with it, and
../../BadInputs/Inputs/bad_checkpoint.py damages them with it.
"""
import os
import struct
import zlib

MAGIC = b"AMPCCKPT"
HEADER = 24


def crc(b):
    return zlib.crc32(b) & 0xFFFFFFFF


class Reader:
    def __init__(self, data, pos):
        self.data, self.pos = data, pos

    def take(self, n):
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def u64(self):
        return struct.unpack("<Q", self.take(8))[0]

    def string(self):
        return self.take(self.u64()).decode()


def decode(data):
    """(step, [(key, value)], [[name, code, dims, bytes]], step table,
    eval table), a table being (columns, rows of floats). Checks nothing."""
    r = Reader(data, HEADER)
    step = struct.unpack("<q", r.take(8))[0]
    config = [(r.string(), r.string()) for _ in range(r.u64())]
    tensors = []
    for _ in range(r.u64()):
        name = r.string()
        code = r.take(1)[0]
        dims = [struct.unpack("<q", r.take(8))[0] for _ in range(r.u64())]
        tensors.append([name, code, dims, r.take(r.u64())])

    def table():
        cols = [r.string() for _ in range(r.u64())]
        rows = [[struct.unpack("<d", r.take(8))[0] for _ in cols]
                for _ in range(r.u64())]
        return cols, rows

    return step, config, tensors, table(), table()


def encode(step, config, tensors, steps, evals, version=1):
    def s(v):
        v = v.encode()
        return struct.pack("<Q", len(v)) + v

    b = struct.pack("<q", step) + struct.pack("<Q", len(config))
    for k, v in config:
        b += s(k) + s(v)
    b += struct.pack("<Q", len(tensors))
    for name, code, dims, data in tensors:
        b += s(name) + bytes([code]) + struct.pack("<Q", len(dims))
        b += b"".join(struct.pack("<q", d) for d in dims)
        b += struct.pack("<Q", len(data)) + data
    for cols, rows in (steps, evals):
        b += struct.pack("<Q", len(cols)) + b"".join(s(c) for c in cols)
        b += struct.pack("<Q", len(rows))
        b += b"".join(struct.pack("<d", v) for row in rows for v in row)
    return frame(b, version)


def rewrite_checkpoint(src_dir, dst_dir, change):
    """Writes DST_DIR/checkpoint.ampc: SRC_DIR's, decoded, passed through
    `change` (a function of decode()'s tuple returning one), encoded again
    (its checksums made anew)."""
    with open(os.path.join(src_dir, "checkpoint.ampc"), "rb") as f:
        parts = change(decode(f.read()))
    os.makedirs(dst_dir, exist_ok=True)
    with open(os.path.join(dst_dir, "checkpoint.ampc"), "wb") as f:
        f.write(encode(*parts))


def frame(payload, version=1):
    head = MAGIC + struct.pack("<IQ", version, HEADER + len(payload) + 4)
    head += struct.pack("<I", crc(head))
    body = head + payload
    return body + struct.pack("<I", crc(body))


def read_checkpoint(path):
    """{name: (dtype code, dims, bytes)} of a version-1 file whose magic,
    length and file checksum are right (asserted)."""
    data = open(path, "rb").read()
    assert data[:8] == MAGIC, "%s: bad magic" % path
    version, total = struct.unpack_from("<IQ", data, 8)
    assert version == 1 and total == len(data), path
    (file_crc,) = struct.unpack_from("<I", data, len(data) - 4)
    assert file_crc == crc(data[:-4]), "%s: checksum" % path
    return {name: (code, dims, b) for name, code, dims, b in decode(data)[2]}


def checkpoint_step(path):
    """The step field alone, unchecked."""
    with open(path, "rb") as f:
        return struct.unpack("<q", f.read(HEADER + 8)[HEADER:HEADER + 8])[0]
