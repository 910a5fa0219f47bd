"""Writes the first N samples of a Fashion-MNIST split as amp-run .npy data.

    fashion_mnist_npy.py OUT_DIR --split train|test --samples N
                         [--image NAME] [--label NAME]

OUT_DIR/<image>.npy: float32 [N, 1, 28, 28], normalised as amp-run's
`--data fashion-mnist` does ((x/255 - 0.2860)/0.3530); OUT_DIR/<label>.npy:
int64 [N]. Read with Python's gzip and NumPy, independently of amp-run's
IDX reader, so the two can be compared.
"""
import argparse
import gzip
import os

import numpy as np

DIR = "/usr/share/datasets/fashion-mnist"
FILES = {"train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
         "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz")}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--split", choices=sorted(FILES), required=True)
    p.add_argument("--samples", type=int, required=True)
    p.add_argument("--image", default="image")
    p.add_argument("--label", default="label")
    a = p.parse_args()
    images_file, labels_file = FILES[a.split]
    with gzip.open(os.path.join(DIR, images_file)) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16)
    with gzip.open(os.path.join(DIR, labels_file)) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    n = a.samples
    # In double, rounded to f32 once, as amp-run's reader does.
    x = images.reshape(-1, 1, 28, 28)[:n].astype(np.float64) / 255
    x = ((x - 0.2860) / 0.3530).astype(np.float32)
    os.makedirs(a.out_dir, exist_ok=True)
    np.save(os.path.join(a.out_dir, a.image + ".npy"), x)
    np.save(os.path.join(a.out_dir, a.label + ".npy"),
            labels[:n].astype(np.int64))


if __name__ == "__main__":
    main()
