"""What the module's tests share: where amp-run and the example model are,
a compile's options as amp-run's flags, and data for the model."""
import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
AMP_RUN = os.environ.get("AMP_RUN", os.path.join(ROOT, "build", "bin",
                                                 "amp-run"))
MLP = os.path.join(ROOT, "examples", "mlp.onnx")


def flags_of(options):
    """{"amp_dtype": "bf16"} -> ["--amp-dtype", "bf16"]."""
    out = []
    for k, v in options.items():
        out += ["--" + k.replace("_", "-"), str(v)]
    return out


def write_mlp_data(d, samples, seed):
    """An .npy directory in `d` for examples/mlp.onnx: `samples` images
    N(0, 1) and labels in [0, 10). amp-run reads it in file order (no
    shuffle), so step s holds rows [s*64, s*64+64) of its epoch."""
    rng = np.random.default_rng(seed)
    np.save(d / "image.npy",
            rng.standard_normal((samples, 1, 28, 28)).astype(np.float32))
    np.save(d / "label.npy", rng.integers(0, 10, samples).astype(np.int64))
    return d
