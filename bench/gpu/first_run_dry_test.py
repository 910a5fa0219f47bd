#!/usr/bin/python3
"""The ctest gpu-first-run-dry: bench/gpu/first-run.sh --dry-run end to end
on this machine's CPU, so that the script of the first GPU run cannot rot.

1. drive.py --self-test (the gtest, ncu and loss-comparison parsers);
2. prepare.sh --dry-run --bin-dir BIN --root WORK/root (the binaries of
   the build tree ctest knows; nothing is built);
3. first-run.sh --dry-run into WORK/out, then checks of that folder: only
   the (at most 8) names drive.py writes, none in a sub-folder; every piece has its line in summary.txt with the status the dry
   run must give (the CUDA pieces "skipped: no GPU", the CPU side of the
   loss comparison run for every tiny Program, the bench and the eager
   peers run on the CPU), results.jsonl parses, the report is there;
4. the deadline: DEADLINE_S too short for the later pieces, which must be
   recorded "skipped: deadline" (with their rows);
5. --rerun with an earlier results.jsonl naming one failed suite: only that
   suite runs, and compute-sanitizer is reported skipped;
6. drive.py --mode gpu over stand-ins for the GPU machine's binaries and
   ncu (small Python scripts written here): the smoke, a suite that skips
   (a failure on a GPU machine), a suite that dies with a device fault (rerun
   with CUDA_LAUNCH_BLOCKING=1, the kernel named), the GEMM rows, a loss
   mismatch among agreeing Programs, the bench rows' step and input times,
   the timeline's parse.

usage: first_run_dry_test.py --bin-dir DIR --work DIR
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import drive  # noqa: E402
import plan  # noqa: E402

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what, flush=True)


def run(cmd, env=None, timeout=300):
    t0 = time.monotonic()
    full = {k: v for k, v in os.environ.items()
            if k not in ("PIECES", "DEADLINE_S", "OUT", "ROOT", "PYTHON")}
    full.update(env or {})
    p = subprocess.run(cmd, cwd=REPO, env=full, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    print("$ %s  # exit %d, %.1f s" % (" ".join(cmd), p.returncode,
                                        time.monotonic() - t0), flush=True)
    return p


def read_out(out):
    files = []  # paths relative to OUT
    for dirpath, dirs, names in os.walk(out):
        files += [os.path.relpath(os.path.join(dirpath, n), out)
                  for n in names]
    recs = []
    with open(os.path.join(out, "results.jsonl")) as f:
        for line in f:
            recs.append(json.loads(line))  # every line must parse
    with open(os.path.join(out, "summary.txt")) as f:
        summary = f.read()
    return files, recs, summary


def piece_status(recs, piece):
    s = [r["status"] for r in recs if r.get("kind") == "piece" and
         r["piece"] == piece]
    return s[-1] if s else None


# Stand-ins for the GPU machine's binaries and ncu, so that drive.py's GPU
# paths (smoke, suite faults, GEMM rows, the cpu/cuda loss comparison, the
# timeline) run here too.
FAKE_GEMM = r"""
import json, sys
if "--smoke" in sys.argv:
    print(json.dumps(dict(kind="smoke", ok=True, device="Fake H100",
                          libcuda="/fake/libcuda.so.1",
                          libcublasLt="/fake/libcublasLt.so.13", checks=[])))
    sys.exit(0)
d = sys.argv[sys.argv.index("--dtype") + 1]
for shape, m, n, k, lay in (("square", 8192, 8192, 8192, "NN"),
                            ("fwd", 2048, 8192, 8192, "NT"),
                            ("dx", 2048, 8192, 8192, "NN"),
                            ("dw", 8192, 8192, 2048, "TN")):
    t = dict(f16=700.0, bf16=710.0, f32=50.0, tf32=350.0)[d]
    ms = 2.0 * m * n * k / (t * 1e9)
    print(json.dumps(dict(kind="gemm-peak", dtype=d, shape=shape, m=m, n=n,
                          k=k, layout=lay, iters=200, repeats=5, ms=ms,
                          tflops=t, ms_repeats=[ms] * 5,
                          tflops_repeats=[t] * 5, device="Fake H100")))
"""
FAKE_TESTS = r"""
import os, signal, sys
arg = " ".join(sys.argv[1:])
if "--gtest_list_tests" in arg:
    print("Good.\n  A\n  B\nFaulty.\n  A\nSkips.\n  A")
    sys.exit(0)
suite = arg.split("--gtest_filter=")[1].split(".")[0]
print("[==========] Running tests")
if suite == "Good":
    print("[ RUN      ] Good.A\n[       OK ] Good.A (1 ms)\n"
          "[ RUN      ] Good.B\n[       OK ] Good.B (1 ms)\n"
          "[==========] 2 tests from 1 test suite ran. (2 ms total)\n"
          "[  PASSED  ] 2 tests.")
elif suite == "Faulty":
    print("[ RUN      ] Faulty.A")
    if os.environ.get("CUDA_LAUNCH_BLOCKING") == "1":
        print("error: ampc_fake_kernel: cuLaunchKernel failed: "
              "CUDA_ERROR_ILLEGAL_ADDRESS")
    else:
        print("error: cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS")
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGABRT)
else:
    print("[ RUN      ] Skips.A\n[  SKIPPED ] Skips.A (0 ms)\n"
          "[==========] 1 test from 1 test suite ran. (0 ms total)\n"
          "[  PASSED  ] 0 tests.\n[  SKIPPED ] 1 test, listed below:\n"
          "[  SKIPPED ] Skips.A")
"""
FAKE_EXEC = r"""
import json, sys, zlib
a = sys.argv
opt = lambda k, d=None: a[a.index(k) + 1] if k in a else d
prog, dev, steps = a[1], opt("--device"), int(opt("--steps"))
name = prog.split("/")[-1]
base = 1.0 + (zlib.crc32(name.encode()) % 1000) / 1000.0
off = 0.3 if (dev == "cuda" and "resnet.O1-bf16" in name) else \
    (1e-6 if dev == "cuda" else 0.0)
with open(opt("--metrics"), "w") as f:
    f.write("step,loss,step_time_ms,input_ms,loss_scale,skipped\n")
    for s in range(steps):
        f.write("%d,%r,%r,%r,1,0\n" % (s, base * 0.9 ** s + off,
                                        20.0 if s > 1 else 90.0, 5.0))
if opt("--json"):
    with open(opt("--json"), "w") as f:
        json.dump(dict(median_step_ms=20.0, median_input_ms=5.0,
                       peak_device_bytes=3 << 30, device_name="Fake H100"),
                  f)
"""
FAKE_NCU = r"""
print('==PROF== Connected to process 1')
print('"ID","Process ID","Process Name","Host Name","Kernel Name",'
      '"Context","Stream","Block Size","Grid Size","Device","CC",'
      '"Section Name","Metric Name","Metric Unit","Metric Value"')
for i, (k, ns) in enumerate([("ampc_cast_f32_f16", "120,000"),
                             ("sm90_xmma_gemm_f16", "1,500,000"),
                             ("ampc_momentum_update", "2,000,000")]):
    print('"%d","1","amp-exec","h","%s","1","7","(256, 1, 1)","(8, 1, 1)",'
          '"0","9.0","Command line profiler metrics",'
          '"gpu__time_duration.sum","ns","%s"' % (i, k, ns))
"""


def gpu_paths(work, root):
    fake = os.path.join(work, "fake-bin")
    os.makedirs(fake, exist_ok=True)
    for name, body in (("ampc-gemm-peak", FAKE_GEMM),
                       ("ampc-cuda-unittests", FAKE_TESTS),
                       ("amp-exec", FAKE_EXEC), ("ncu", FAKE_NCU)):
        path = os.path.join(fake, name)
        with open(path, "w") as f:
            f.write("#!%s\n%s" % (sys.executable, body))
        os.chmod(path, 0o755)
    out = os.path.join(work, "out-gpu")
    programs = os.path.join(root, "carry", "programs")
    env = dict(PATH=fake + os.pathsep + os.environ["PATH"])
    r = run([sys.executable, os.path.join(HERE, "drive.py"), "--mode", "gpu",
             "--bin", fake, "--programs", os.path.join(programs, "tiny"),
             "--tiny-programs", os.path.join(programs, "tiny"),
             "--sizes", os.path.join(programs, "sizes.json"),
             "--work", os.path.join(work, "work-gpu"), "--out", out,
             "--deadline-s", "300",
             "--pieces", "smoke,suites,gemm,losses,mlp8192,timeline"],
            env=env)
    print(r.stdout[-4000:])
    files, recs, summary = read_out(out)
    check(r.returncode == 1, "gpu stand-ins: exit %d, want 1 (failed "
          "suites and a loss mismatch)" % r.returncode)
    check(piece_status(recs, "smoke").startswith("ok"), "gpu stand-ins: "
          "smoke %r" % piece_status(recs, "smoke"))
    suites = {r["suite"]: r for r in recs if r.get("kind") == "suite"}
    check(suites.get("Good", {}).get("status") == "ok" and
          suites.get("Faulty", {}).get("status", "").startswith("crashed")
          and suites["Faulty"].get("fault") and
          suites.get("Skips", {}).get("status", "").startswith("failed (1 "
                                                               "tests skipped"),
          "gpu stand-ins: suite verdicts %s" % {k: v.get("status") for k, v
                                                in suites.items()})
    rerun = [r for r in recs if r.get("kind") == "suite-rerun"]
    check(len(rerun) == 1 and rerun[0]["suite"] == "Faulty" and any(
        "ampc_fake_kernel" in l for l in rerun[0].get("fault_lines", [])),
          "gpu stand-ins: the fault was not rerun with "
          "CUDA_LAUNCH_BLOCKING=1 naming the kernel: %s" % rerun)
    peaks = [r for r in recs if r.get("kind") == "gemm-peak" and
             r["status"] == "ok"]
    check(len(peaks) == 16 and piece_status(recs, "gemm").startswith("ok"),
          "gpu stand-ins: %d GEMM rows" % len(peaks))
    losses = {r["program"]: r for r in recs if r.get("kind") == "losses"}
    check(losses.get("resnet.O1-bf16", {}).get("status") == "mismatch" and
          sum(r["status"] == "ok" for r in losses.values()) ==
          len(losses) - 1, "gpu stand-ins: losses %s" %
          {k: v["status"] for k, v in losses.items()})
    bench = [r for r in recs if r.get("kind") == "bench"]
    check(len(bench) == 4 and all(r["status"] == "ok" and
                                  r["step_ms"] == 20.0 and
                                  r["input_ms"] == 5.0 and
                                  r["total_ms"] == 25.0 for r in bench),
          "gpu stand-ins: mlp8192 rows %s" % [
              (r.get("config"), r["status"], r.get("step_ms")) for r in bench])
    tl = [r for r in recs if r.get("kind") == "timeline"]
    check(tl and tl[0]["kernels"] == 3 and
          abs(tl[0]["kernel_ms"] - 3.62) < 1e-9,
          "gpu stand-ins: timeline %s" % tl)
    check("% of GEMM peak" in summary and "SUSPECT" not in summary,
          "gpu stand-ins: report")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin-dir", required=True)
    p.add_argument("--work", required=True)
    a = p.parse_args()
    t0 = time.monotonic()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    root = os.path.join(a.work, "root")

    # 1.
    r = run([sys.executable, os.path.join(HERE, "drive.py"), "--self-test"])
    check(r.returncode == 0, "drive.py --self-test: " + r.stdout[-500:])

    # 2.
    r = run(["bash", "bench/gpu/prepare.sh", "--dry-run", "--bin-dir",
             a.bin_dir, "--root", root])
    if r.returncode != 0:
        print(r.stdout[-3000:])
        sys.exit("prepare.sh --dry-run failed")
    for name, m, c in plan.tiny_programs():
        check(os.path.exists(os.path.join(root, "carry", "programs", "tiny",
                                          name + ".prog")),
              "prepare.sh wrote no tiny Program " + name)

    # 3.
    out = os.path.join(a.work, "out")
    env = dict(ROOT=root, OUT=out, DEADLINE_S="600")
    r = run(["bash", "bench/gpu/first-run.sh", "--dry-run"], env=env)
    print(r.stdout[-6000:])
    check(r.returncode == 0, "first-run.sh --dry-run exited %d" %
          r.returncode)
    files, recs, summary = read_out(out)
    # Only drive.OUT_FILES, which are 8 names at OUT's top: a file in a
    # sub-folder has a path that is none of them.
    check(set(files) <= set(drive.OUT_FILES),
          "unexpected files in OUT: %s" % files)
    want = {
        "env": "ok", "smoke": "skipped: no GPU", "suites": "skipped: no GPU",
        "gemm": "skipped: no GPU", "losses": "skipped: no GPU (cuda side; "
        "the cpu side ran all", "mlp8192": "ok", "peers": "ok",
        "timeline": "skipped: no GPU", "models": "ok"}
    for piece, prefix in want.items():
        st = piece_status(recs, piece)
        check(st is not None and st.startswith(prefix),
              "piece %s: status %r, want %r..." % (piece, st, prefix))
        check("] %-9s %s" % (piece + ":", prefix) in summary,
              "summary.txt has no line for piece %s starting %r" %
              (piece, prefix))
    suites = [r for r in recs if r.get("kind") == "suite"]
    check(len(suites) >= 5, "fewer than 5 suites ran, each in its own "
          "process: %d" % len(suites))
    losses = [r for r in recs if r.get("kind") == "losses"]
    check(len(losses) == len(plan.tiny_programs()) and
          all(r.get("cpu_status") == "ok" and
              len(r.get("cpu_losses") or []) == plan.LOSS_STEPS and
              r.get("cuda_status", "").startswith("skipped: no GPU")
              for r in losses),
          "the loss comparison's cpu side did not run every Program: %s" %
          [(r["program"], r.get("cpu_status"), r.get("cuda_status"))
           for r in losses][:6])
    bench = [r for r in recs if r.get("kind") == "bench" and
             r.get("side") == "ampc" and r.get("model") == plan.HEADLINE]
    check(len(bench) == 4 and all(r["status"] == "ok" and
                                  r.get("input_ms") is not None
                                  for r in bench),
          "mlp8192 (cpu): %s" % [(r["config"], r["status"],
                                  r.get("error")) for r in bench])
    peers = [r for r in recs if r.get("side", "").startswith("torch-") and
             r.get("model") == plan.HEADLINE]
    check(any(r["status"] == "ok" and r["variant"] == "eager-foreach" and
              r.get("input_ms") is not None for r in peers),
          "no eager-foreach peer ran: %s" % [(r["variant"], r["dtype"],
                                              r["status"]) for r in peers])
    check(len(peers) == 9 and all(r["status"] in ("ok", "skipped")
                                  for r in peers),
          "peers: want 9 rows (3 variants x 3 dtypes), ok or skipped: %s"
          % [(r["variant"], r["dtype"], r["status"]) for r in peers])
    check("| model | config | batch | ampc step |" in summary,
          "summary.txt has no bench table")
    check(os.path.getsize(os.path.join(out, "losses.tsv")) > 0,
          "losses.tsv is empty")

    # 4.
    out2 = os.path.join(a.work, "out-deadline")
    r = run(["bash", "bench/gpu/first-run.sh", "--dry-run"],
            env=dict(ROOT=root, OUT=out2, DEADLINE_S="30",
                     PIECES="env,mlp8192,peers"))
    files, recs, summary = read_out(out2)
    check(r.returncode == 0, "the deadline run exited %d" % r.returncode)
    check((piece_status(recs, "env") or "").startswith("ok"),
          "deadline run: env did not run")
    for piece in ("mlp8192", "peers"):
        st = piece_status(recs, piece) or ""
        check(st.startswith("skipped: deadline"),
              "deadline run: %s is %r, want skipped: deadline" % (piece, st))
    rows = [r for r in recs if r.get("kind") == "bench"]
    check(rows and all(r["status"].startswith("skipped: deadline")
                       for r in rows),
          "deadline run: the skipped pieces' rows do not say why: %s" %
          [(r.get("side"), r["status"]) for r in rows])
    check("Not measured:" in summary, "deadline run: no 'Not measured' list")

    # 5.
    prev = os.path.join(a.work, "previous.jsonl")
    first_suite = next(r["suite"] for r in read_out(out)[1]
                       if r.get("kind") == "suite")
    with open(prev, "w") as f:
        f.write(json.dumps(dict(kind="suite", suite=first_suite,
                                status="failed (1 of 3 tests)",
                                failed_tests=[first_suite + ".X"])) + "\n")
    out3 = os.path.join(a.work, "out-rerun")
    r = run(["bash", "bench/gpu/first-run.sh", "--dry-run", "--rerun", prev],
            env=dict(ROOT=root, OUT=out3, DEADLINE_S="200",
                     PIECES="suites"))
    files, recs, summary = read_out(out3)
    ran = [r["suite"] for r in recs if r.get("kind") == "suite"]
    check(ran == [first_suite], "rerun: suites run %s, want only %s" %
          (ran, first_suite))
    san = [r for r in recs if r.get("kind") == "suite-sanitizer"]
    check(len(san) == 1 and san[0]["status"].startswith("skipped"),
          "rerun: no compute-sanitizer record: %s" % san)

    # 6.
    gpu_paths(a.work, root)

    print("first_run_dry_test.py: %s in %.0f s" % (
        "FAILED: %d checks" % len(failures) if failures else "ok",
        time.monotonic() - t0))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
