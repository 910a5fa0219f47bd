#!/usr/bin/env python3
"""check_require_gpu.py - AMPC_REQUIRE_GPU=1 turns a skip into a failure.

usage: check_require_gpu.py --skip-reason REGEX -- COMMAND [ARG...]

A GPU test suite skips, with the reason, where no GPU can be used; on the
GPU machine an all-skipped suite would read as a pass, so there the runs set
AMPC_REQUIRE_GPU=1 and a missing GPU must fail them. This runs COMMAND twice,
without AMPC_REQUIRE_GPU and with AMPC_REQUIRE_GPU=1, and checks:

- the first run skipped for want of a GPU (its output matches REGEX, whose
  group 1 is the reason): the second must fail (exit neither 0 nor 77),
  give the same reason and name AMPC_REQUIRE_GPU=1, and skip nothing;
- the first run passed without that skip: the second must pass too;
- the first run failed: that is this check's failure.

Whether this machine has a GPU is not known when the tests are configured,
so the check works on either. Where `nvidia-smi -L` lists a GPU, a first run
that skipped anyway is a failure too. Exit 77 (ctest's skip) when the first
run skipped for another reason (exit 77 without REGEX: missing test data).
"""

import os
import re
import subprocess
import sys

GTEST_SKIPPED = "[  SKIPPED ]"


def run(cmd, require):
    env = dict(os.environ)
    env.pop("AMPC_REQUIRE_GPU", None)
    if require:
        env["AMPC_REQUIRE_GPU"] = "1"
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, errors="replace",
                       timeout=600)
    return p.returncode, p.stdout


def nvidia_gpus():
    """The GPUs `nvidia-smi -L` lists; None where it cannot run."""
    try:
        p = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if p.returncode != 0:
        return []
    return [l for l in p.stdout.splitlines() if l.startswith("GPU ")]


def fail(message, *outputs):
    print("FAIL: " + message)
    for title, text in outputs:
        print("---- %s ----\n%s" % (title, text.rstrip()))
    return 1


def main(argv):
    if len(argv) < 4 or argv[0] != "--skip-reason" or argv[2] != "--":
        print(__doc__)
        return 2
    reason_rx = re.compile(argv[1])
    cmd = argv[3:]
    rc, out = run(cmd, require=False)
    skipped = reason_rx.search(out)
    first = ("without AMPC_REQUIRE_GPU (exit %d)" % rc, out)
    if rc not in (0, 77):
        return fail("the run without AMPC_REQUIRE_GPU failed", first)
    if not skipped:
        if rc == 77:
            print("skipped for a reason other than the GPU:\n" + out)
            return 77
        if GTEST_SKIPPED in out:
            return fail("the run skipped, but not for want of a GPU "
                        "(no match for %r)" % argv[1], first)
    rc2, out2 = run(cmd, require=True)
    second = ("with AMPC_REQUIRE_GPU=1 (exit %d)" % rc2, out2)
    if not skipped:
        if rc2 != 0 or GTEST_SKIPPED in out2:
            return fail("the run passed without AMPC_REQUIRE_GPU but not "
                        "with it", first, second)
        print("a GPU is usable here: both runs passed")
        return 0
    why = skipped.group(1).strip()
    gpus = nvidia_gpus()
    if gpus:
        return fail("nvidia-smi lists %s, yet the run skipped: %s" % (
            gpus[0], why), first)
    if rc2 in (0, 77):
        return fail("with AMPC_REQUIRE_GPU=1 a missing GPU did not fail the "
                    "run", first, second)
    if why not in out2:
        return fail("the failure does not give the skip's reason %r" % why,
                    first, second)
    if "AMPC_REQUIRE_GPU=1" not in out2:
        return fail("the failure does not name AMPC_REQUIRE_GPU=1", first,
                    second)
    if GTEST_SKIPPED in out2:
        return fail("with AMPC_REQUIRE_GPU=1 a test still skipped", first,
                    second)
    print("no usable GPU here (%s): skipped without AMPC_REQUIRE_GPU, failed "
          "with it (exit %d)" % (why, rc2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
