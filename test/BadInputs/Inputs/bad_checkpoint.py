"""Writes a damaged copy of an amp-run checkpoint (the format of
runtime/tooling/Checkpoint.h) for checkpoints.test.

usage: bad_checkpoint.py IN_DIR OUT_DIR DEFECT

Byte-level defects damage the file as a disk or a copy would; payload
defects decode the checkpoint, change one thing and encode it again with
correct checksums, so that the decoder's (or the resume's) own check is the
one that must catch it.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "Execution", "Inputs"))
from checkpoint_format import decode, encode, frame  # noqa: E402

def main():
    src, dst, defect = sys.argv[1:4]
    data = open(os.path.join(src, "checkpoint.ampc"), "rb").read()
    step, config, tensors, steps, evals = decode(data)
    payload = data[24:-4]
    if defect == "magic":
        out = b"NOTACKPT" + data[8:]
    elif defect == "header-flip":  # a bit of the length field
        out = bytearray(data)
        out[13] ^= 0x01
        out = bytes(out)
    elif defect == "payload-flip":  # one bit of the first tensor's data
        out = bytearray(data)
        out[len(data) // 2] ^= 0x10
        out = bytes(out)
    elif defect == "newer":
        out = frame(payload, version=2)
    elif defect == "older":
        out = frame(payload, version=0)
    elif defect == "appended":
        out = data + b"\n"
    elif defect == "truncated-payload":
        out = data[:len(data) - 100]
    elif defect == "empty":
        out = b""
    elif defect == "negative-step":
        out = encode(-1, config, tensors, steps, evals)
    elif defect == "dtype-code":
        tensors[0][1] = 9
        out = encode(step, config, tensors, steps, evals)
    elif defect == "tensor-count":  # 2^40 tensors in a few hundred bytes
        p = 24 + 8 + 8 + sum(16 + len(k) + len(v) for k, v in config)
        body = bytearray(payload)
        body[p - 24:p - 24 + 8] = struct.pack("<Q", 1 << 40)
        out = frame(bytes(body))
    elif defect == "byte-count":  # the first tensor says it holds fewer bytes
        tensors[0][3] = tensors[0][3][:-4]
        out = encode(step, config, tensors, steps, evals)
    elif defect == "duplicate-tensor":
        tensors.append(list(tensors[0]))
        out = encode(step, config, tensors, steps, evals)
    elif defect == "duplicate-key":
        out = encode(step, config + [config[0]], tensors, steps, evals)
    elif defect == "trailing-payload":
        out = frame(payload + b"\0" * 8)
    elif defect == "missing-tensor":
        out = encode(step, config, tensors[1:], steps, evals)
    elif defect == "extra-tensor":
        out = encode(step, config, tensors + [["stray", 1, [1], b"\0" * 4]],
                     steps, evals)
    elif defect == "tensor-shape":  # same bytes, another shape
        name, code, dims, b = tensors[0]
        tensors[0] = [name, code, [int(len(b) // 4)], b]
        out = encode(step, config, tensors, steps, evals)
    elif defect == "step-rows":
        out = encode(step + 3, config, tensors, steps, evals)
    elif defect == "missing-key":
        config = [(k, v) for k, v in config if k != "--optimizer"]
        out = encode(step, config, tensors, steps, evals)
    elif defect == "no-hash":
        config = [(k, v) for k, v in config if k != "compiled-step"]
        out = encode(step, config, tensors, steps, evals)
    elif defect == "ragged-history":
        cols, rows = steps
        rows[0] = rows[0][:-1]
        out = encode(step, config, tensors, (cols, rows), evals)
    else:
        sys.exit("unknown defect " + defect)
    os.makedirs(dst, exist_ok=True)
    open(os.path.join(dst, "checkpoint.ampc"), "wb").write(out)


if __name__ == "__main__":
    main()
