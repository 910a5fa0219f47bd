"""Writes the bad training data of the bad-input catalogue (data.test) into
the directory given as argv[1]: one data directory per case, named after
it, each wrong in one way.

npy/<case>/ feed the model of test/Execution/Inputs/make_train_model.py
(x f32 [4, 3], labels i64 [4]); i32/<case>/ feed i32.onnx written here
(x f32 [4, 3], labels i32 [4]); idx/<case>/ hold Fashion-MNIST's four IDX
files (64 samples a split) for examples/mlp.onnx (image f32 [64, 1, 28, 28],
label i64 [64]); tensors/ holds single tensor files for --input.
"""
import gzip
import io
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def write(path, files):
    os.makedirs(path, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(path, name), "wb") as f:
            f.write(data)


def npy(array, **kwargs):
    b = io.BytesIO()
    np.save(b, array, **kwargs)
    return b.getvalue()


# .npy directories for the tiny model: x [S, 3] f32, labels [S] i64.
X = np.zeros((8, 3), np.float32)
L = np.zeros(8, np.int64)
GOOD_X = npy(X)


def npy_case(name, x=GOOD_X, labels=npy(L)):
    files = {}
    if x is not None:
        files["x.npy"] = x
    if labels is not None:
        files["labels.npy"] = labels
    write(os.path.join(out, "npy", name), files)


npy_case("rank", x=npy(np.zeros((8, 3, 1), np.float32)))
npy_case("scalar", x=npy(np.float32(1)))
npy_case("bool", x=npy(np.zeros((8, 3), bool)))
npy_case("float_labels", labels=npy(np.zeros(8, np.float32)))
npy_case("uint8", x=npy(np.zeros((8, 3), np.uint8)))
npy_case("few", x=npy(np.zeros((2, 3), np.float32)),
         labels=npy(np.zeros(2, np.int64)))
npy_case("no_samples", x=npy(np.zeros((0, 3), np.float32)),
         labels=npy(np.zeros(0, np.int64)))
npy_case("label_range", labels=npy(np.array([0, 1, 0, 0, 1, 0, 5, 1])))
npy_case("label_negative", labels=npy(np.array([0, 1, -3, 0, 1, 0, 0, 1])))
npy_case("truncated", x=GOOD_X[:-10])
npy_case("trailing", x=GOOD_X + b"\0\0\0\0")
npy_case("text", x=b"0.5,0.25,1\n" * 8)
npy_case("empty_file", x=b"")
npy_case("big_endian", x=npy(X.astype(">f4")))
npy_case("fortran", x=npy(np.asfortranarray(
    np.arange(24, dtype=np.float32).reshape(8, 3))))
npy_case("structured", x=npy(np.zeros(8, dtype=[("a", "<f4"), ("b", "<f4"),
                                                ("c", "<f4")])))
npy_case("object", x=npy(np.array([[None] * 3] * 8, dtype=object),
                         allow_pickle=True))
npy_case("version", x=GOOD_X[:6] + b"\x09\x00" + GOOD_X[8:])
npy_case("header", x=GOOD_X.replace(b"'shape': (8, 3)", b"'shape': (8, 3!"))
# A shape whose bytes pass 2^63, written over the header's padding (its
# length field is unchanged).
huge = GOOD_X.replace(b"'shape': (8, 3), }",
                      b"'shape': (99999999999, 99999999999, 3), }")
npy_case("huge_shape", x=huge[:len(GOOD_X)])
npy_case("directory", x=None)
os.makedirs(os.path.join(out, "npy", "directory", "x.npy"), exist_ok=True)
npy_case("good")
# Values that are not finite, or not once rounded to the input's f32.
nan = X.copy()
nan[5, 1] = np.nan
npy_case("nan", x=npy(nan))
inf = X.copy()
inf[2, 0] = inf[6, 2] = np.inf
npy_case("inf", x=npy(inf))
wide = X.astype(np.float64)
wide[3, 1] = 1e300
npy_case("f64_range", x=npy(wide))

# The same model with i32 labels: an i64 file's values must fit.
w = numpy_helper.from_array(np.ones((3, 2), np.float32), "w")
graph = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["logits"], name="mm"),
     helper.make_node("SoftmaxCrossEntropyLoss", ["logits", "labels"],
                      ["loss"], name="ce")],
    "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
          helper.make_tensor_value_info("labels", TensorProto.INT32, [4])],
    [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])], [w])
model = helper.make_model(graph,
                          opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(out, "i32.onnx"))
write(os.path.join(out, "i32", "wide_label"),
      {"x.npy": GOOD_X,
       "labels.npy": npy(np.array([0, 1, 1 << 33, 0, 0, 0, 0, 0]))})


# IDX directories for examples/mlp.onnx.
def idx(magic, dims, data):
    return (struct.pack(">I", magic) +
            b"".join(struct.pack(">I", d) for d in dims) + bytes(data))


N = 64
IMAGES = idx(0x803, [N, 28, 28], np.zeros(N * 784, np.uint8))
LABELS = idx(0x801, [N], np.arange(N, dtype=np.uint8) % 10)
NAMES = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte",
         "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")


def gz(data):
    return gzip.compress(data, mtime=0)


def idx_case(name, images=IMAGES, labels=LABELS, compress=True, **raw):
    """A split pair of files per name; `raw` replaces or (None) drops files
    by their name with '-' for '.' ('train-images-idx3-ubyte-gz')."""
    files = {}
    for base, data in zip(NAMES, (images, labels, IMAGES, LABELS)):
        files[base + ".gz" if compress else base] = gz(data) if compress \
            else data
    for key, data in raw.items():
        key = key.replace("_", "-").replace("-gz", ".gz")
        if data is None:
            files.pop(key)
        else:
            files[key] = data
    write(os.path.join(out, "idx", name), files)


idx_case("good")
corrupt = bytearray(gz(IMAGES))
corrupt[len(corrupt) // 2] ^= 0xFF
idx_case("gz_corrupt", train_images_idx3_ubyte_gz=bytes(corrupt))
idx_case("gz_truncated", train_images_idx3_ubyte_gz=gz(IMAGES)[:-4])
idx_case("magic", images=idx(0x801, [N], np.zeros(N, np.uint8)))
idx_case("size", images=idx(0x803, [N, 32, 32],
                            np.zeros(N * 1024, np.uint8)))
idx_case("truncated", images=IMAGES[:-100])
idx_case("trailing", images=IMAGES + b"\0" * 5)
idx_case("count", labels=idx(0x801, [N - 1], np.zeros(N - 1, np.uint8)))
idx_case("label", labels=idx(0x801, [N], np.full(N, 10, np.uint8)))
idx_case("no_labels", train_labels_idx1_ubyte_gz=None)
idx_case("no_test", t10k_images_idx3_ubyte_gz=None,
         t10k_labels_idx1_ubyte_gz=None)
idx_case("header", images=IMAGES[:6])
idx_case("few", images=idx(0x803, [10, 28, 28], np.zeros(10 * 784, np.uint8)),
         labels=idx(0x801, [10], np.zeros(10, np.uint8)))
idx_case("no_images", images=idx(0x803, [0, 28, 28], b""),
         labels=idx(0x801, [0], b""))
idx_case("huge_count", images=idx(0x803, [0xFFFFFFFF, 28, 28],
                                  np.zeros(784, np.uint8)))
idx_case("text", compress=False,
         train_images_idx3_ubyte=b"hello world, not an idx file\n")

# Tensor files for --input.
relu_input = "/usr/share/libonnx-testdata/data/node/test_relu/" \
    "test_data_set_0/input_0.pb"
write(os.path.join(out, "tensors"), {
    "garbage.pb": b"\x08\x01\x12\x05garbage",
    "truncated.pb": open(relu_input, "rb").read()[:30],
    "x.npy": npy(np.zeros((4, 3), np.float32)),
    "x_nan.npy": npy(np.array([[0, 0, 0], [0, np.nan, 0], [0, 0, 0],
                               [0, 0, 0]], np.float32)),
    "labels.npy": npy(np.zeros(4, np.int64)),
})
