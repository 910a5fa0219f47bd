"""What the module's tests share: where amp-run and the example model are,
running it and reading its metrics, a compile's options as amp-run's flags,
and data for the model."""
import csv
import os
import subprocess

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
AMP_RUN = os.environ.get("AMP_RUN", os.path.join(ROOT, "build", "bin",
                                                 "amp-run"))
MLP = os.path.join(ROOT, "examples", "mlp.onnx")


def amp_run(*args, check=True, env=None, timeout=300):
    """Runs amp-run with `args`; fails the test on a non-zero exit when
    `check`."""
    p = subprocess.run([AMP_RUN, *map(str, args)], capture_output=True,
                       text=True, env=env, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"amp-run {args} failed:\n{p.stdout}{p.stderr}")
    return p


def read_metrics(path):
    """amp-run's --metrics CSV: (losses, loss scales, skipped as 0 or 1)."""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    return ([float(r["loss"]) for r in rows],
            [float(r["loss_scale"]) for r in rows],
            [int(float(r["skipped"])) for r in rows])


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
