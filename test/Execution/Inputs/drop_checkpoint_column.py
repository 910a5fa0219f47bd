"""Copies an amp-run/amp-exec checkpoint without one column of its step
history, as a checkpoint written before that column existed would be (for
amp-exec.test: input_ms).

usage: drop_checkpoint_column.py IN_DIR OUT_DIR COLUMN
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkpoint_format import decode, encode  # noqa: E402


def main():
    src, dst, column = sys.argv[1:4]
    data = open(os.path.join(src, "checkpoint.ampc"), "rb").read()
    step, config, tensors, (cols, rows), evals = decode(data)
    if column not in cols:
        sys.exit("%s: the step history has no column %r (it has %s)" %
                 (src, column, ", ".join(cols)))
    i = cols.index(column)
    cols = cols[:i] + cols[i + 1:]
    rows = [r[:i] + r[i + 1:] for r in rows]
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(dst, "checkpoint.ampc"), "wb") as f:
        f.write(encode(step, config, tensors, (cols, rows), evals))


if __name__ == "__main__":
    main()
