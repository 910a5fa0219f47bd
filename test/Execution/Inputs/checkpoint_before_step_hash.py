"""Copies an amp-exec checkpoint as an amp-exec that recorded its Program
file's bytes, not its step's hash, wrote it: the config entry `step` becomes
`program`, the FNV-1a (64 bits) of PROGRAM's bytes (for amp-exec.test).

usage: checkpoint_before_step_hash.py IN_DIR OUT_DIR PROGRAM
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkpoint_format import rewrite_checkpoint  # noqa: E402


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def main():
    src, dst, program = sys.argv[1:4]

    def as_before(parts):
        step, config, *rest = parts
        keys = [k for k, _ in config]
        if "step" not in keys:
            sys.exit("%s: the checkpoint records no step hash (it has %s)" %
                     (src, ", ".join(keys)))
        config = [(k, v) for k, v in config if k != "step"]
        config.append(("program", fnv1a64(open(program, "rb").read())))
        return (step, sorted(config), *rest)

    rewrite_checkpoint(src, dst, as_before)


if __name__ == "__main__":
    main()
