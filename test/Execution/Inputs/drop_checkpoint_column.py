"""Copies an amp-run/amp-exec checkpoint without one column of its step
history, as a checkpoint written before that column existed would be (for
amp-exec.test: input_ms).

usage: drop_checkpoint_column.py IN_DIR OUT_DIR COLUMN
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkpoint_format import rewrite_checkpoint  # noqa: E402


def main():
    src, dst, column = sys.argv[1:4]

    def drop(parts):
        step, config, tensors, (cols, rows), evals = parts
        if column not in cols:
            sys.exit("%s: the step history has no column %r (it has %s)" %
                     (src, column, ", ".join(cols)))
        i = cols.index(column)
        return (step, config, tensors,
                (cols[:i] + cols[i + 1:], [r[:i] + r[i + 1:] for r in rows]),
                evals)

    rewrite_checkpoint(src, dst, drop)


if __name__ == "__main__":
    main()
