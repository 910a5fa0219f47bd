"""The reference batches of a shared training model, as amp-run --data reads
them.

REFERENCE_DIR/data/batch_<b>/input_<k>.pb holds batch b of the model's k-th
graph input; the reference trains step s on batch s % (number of batches).
Shared by train_and_compare.py, optimizers_vs_torch.py and
loss_scale_overflow.py.
"""
import glob
import os

import numpy as np
import onnx
from onnx import numpy_helper


def read(reference_dir, names):
    """{names[k]: [input k of each batch, in batch order]}, as writable
    arrays (torch.from_numpy wants them so)."""
    batches = sorted(glob.glob(os.path.join(reference_dir, "data", "batch_*")))
    return {name: [np.array(numpy_helper.to_array(onnx.load_tensor(
        os.path.join(b, "input_%d.pb" % k)))) for b in batches]
        for k, name in enumerate(names)}


def write_npy(out_dir, batches, rotate=0):
    """Writes OUT_DIR/<name>.npy for each input of `batches` (from read()):
    its batches concatenated, starting at batch `rotate` and wrapping around,
    so that amp-run's step s gets the reference's batch (s + rotate) % n.
    Returns OUT_DIR."""
    os.makedirs(out_dir, exist_ok=True)
    for name, parts in batches.items():
        parts = parts[rotate:] + parts[:rotate]
        np.save(os.path.join(out_dir, name + ".npy"), np.concatenate(parts))
    return out_dir
