"""Copies Fashion-MNIST's train split from SRC to DST with the first
label changed (to the next class): the same files but for one byte."""
import gzip
import shutil
import sys

src, dst = sys.argv[1], sys.argv[2]
shutil.copy(f"{src}/train-images-idx3-ubyte.gz", dst)
with gzip.open(f"{src}/train-labels-idx1-ubyte.gz", "rb") as f:
    labels = bytearray(f.read())
# IDX1: a 4-byte magic and a 4-byte count, then one byte per label.
labels[8] = (labels[8] + 1) % 10
with gzip.open(f"{dst}/train-labels-idx1-ubyte.gz", "wb") as f:
    f.write(bytes(labels))
