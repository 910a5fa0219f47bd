#!/usr/bin/env python3
"""The pieces of bench/gpu/first-run.sh, in order, each bounded by the
run's deadline, every result written to the output folder as it comes.

Pieces (first run; bench/README.md says what each runs and checks):
  env, smoke, suites, gemm, losses, mlp8192, peers, timeline, models
--rerun FILE: env, smoke, suites (only those that failed in FILE, their
failing tests also under compute-sanitizer), mlp8192, peers (plan.py's
usual step counts, every configuration), gemm, models (every
configuration, then their torch.compile peers). --sweep: the same without
an earlier run (every suite; only those failing now under
compute-sanitizer).

The output folder holds at most 8 files, none in a sub-folder (OUT_FILES),
each appended to and flushed as the run goes, so that a run killed at any
moment returns what it reached:
  summary.txt    one line per piece as it ends, then report.py's table
  results.jsonl  every result, one JSON object a line ("kind": env, smoke,
                 suite, suite-rerun, suite-sanitizer, gemm-peak, losses,
                 bench, timeline, piece); torch_peer.py appends its rows
                 here directly
  system.txt     the env piece's output
  suites.log     the unit suites' output
  losses.tsv     the loss comparison, one line per (Program, step)
  bench.log      the smoke GEMM, the GEMM peaks, every amp-exec run
  peers.log      torch_peer.py's output
  timeline.txt   ncu's output and the per-kernel summary

Deadline: the run ends by --deadline-s after it started; the last
REPORT_RESERVE_S are the report's. A piece is started only when what is
left is at least its minimum (MIN_S); otherwise it is recorded "skipped:
deadline", and so is every row it would have produced. A piece that starts
may take its cap (CAP_S) less the minimums of the pieces after it, but
never less than its own minimum. Every command runs in its own process
group with a time limit of its own, cut to what is left of its piece's
share; at the limit the group is killed and the command recorded as
"timeout (N s)"; the rows a piece did not reach say "skipped: deadline".

--mode dry (first-run.sh --dry-run): on the CPU, at the tiny sizes. The
CUDA pieces run their commands, which fail without a GPU, and record
"skipped: no GPU (<why>)"; the loss comparison runs its CPU side; the
bench and the peers run on the CPU.

usage: drive.py --mode gpu|dry --bin DIR --programs DIR --tiny-programs DIR
                --sizes FILE --work DIR --out DIR --deadline-s S
                [--pieces LIST] [--rerun FILE | --sweep] [--python PY]
       drive.py --probe-libs [--create]   (the env piece's library probe)
       drive.py --self-test               (the parsers, on canned output)
"""

import argparse
import csv
import glob
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plan  # noqa: E402
import report  # noqa: E402

FIRST_PIECES = ["env", "smoke", "suites", "gemm", "losses", "mlp8192",
                "peers", "timeline", "models"]
RERUN_PIECES = ["env", "smoke", "suites", "mlp8192", "peers", "gemm",
                "models"]
OUT_FILES = ["summary.txt", "results.jsonl", "system.txt", "suites.log",
             "losses.tsv", "bench.log", "peers.log", "timeline.txt"]
REPORT_RESERVE_S = 12

# Seconds: the least worth starting a piece with (also what is kept free
# for it while earlier pieces run), and the most a piece may take.
MIN_S = dict(env=5, smoke=10, suites=20, gemm=15, losses=15, mlp8192=20,
             peers=30, timeline=30, models=20)
CAP_S = dict(env=60, smoke=60, suites=180, gemm=200, losses=120,
             mlp8192=240, peers=300, timeline=120, models=400)
SUITE_TIMEOUT_S = 90
SANITIZER_TIMEOUT_S = 150
GEMM_ORDER = ["f16", "bf16", "f32", "tf32"]  # tf32 is for reference only
GEMM_TIMEOUT_S = dict(f16=30, bf16=30, f32=90, tf32=45)
AMPC_TIMEOUT_S = 90
TORCH_EAGER_TIMEOUT_S = 150
TORCH_COMPILE_TIMEOUT_S = 200

# A suite whose output says this (or that died of a signal) had a device
# fault: a kernel's error surfaces at a later, unrelated call, so it is
# rerun with CUDA_LAUNCH_BLOCKING=1 to name the kernel.
FAULT_RE = re.compile(
    r"CUDA_ERROR_(ILLEGAL_ADDRESS|LAUNCH_FAILED|MISALIGNED_ADDRESS|"
    r"ILLEGAL_INSTRUCTION|HARDWARE_STACK_ERROR|INVALID_PC|"
    r"INVALID_ADDRESS_SPACE|LAUNCH_TIMEOUT|ECC_UNCORRECTABLE|ASSERT|"
    r"LAUNCH_OUT_OF_RESOURCES|UNKNOWN)|illegal memory access|"
    r"unspecified launch failure|misaligned address")

# Loss comparison tolerances: |cuda - cpu| / max(|cpu|, 1e-3) per step.
# f32: both sides compute in f32 in different orders (cuBLASLt's tiles and
# block reductions against OpenBLAS and serial sums), about 1e-6 relative
# per op, grown over LOSS_STEPS steps of training; 1e-4 leaves room for
# that and for nothing a real error would give. f16 and bf16: one rounding
# is 2^-11 (4.9e-4) and 2^-8 (3.9e-3) relative, and the two backends round
# at different points (accumulation order, fused vs separate casts), so the
# loss differs by some ulps of the low precision, compounding over the
# steps: 1e-2 for f16 and 5e-2 for bf16 are about 20 and 13 ulps.
LOSS_TOL = dict(f32=1e-4, f16=1e-2, bf16=5e-2)


class Interrupted(Exception):
    pass


def on_signal(signum, frame):
    raise Interrupted("signal %d" % signum)


def last_line(text):
    """The last non-empty line of a command's output: its error, usually."""
    lines = [l for l in (text or "").strip().splitlines() if l.strip()]
    return lines[-1][:300] if lines else ""


def json_lines(text, kind=None):
    out = []
    for line in (text or "").splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                j = json.loads(line)
            except ValueError:
                continue
            if kind is None or j.get("kind") == kind:
                out.append(j)
    return out


def shown(cmd, env):
    """A command as the logs show it: its extra environment, then argv."""
    return "".join("%s=%s " % kv for kv in (env or {}).items()) + \
        " ".join(cmd)


def find_tool(name):
    """A CUDA tool on PATH or in the toolkit's usual places."""
    p = shutil.which(name)
    if p:
        return p
    for pattern in ("/usr/local/cuda/bin/" + name,
                    "/usr/local/cuda*/bin/" + name,
                    "/usr/local/cuda/compute-sanitizer/" + name,
                    "/opt/nvidia/nsight-compute/*/" + name):
        hits = sorted(glob.glob(pattern))
        if hits and os.access(hits[-1], os.X_OK):
            return hits[-1]
    return None


# -- gtest output ------------------------------------------------------------

def parse_suite_list(text):
    """Suite names from --gtest_list_tests ("Suite." lines; parameterised
    ones as "Prefix/Suite.")."""
    suites = []
    for line in text.splitlines():
        if not line or line[0].isspace() or line.startswith("["):
            continue
        name = line.split("#")[0].strip()
        if name.endswith(".") and re.match(r"^[A-Za-z0-9_/]+\.$", name):
            suites.append(name[:-1])
    return suites


def parse_gtest(text):
    """Counts and names from one gtest process's output."""
    r = dict(completed=False, passed=0, failed=0, skipped=0, ran=0,
             failed_tests=[], skipped_tests=[], running=None)
    names_failed, names_skipped, running = [], [], None
    for line in text.splitlines():
        m = re.match(r"\[==========\] (\d+) tests? from .* ran", line)
        if m:
            r["completed"] = True
            r["ran"] = int(m.group(1))
        m = re.match(r"\[  PASSED  \] (\d+) test", line)
        if m:
            r["passed"] = int(m.group(1))
        m = re.match(r"\[  (FAILED|SKIPPED) +\] (\d+) tests?, listed below",
                     line)
        if m:
            r["failed" if m.group(1) == "FAILED" else "skipped"] = \
                int(m.group(2))
            continue
        m = re.match(r"\[ RUN      \] (\S+)", line)
        if m:
            running = m.group(1)
        m = re.match(r"\[ +(OK|FAILED|SKIPPED) +\] ([A-Za-z0-9_/]+\.\S+)",
                     line)
        if m:
            name = m.group(2).rstrip(",")
            target = names_failed if m.group(1) == "FAILED" else \
                names_skipped if m.group(1) == "SKIPPED" else None
            if target is not None and name not in target:
                target.append(name)
            if name == running:
                running = None
    r["failed_tests"] = names_failed
    r["skipped_tests"] = names_skipped
    if not r["completed"]:
        r["running"] = running  # the test it died in, if any
        r["failed"] = max(r["failed"], len(names_failed))
    return r


def suite_verdict(status, g, gpu):
    """A suite's status from its process status and parsed output."""
    if status.startswith("timeout"):
        return status
    if not g["completed"]:
        return "crashed (%s%s)" % (
            status, ", in " + g["running"] if g["running"] else "")
    if g["failed"]:
        return "failed (%d of %d tests)" % (g["failed"], g["ran"])
    if g["skipped"]:
        if not gpu:
            return ("skipped: no GPU" if not g["passed"]
                    else "ok (%d skipped: no GPU)" % g["skipped"])
        return "failed (%d tests skipped on a GPU machine)" % g["skipped"]
    if status != "ok":
        return "failed (%s)" % status
    return "ok"


def is_fault(status, text):
    return (status.startswith("killed") or status.startswith("crashed")
            or bool(FAULT_RE.search(text or "")))


# -- losses ------------------------------------------------------------------

def read_metrics(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def compare_losses(cpu_rows, cuda_rows, tol):
    """Per step: (step, cpu, cuda, rel, cpu_skipped, cuda_skipped, ok)."""
    out = []
    for a, b in zip(cpu_rows, cuda_rows):
        la, lb = float(a["loss"]), float(b["loss"])
        sa, sb = a.get("skipped", "0"), b.get("skipped", "0")
        if la != la or lb != lb:  # NaN
            rel = 0.0 if (la != la and lb != lb) else float("inf")
        else:
            rel = abs(lb - la) / max(abs(la), 1e-3)
        ok = rel <= tol and float(sa or 0) == float(sb or 0)
        out.append((int(float(a["step"])), la, lb, rel, sa, sb, ok))
    return out


# -- amp-exec figures ----------------------------------------------------------

def ampc_figures(j, rows, warmup):
    """Step and input times of one amp-exec run: medians over the steps
    after `warmup` of the --metrics CSV's step_time_ms, input_ms and their
    per-step sum (amp-exec's own median_step_ms counts every step, the
    first two, which run kernel by kernel and capture the CUDA graph,
    included: kept as exec_median_ms); device memory from its --json."""
    timed = rows[warmup:]
    if not timed:
        raise KeyError("no step after the %d warm-up steps in --metrics"
                       % warmup)
    step = [float(r["step_time_ms"]) for r in timed]
    inp = [float(r.get("input_ms", "nan")) for r in timed]
    losses = [float(r["loss"]) for r in rows]
    have_input = all(v == v for v in inp)
    return dict(step_ms=statistics.median(step),
                input_ms=statistics.median(inp) if have_input else None,
                total_ms=(statistics.median([a + b for a, b in
                                             zip(step, inp)])
                          if have_input else None),
                min_ms=min(step), max_ms=max(step), steps=len(step),
                exec_median_ms=j.get("median_step_ms"),
                exec_median_input_ms=j.get("median_input_ms"),
                peak_bytes=j.get("peak_device_bytes"),
                device_bytes=j.get("device_bytes"),
                device_name=j.get("device_name"),
                loss_first=losses[0], loss_last=losses[-1],
                losses=losses if len(losses) <= 64 else None,
                skipped_steps=j.get("skipped_steps"))


# -- the library probe (a child process of the env piece) ---------------------

def probe_libs(create):
    """Opens libcuda, cuBLASLt and cuDNN in the order the runtime does
    (runtime/cuda/CudaApi.cpp: AMPC_CUDA_LIBRARY_PATH's folders, then the
    loader's own search, then /usr/local/cuda/lib64) and prints one JSON
    object: for each, the name that opened, the file it resolved to, its
    version, and what the loader said about candidates that exist but did
    not load; for cuDNN also each sub-library beside it, and with
    --create whether cudnnCreate succeeds (it needs the GPU)."""
    import ctypes
    dirs = [d for d in os.environ.get("AMPC_CUDA_LIBRARY_PATH",
                                      "").split(":") if d]
    dirs += ["", "/usr/local/cuda/lib64"]
    out = dict(search=dirs)

    def mapped(prefix):
        try:
            with open("/proc/self/maps") as f:
                for line in f:
                    path = line.split()[-1] if len(line.split()) >= 6 else ""
                    if os.path.basename(path).startswith(prefix):
                        return path
        except OSError:
            pass
        return None

    def open_first(names):
        errors = []
        for d in dirs:
            for n in names:
                cand = os.path.join(d, n) if d else n
                try:
                    return ctypes.CDLL(cand, mode=os.RTLD_NOW), cand, errors
                except OSError as e:
                    if not d or os.path.exists(cand):
                        errors.append(str(e)[:300])
        return None, None, errors

    libs = [("libcuda", ["libcuda.so.1", "libcuda.so"], "libcuda.so"),
            ("cuBLASLt", ["libcublasLt.so.13", "libcublasLt.so"],
             "libcublasLt.so"),
            ("cuDNN", ["libcudnn.so.9", "libcudnn.so"], "libcudnn.so"),
            ("NVRTC (cuDNN's runtime-compiled engines)",
             ["libnvrtc.so.13", "libnvrtc.so"], "libnvrtc.so")]
    for label, names, prefix in libs:
        lib, name, errors = open_first(names)
        e = dict(opened=name, file=mapped(prefix) if lib else None,
                 errors=errors[:4])
        try:
            if lib and label == "libcuda":
                v = ctypes.c_int()
                lib.cuDriverGetVersion(ctypes.byref(v))
                e["version"] = v.value
            elif lib and label == "cuBLASLt":
                lib.cublasLtGetVersion.restype = ctypes.c_size_t
                e["version"] = lib.cublasLtGetVersion()
            elif lib and label == "cuDNN":
                lib.cudnnGetVersion.restype = ctypes.c_size_t
                e["version"] = lib.cudnnGetVersion()
                subs = {}
                folder = os.path.dirname(e["file"] or "")
                for f in sorted(glob.glob(os.path.join(folder,
                                                       "libcudnn_*.so.[0-9]*"))):
                    try:
                        ctypes.CDLL(f, mode=os.RTLD_NOW)
                        subs[os.path.basename(f)] = "loads"
                    except OSError as err:
                        subs[os.path.basename(f)] = str(err)[:200]
                e["sub_libraries"] = subs
                if create:
                    h = ctypes.c_void_p()
                    r = lib.cudnnCreate(ctypes.byref(h))
                    lib.cudnnGetErrorString.restype = ctypes.c_char_p
                    e["cudnnCreate"] = lib.cudnnGetErrorString(r).decode()
                    if r == 0:
                        lib.cudnnDestroy(h)
        except (AttributeError, OSError) as err:
            e["error"] = str(err)[:200]
        out[label] = e
    print(json.dumps(out))


# -- the driver ------------------------------------------------------------------

class Driver:
    def __init__(self, a):
        self.a = a
        self.gpu = a.mode == "gpu"
        self.device = "cuda" if self.gpu else "cpu"
        self.size = "full" if self.gpu else "tiny"
        self.first = a.rerun is None and not a.sweep
        self.t0 = time.monotonic()
        self.end = self.t0 + a.deadline_s - REPORT_RESERVE_S
        self.piece_end = self.end
        self.stopped = None  # why the rest of the run is skipped
        self.failures = []
        os.makedirs(a.out, exist_ok=True)
        os.makedirs(a.work, exist_ok=True)
        # The bench Programs' sizes (prepare.sh --dry-run: the tiny ones).
        with open(a.sizes) as f:
            self.sizes = json.load(f)
        self.batches = {m: s["batch"] for m, s in self.sizes.items()}
        self.jobs = 0

    # -- output -------------------------------------------------------------

    def path(self, name):
        assert name in OUT_FILES, name
        return os.path.join(self.a.out, name)

    def append(self, name, text):
        with open(self.path(name), "a", errors="replace") as f:
            f.write(text)

    def elapsed(self):
        return time.monotonic() - self.t0

    def say(self, line):
        line = "[%5.1f s] %s" % (self.elapsed(), line)
        print(line, flush=True)
        self.append("summary.txt", line + "\n")

    def record(self, rec):
        rec.setdefault("t", round(self.elapsed(), 1))
        path = self.path("results.jsonl")
        # A line a killed torch_peer.py left unfinished stays on its own.
        start = ""
        if os.path.exists(path) and os.path.getsize(path):
            with open(path, "rb") as f:
                f.seek(-1, os.SEEK_END)
                start = "" if f.read(1) == b"\n" else "\n"
        with open(path, "a") as f:
            f.write(start + json.dumps(rec) + "\n")

    # -- time -----------------------------------------------------------------

    def left(self):
        return self.piece_end - time.monotonic()

    # -- commands -------------------------------------------------------------

    def _start(self, cmd, out_file, env):
        full = dict(os.environ)
        full.update(env or {})
        return subprocess.Popen(cmd, stdout=out_file,
                                stderr=subprocess.STDOUT, env=full,
                                start_new_session=True)

    @staticmethod
    def _status(rc):
        if rc == 0:
            return "ok"
        if rc < 0:
            try:
                return "killed by %s" % signal.Signals(-rc).name
            except ValueError:
                return "killed by signal %d" % -rc
        return "failed (exit %d)" % rc

    @staticmethod
    def _kill(p):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()

    def run(self, cmd, log, limit, env=None, note=None):
        """Runs cmd with its output appended to OUT/log as it comes;
        returns (status, seconds, output). status: ok, failed (exit N),
        killed by SIG..., timeout (N s)."""
        limit = max(1.0, min(limit, self.left()))
        t0 = time.monotonic()
        with open(self.path(log), "a") as f:
            f.write("\n$ %s%s\n" % (shown(cmd, env),
                                     "   # " + note if note else ""))
            f.flush()
            offset = f.tell()
            p = self._start(cmd, f, env)
            try:
                rc = p.wait(timeout=limit)
                status = self._status(rc)
            except subprocess.TimeoutExpired:
                self._kill(p)
                status = "timeout (%.0f s)" % limit
            except BaseException:
                self._kill(p)
                raise
        secs = time.monotonic() - t0
        with open(self.path(log), errors="replace") as f:
            f.seek(offset)
            text = f.read()
        self.append(log, "# -> %s in %.1f s\n" % (status, secs))
        return status, secs, text

    def run_many(self, jobs, parallel, log):
        """jobs: (key, cmd, env, limit); up to `parallel` at once, each one's
        output appended to OUT/log when it ends. Returns {key: (status,
        seconds, output)}; a job not started before the piece's time ran
        out gets ("skipped: deadline", 0, "")."""
        results, running, todo = {}, [], list(jobs)
        try:
            while todo or running:
                while todo and len(running) < parallel:
                    key, cmd, env, limit = todo.pop(0)
                    if self.left() < 1:
                        results[key] = ("skipped: deadline", 0.0, "")
                        continue
                    self.jobs += 1
                    tmp = os.path.join(self.a.work, "job-%d.log" % self.jobs)
                    f = open(tmp, "w+", errors="replace")
                    running.append((key, cmd, env, f, tmp, time.monotonic(),
                                    min(limit, self.left()),
                                    self._start(cmd, f, env)))
                time.sleep(0.02)
                for job in list(running):
                    key, cmd, env, f, tmp, t0, limit, p = job
                    rc = p.poll()
                    now = time.monotonic()
                    if rc is None and now - t0 < limit:
                        continue
                    if rc is None:
                        self._kill(p)
                        status = "timeout (%.0f s)" % limit
                    else:
                        status = self._status(rc)
                    running.remove(job)
                    f.seek(0)
                    text = f.read()
                    f.close()
                    os.unlink(tmp)
                    secs = now - t0
                    self.append(log, "\n$ %s\n%s# -> %s in %.1f s\n" % (
                        shown(cmd, env), text, status, secs))
                    results[key] = (status, secs, text)
        except BaseException:
            for job in running:
                self._kill(job[7])
            raise
        return results

    # -- pieces ---------------------------------------------------------------

    def piece_list(self):
        order = FIRST_PIECES if self.first else RERUN_PIECES
        if self.a.pieces:
            wanted = self.a.pieces.split(",")
            bad = [p for p in wanted if p not in FIRST_PIECES]
            if bad:
                sys.exit("drive.py: --pieces: unknown %s (pieces: %s)" %
                         (", ".join(bad), ",".join(FIRST_PIECES)))
            order = [p for p in FIRST_PIECES if p in wanted]
            if not self.first:  # the rerun's order, for those it has
                order = [p for p in RERUN_PIECES if p in wanted] + \
                        [p for p in order if p not in RERUN_PIECES]
        return order

    def main(self):
        pieces = self.piece_list()
        self.say("first-run.sh%s: mode %s, pieces %s, deadline %.0f s "
                 "(pieces until %.0f s, then the report)" % (
                     " --rerun " + self.a.rerun if self.a.rerun else
                     " --sweep" if self.a.sweep else "",
                     self.a.mode, ",".join(pieces), self.a.deadline_s,
                     self.a.deadline_s - REPORT_RESERVE_S))
        interrupted = None
        for i, name in enumerate(pieces):
            later = sum(MIN_S[p] for p in pieces[i + 1:])
            room = self.end - time.monotonic()
            t0 = time.monotonic()
            ran = False
            if self.stopped:
                status = "skipped: " + self.stopped
            elif interrupted:
                status = "skipped: interrupted"
            elif room < MIN_S[name]:
                status = ("skipped: deadline (%.0f s left, the piece "
                          "needs %d s)" % (max(0, room), MIN_S[name]))
            else:
                # Its cap, less what the later pieces need at least, but
                # never less than its own minimum: the earlier pieces are
                # the more informative ones.
                self.piece_end = t0 + min(CAP_S[name],
                                          max(MIN_S[name], room - later))
                ran = True
                try:
                    status = getattr(self, "piece_" + name)()
                except Interrupted as e:
                    interrupted = str(e)
                    status = "interrupted (%s)" % e
                except Exception as e:  # a piece's bug is its own failure
                    import traceback
                    traceback.print_exc()
                    status = "failed (drive.py: %s: %s)" % (
                        type(e).__name__, e)
                self.piece_end = self.end
            if not ran:
                self.skip_rows(name, status)
            secs = time.monotonic() - t0
            self.record(dict(kind="piece", piece=name, status=status,
                             seconds=round(secs, 1)))
            bad = not (status.startswith("ok") or
                       status.startswith("skipped"))
            if bad:
                self.failures.append(name)
            self.say("%-9s %s (%.1f s)" % (name + ":", status, secs))
        self.report()
        self.say("first-run.sh: done in %.0f s; %s" % (
            self.elapsed(), "pieces not ok: " + ", ".join(self.failures)
            if self.failures else "no piece failed"))
        return 1 if self.failures else 0

    def report(self):
        try:
            recs = report.load_records(self.path("results.jsonl"))
            sizes = self.sizes
            title = ("ampc GPU %s run" % ("first" if self.first else
                                          "second (--rerun)")
                     if self.gpu else
                     "first-run.sh DRY RUN (CPU, tiny sizes: not a "
                     "measurement)")
            note = "Run %s by bash bench/gpu/first-run.sh%s%s; %.0f s." % (
                time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                " --dry-run" if not self.gpu else "",
                " --rerun " + self.a.rerun if self.a.rerun else
                " --sweep" if self.a.sweep else "",
                self.elapsed())
            self.append("summary.txt", "\n" + report.render(
                recs, sizes, title, note) + "\n")
        except Exception as e:
            import traceback
            traceback.print_exc()
            self.say("report: failed (report.py: %s: %s)" % (
                type(e).__name__, e))
            self.failures.append("report")

    def skip_rows(self, piece, why):
        """The rows a skipped piece would have produced, each saying why."""
        for rec in self.planned_rows(piece):
            rec.update(status=why)
            self.record(rec)

    def planned_rows(self, piece):
        rows = []
        if piece in ("mlp8192", "models"):
            names = ([plan.HEADLINE] if piece == "mlp8192" else
                     [m["name"] for m in plan.MODELS
                      if m["name"] != plan.HEADLINE])
            for m in plan.MODELS:
                if m["name"] in names:
                    configs = plan.schedule(m, self.first)[0]
                    rows += [dict(kind="bench", side="ampc",
                                  model=m["name"], config=c,
                                  dtype=plan.CONFIGS[c][1],
                                  batch=self.batches[m["name"]])
                             for c in configs]
                    if piece == "models":
                        rows += [dict(kind="bench", side="torch-" + v,
                                      variant=v, model=m["name"], dtype=d,
                                      batch=self.batches[m["name"]])
                                 for v in ("eager-foreach", "eager-fused")
                                 for d in plan.torch_dtypes(configs)]
        if piece == "peers":
            m = self.model(plan.HEADLINE)
            for v in ("eager-foreach", "eager-fused", "compile"):
                rows += [dict(kind="bench", side="torch-" + v, variant=v,
                              model=m["name"], dtype=d,
                              batch=self.batches[m["name"]])
                         for d in plan.torch_dtypes(
                             plan.schedule(m, self.first)[0])]
        if piece == "gemm":
            rows += [dict(kind="gemm-peak", dtype=d, shape=s)
                     for d in GEMM_ORDER
                     for s in ("square", "fwd", "dx", "dw")]
        return rows

    @staticmethod
    def model(name):
        return next(m for m in plan.MODELS if m["name"] == name)

    def exe(self, name):
        return os.path.join(self.a.bin, name)

    # env ---------------------------------------------------------------------

    def piece_env(self):
        def sh(title, cmd, timeout=20):
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True,
                                   errors="replace",
                                   timeout=min(timeout, max(1, self.left())))
                text = p.stdout
            except (OSError, subprocess.TimeoutExpired) as e:
                text = "(%s)\n" % e
            self.append("system.txt", "== %s\n$ %s\n%s\n" % (
                title, " ".join(cmd), text.rstrip()))
            return text

        facts = {}
        sh("date", ["date", "-u"])
        sh("kernel", ["uname", "-a"])
        facts["glibc"] = (sh("glibc", ["ldd", "--version"]).splitlines()
                          or [""])[0]
        sh("os", ["cat", "/etc/os-release"])
        sh("cpus and memory", ["sh", "-c", "nproc; free -g"])
        smi = find_tool("nvidia-smi")
        if smi:
            sh("nvidia-smi", [smi])
            q = sh("nvidia-smi query", [
                smi, "--query-gpu=name,memory.total,driver_version,"
                "clocks.sm,clocks.max.sm,clocks.mem,power.limit,"
                "persistence_mode,compute_mode,temperature.gpu",
                "--format=csv"])
            facts["gpu"] = last_line(q)
        else:
            self.append("system.txt", "== nvidia-smi: not found\n")
            facts["gpu"] = None
        facts["python_torch"] = last_line(sh("python and torch", [
            self.a.python, "-c",
            "import sys, torch; print('python', sys.version.split()[0], "
            "'torch', torch.__version__, 'cuda', torch.version.cuda, "
            "'device', torch.cuda.get_device_name() if "
            "torch.cuda.is_available() else 'none')"], timeout=60))
        tools = {}
        for t in ("ncu", "compute-sanitizer", "cuobjdump", "nvcc"):
            tools[t] = find_tool(t)
            if tools[t]:
                sh(t, [tools[t], "--version"])
        facts["tools"] = tools
        self.append("system.txt", "== AMPC_CUDA_LIBRARY_PATH\n%s\n" %
                    os.environ.get("AMPC_CUDA_LIBRARY_PATH", "(unset)"))
        probe = sh("libraries, searched as runtime/cuda/CudaApi.cpp does", [
            sys.executable, os.path.abspath(__file__), "--probe-libs"] +
            (["--create"] if self.gpu else []), timeout=60)
        libs = (json_lines(probe) or [{}])[-1]
        facts["libraries"] = libs
        lines = []
        for label, e in libs.items():
            if label == "search":
                continue
            lines.append("%s: %s%s" % (
                label, e.get("file") or "NOT FOUND",
                " (version %s)" % e["version"] if "version" in e else ""))
            if not e.get("file"):
                lines += ["  " + err for err in e.get("errors") or []]
            for sub, what in (e.get("sub_libraries") or {}).items():
                if what != "loads":
                    lines.append("  %s: %s" % (sub, what))
            if "cudnnCreate" in e:
                lines.append("  cudnnCreate: %s" % e["cudnnCreate"])
        self.append("system.txt", "== where the libraries are\n%s\n" %
                    "\n".join(lines))
        # What the carried binaries need of this machine.
        need = {}
        for t in ("amp-exec", "ampc-cuda-unittests", "ampc-gemm-peak"):
            try:
                with open(self.exe(t), "rb") as f:
                    data = f.read()
                vs = re.findall(rb"GLIBC_2\.(\d+)", data)
                need[t] = "GLIBC_2.%d" % max(int(v) for v in vs) if vs \
                    else None
            except OSError as e:
                need[t] = "(%s)" % e
        facts["binaries_need"] = need
        self.append("system.txt", "== newest glibc each binary needs\n%s\n"
                    % "\n".join("%s: %s" % kv for kv in need.items()))
        self.record(dict(kind="env", status="ok", **facts))
        return "ok (%s; %s)" % (facts["gpu"] or "no nvidia-smi",
                                "; ".join(l for l in lines
                                          if not l.startswith(" ")))

    # smoke -------------------------------------------------------------------

    def piece_smoke(self):
        status, secs, text = self.run([self.exe("ampc-gemm-peak"),
                                       "--smoke"], "bench.log", 60)
        js = json_lines(text, "smoke")
        if js:
            rec = js[-1]
            ok = rec.get("ok") and status == "ok"
            rec.update(status="ok" if ok else "failed", seconds=secs)
            self.record(rec)
            if ok:
                return "ok (%s; libcuda %s; cuBLASLt %s)" % (
                    rec.get("device"), rec.get("libcuda"),
                    rec.get("libcublasLt"))
            if rec.get("ok"):
                return "failed (the GEMMs are right, then: %s: %s)" % (
                    status, last_line(text))
            bad = [c for c in rec.get("checks", []) if not c.get("ok")]
            return "failed (the backend starts; %d GEMM checks off: %s)" % (
                len(bad), ", ".join("%s %s %s" % (c["dtype"], c["layout"],
                                                  c["max_rel_err"])
                                    for c in bad[:6]))
        why = last_line(text) or status
        if not self.gpu:
            self.record(dict(kind="smoke", status="skipped: no GPU",
                             error=why))
            return "skipped: no GPU (%s)" % why
        self.record(dict(kind="smoke", status=status, error=why))
        self.stopped = "the CUDA backend cannot start (smoke: %s)" % why
        return "failed: the CUDA backend cannot start: %s; the run stops " \
               "here" % why

    # suites ------------------------------------------------------------------

    def piece_suites(self):
        exe = self.exe("ampc-cuda-unittests")
        status, secs, text = self.run([exe, "--gtest_list_tests"],
                                      "suites.log", 60)
        suites = parse_suite_list(text)
        if status != "ok" or not suites:
            self.record(dict(kind="suite", suite="(list)", status=status,
                             error=last_line(text)))
            return "failed (--gtest_list_tests: %s: %s)" % (
                status, last_line(text))
        only = None
        if not self.first:
            only = self.previous_failed_suites()
            if only is None:
                self.say("suites:   %s: all suites" % (
                    "%s has no suite results" % self.a.rerun
                    if self.a.rerun else "--sweep"))
            else:
                suites = [s for s in suites if s in only]
                if not suites:
                    self.record(dict(kind="suite", suite="(rerun)",
                                     status="ok",
                                     note="no failed suite in " +
                                     self.a.rerun))
                    return "ok (no suite failed in %s)" % self.a.rerun
        # NCCL's own warnings say why a CudaNccl test's join or exchange
        # failed (unless the caller asked for more).
        env = ({"AMPC_REQUIRE_GPU": "1",
                "NCCL_DEBUG": os.environ.get("NCCL_DEBUG", "WARN")}
               if self.gpu else {})
        jobs = [(s, [exe, "--gtest_filter=%s.*" % s, "--gtest_color=no"],
                 env, SUITE_TIMEOUT_S) for s in suites]
        # Several suites at once on the GPU (each its own process and
        # context); CPU-bound reference computations dominate.
        results = self.run_many(jobs, 4 if self.gpu else 2, "suites.log")
        counts, faulted = {}, []
        for s in suites:
            status, secs, text = results[s]
            if status.startswith("skipped"):
                rec = dict(kind="suite", suite=s, status=status)
            else:
                g = parse_gtest(text)
                verdict = suite_verdict(status, g, self.gpu)
                rec = dict(kind="suite", suite=s, status=verdict,
                           process=status, seconds=round(secs, 1),
                           passed=g["passed"], failed=g["failed"],
                           skipped=g["skipped"],
                           failed_tests=g["failed_tests"][:50],
                           crashed_in=g["running"],
                           fault=is_fault(verdict, text))
                if not self.gpu and g["skipped"]:
                    rec["why_skipped"] = next(
                        (l.strip() for l in text.splitlines()
                         if "no usable CUDA GPU" in l or "GPU" in l), "")
                if rec["fault"] and self.gpu:
                    faulted.append(s)
            self.record(rec)
            key = rec["status"].split(" (")[0].split(":")[0]
            counts[key] = counts.get(key, 0) + 1
        for s in faulted:  # one at a time: the kernel names matter here
            if self.left() < 5:
                self.record(dict(kind="suite-rerun", suite=s,
                                 status="skipped: deadline"))
                continue
            status, secs, text = self.run(
                [exe, "--gtest_filter=%s.*" % s, "--gtest_color=no"],
                "suites.log", SUITE_TIMEOUT_S,
                env=dict(env, CUDA_LAUNCH_BLOCKING="1"),
                note="rerun of a device fault")
            g = parse_gtest(text)
            faults = sorted(set(m.group(0) for m in
                                FAULT_RE.finditer(text)))[:5]
            self.record(dict(kind="suite-rerun", suite=s,
                             env="CUDA_LAUNCH_BLOCKING=1",
                             status=suite_verdict(status, g, self.gpu),
                             failed_tests=g["failed_tests"][:50],
                             crashed_in=g["running"], faults=faults,
                             fault_lines=[l.strip()[:300] for l in
                                          text.splitlines()
                                          if FAULT_RE.search(l)][:10]))
        if not self.first:
            self.sanitize(exe, suites, results)
        summary = ", ".join("%d %s" % (n, k) for k, n in
                            sorted(counts.items()))
        if not self.gpu and set(counts) <= {"skipped", "ok"} and \
                counts.get("skipped"):
            return "skipped: no GPU (%d suites, each in its own process: " \
                   "%s)" % (len(suites), summary)
        if set(counts) == {"ok"}:
            return "ok (%d suites: all passed)" % len(suites)
        return "failed (%d suites: %s%s)" % (
            len(suites), summary,
            "; device faults rerun with CUDA_LAUNCH_BLOCKING=1: " +
            ", ".join(faulted) if faulted else "")

    def previous(self):
        if not self.a.rerun:
            return []
        return report.load_records(self.a.rerun)

    def previous_failed_suites(self):
        """{suite: failed tests} of the earlier run; None when it has no
        suite results (it did not get that far)."""
        recs = [r for r in self.previous() if r.get("kind") == "suite"
                and not r.get("suite", "(").startswith("(")]
        if not recs:
            return None
        return {r["suite"]: r.get("failed_tests") or [] for r in recs
                if not (r["status"].startswith("ok") or
                        r["status"].startswith("skipped"))}

    def sanitize(self, exe, suites, results):
        """The suites that failed in the earlier run or in this one, their
        failing tests (or all their tests, when none is named) under
        compute-sanitizer's memcheck."""
        tool = find_tool("compute-sanitizer")
        earlier = self.previous_failed_suites() or {}
        now_failed = {s: parse_gtest(results[s][2])["failed_tests"]
                      for s in suites if s in results and not
                      (results[s][0] == "ok" and
                       parse_gtest(results[s][2])["completed"])}
        for s in suites:
            if s not in earlier and s not in now_failed:
                continue
            if not tool or not self.gpu:
                self.record(dict(kind="suite-sanitizer", suite=s,
                                 status="skipped: " + (
                                     "no GPU" if not self.gpu else
                                     "compute-sanitizer not found")))
                continue
            if self.left() < 10:
                self.record(dict(kind="suite-sanitizer", suite=s,
                                 status="skipped: deadline"))
                continue
            tests = sorted(set(earlier.get(s, [])) |
                           set(now_failed.get(s, [])))
            filt = ":".join(tests) if tests else s + ".*"
            status, secs, text = self.run(
                [tool, "--tool", "memcheck", "--error-exitcode", "86",
                 "--print-limit", "30", exe, "--gtest_filter=" + filt,
                 "--gtest_color=no"], "suites.log", SANITIZER_TIMEOUT_S,
                env={"AMPC_REQUIRE_GPU": "1"}, note="memcheck")
            m = re.search(r"ERROR SUMMARY: (\d+) error", text)
            self.record(dict(kind="suite-sanitizer", suite=s, filter=filt,
                             status=("memcheck errors" if
                                     status == "failed (exit 86)" else
                                     status),
                             errors=int(m.group(1)) if m else None,
                             seconds=round(secs, 1)))

    # gemm --------------------------------------------------------------------

    def piece_gemm(self):
        got, why = [], None
        for d in GEMM_ORDER:
            shapes = ["square", "fwd", "dx", "dw"]
            if why is not None or self.left() < 5:
                reason = why or "skipped: deadline"
                for s in shapes:
                    self.record(dict(kind="gemm-peak", dtype=d, shape=s,
                                     status=reason))
                continue
            status, secs, text = self.run(
                [self.exe("ampc-gemm-peak"), "--dtype", d], "bench.log",
                GEMM_TIMEOUT_S[d])
            rows = json_lines(text, "gemm-peak")
            for r in rows:
                r["status"] = "ok"
                self.record(r)
                got.append("%s %s %.0f" % (d, r["shape"], r["tflops"]))
            done = {r["shape"] for r in rows}
            reason = status if status != "ok" else "no JSON line"
            if not self.gpu and not rows:
                why = "skipped: no GPU (%s)" % last_line(text)
                reason = why
            for s in shapes:
                if s not in done:
                    self.record(dict(kind="gemm-peak", dtype=d, shape=s,
                                     status=reason,
                                     error=last_line(text)))
        if why:
            return why
        if len(got) == 4 * len(GEMM_ORDER):
            return "ok (TFLOP/s: %s)" % ", ".join(got)
        return "failed (%d of %d measured: %s)" % (
            len(got), 4 * len(GEMM_ORDER), ", ".join(got))

    # losses ------------------------------------------------------------------

    def piece_losses(self):
        progs = plan.tiny_programs()
        steps = plan.LOSS_STEPS
        jobs = []
        for name, m, c in progs:
            prog = os.path.join(self.a.tiny_programs, name + ".prog")
            for dev in ("cpu", "cuda"):
                csv_path = os.path.join(self.a.work, "%s.%s.csv" %
                                        (name, dev))
                cmd = [self.exe("amp-exec"), prog, "--mode", "train",
                       "--device", dev, "--steps", str(steps),
                       "--init-params", "uniform:%d" % plan.INIT_SEED,
                       "--metrics", csv_path, "--progress", "none"]
                if dev == "cpu":
                    cmd += ["--threads", "1"]
                jobs.append(((name, dev), cmd, None, 60))
        cores = os.cpu_count() or 2
        results = self.run_many(jobs, max(2, min(8, cores // 2)),
                                "bench.log")
        if not os.path.exists(self.path("losses.tsv")):
            self.append("losses.tsv", "\t".join([
                "program", "dtype", "step", "cpu_loss", "cuda_loss",
                "rel_diff", "tol", "cpu_skipped", "cuda_skipped",
                "verdict"]) + "\n")
        counts = {}
        for name, m, c in progs:
            dtype = plan.CONFIGS[c][1]
            tol = LOSS_TOL[dtype]
            rec = dict(kind="losses", program=name, model=m["name"],
                       config=c, dtype=dtype, tol=tol, steps=steps)
            sides = {}
            for dev in ("cpu", "cuda"):
                status, secs, text = results[(name, dev)]
                path = os.path.join(self.a.work, "%s.%s.csv" % (name, dev))
                rows = None
                if status == "ok":
                    try:
                        rows = read_metrics(path)
                    except (OSError, ValueError, KeyError) as e:
                        status = "failed (reading --metrics: %s)" % e
                if dev == "cuda" and status != "ok" and not self.gpu:
                    status = "skipped: no GPU (%s)" % last_line(text)
                elif status != "ok" and not status.startswith("skipped"):
                    rec[dev + "_error"] = last_line(text)
                rec[dev + "_status"] = status
                sides[dev] = rows
                if rows:
                    rec[dev + "_losses"] = [float(r["loss"]) for r in rows]
            if sides["cpu"] and sides["cuda"]:
                cmp = compare_losses(sides["cpu"], sides["cuda"], tol)
                worst = max(cmp, key=lambda t: t[3])
                rec.update(max_rel=worst[3], worst_step=worst[0],
                           status="ok" if all(t[6] for t in cmp) and
                           len(cmp) == steps else "mismatch")
                lines = ["\t".join([name, dtype, str(t[0]), repr(t[1]),
                                    repr(t[2]), "%.3g" % t[3], "%g" % tol,
                                    t[4], t[5],
                                    "ok" if t[6] else "MISMATCH"])
                         for t in cmp]
            else:
                failed = [d for d in ("cpu", "cuda")
                          if not rec[d + "_status"].startswith("ok") and
                          not rec[d + "_status"].startswith("skipped")]
                rec["status"] = ("failed (%s)" % ", ".join(
                    "%s: %s" % (d, rec.get(d + "_error") or
                                rec[d + "_status"]) for d in failed)
                    if failed else rec["cuda_status"]
                    if not rec["cuda_status"].startswith("ok")
                    else rec["cpu_status"])
                lines = ["\t".join([name, dtype, str(i), repr(v), "-", "-",
                                    "%g" % tol, "-", "-",
                                    rec["status"][:80]])
                         for i, v in enumerate(rec.get("cpu_losses") or [])]
                if not lines:
                    lines = ["\t".join([name, dtype, "-", "-", "-", "-",
                                        "%g" % tol, "-", "-",
                                        rec["status"][:80]])]
            self.append("losses.tsv", "\n".join(lines) + "\n")
            self.record(rec)
            key = rec["status"].split(" (")[0]
            counts[key] = counts.get(key, 0) + 1
        summary = ", ".join("%d %s" % (n, k) for k, n in
                            sorted(counts.items()))
        cpu_ok = sum(1 for name, m, c in progs
                     if results[(name, "cpu")][0] == "ok")
        if not self.gpu:
            if cpu_ok == len(progs):
                return "skipped: no GPU (cuda side; the cpu side ran all " \
                       "%d Programs)" % len(progs)
            return "failed (cpu side: %d of %d Programs ran)" % (
                cpu_ok, len(progs))
        if set(counts) == {"ok"}:
            return "ok (%d Programs, cpu and cuda losses agree)" % len(progs)
        return "failed (%d Programs: %s)" % (len(progs), summary)

    # the bench -----------------------------------------------------------

    def ampc_bench(self, m, config):
        _, warmup, _, _ = plan.schedule(m, self.first)
        steps = plan.steps_for(m, config, self.first)
        name = plan.program_name(m["name"], config)
        prog = os.path.join(self.a.programs, name + ".prog")
        out_json = os.path.join(self.a.work, name + ".ampc.json")
        out_csv = os.path.join(self.a.work, name + ".ampc.csv")
        for f in (out_json, out_csv):
            if os.path.exists(f):
                os.unlink(f)
        cmd = [self.exe("amp-exec"), prog, "--mode", "train",
               "--device", self.device, "--steps", str(warmup + steps),
               "--init-params", "uniform:%d" % plan.INIT_SEED,
               "--json", out_json, "--metrics", out_csv, "--progress", "none"]
        rec = dict(kind="bench", side="ampc", model=m["name"], config=config,
                   dtype=plan.CONFIGS[config][1],
                   batch=self.batches[m["name"]], warmup=warmup,
                   cmd=" ".join(cmd))
        if self.left() < 5:
            rec["status"] = "skipped: deadline"
            self.record(rec)
            return rec
        status, secs, text = self.run(cmd, "bench.log", AMPC_TIMEOUT_S)
        rec.update(status=status, seconds=round(secs, 1))
        warnings = [l.strip()[:300] for l in text.splitlines()
                    if "warning" in l.lower()][:5]
        if warnings:
            rec["warnings"] = warnings
        if status != "ok":
            rec["error"] = last_line(text)
        else:
            try:
                with open(out_json) as f:
                    j = json.load(f)
                rec.update(ampc_figures(j, read_metrics(out_csv), warmup))
            except (OSError, ValueError, KeyError) as e:
                rec["status"] = "failed (reading %s: %s)" % (out_json, e)
        self.record(rec)
        return rec

    def bench_status(self, recs):
        ok = [r for r in recs if r["status"] == "ok"]
        if len(ok) == len(recs):
            return "ok (%s)" % ", ".join(
                "%s %s %.3f ms + %s ms input" % (
                    r["model"], r.get("config") or r.get("variant") + " " +
                    r["dtype"], r["step_ms"], "%.3f" % r["input_ms"]
                    if r.get("input_ms") is not None else "?")
                for r in ok)
        return "failed (%d of %d ran: %s)" % (
            len(ok), len(recs), "; ".join(
                "%s %s: %s" % (r["model"], r.get("config") or
                               r.get("variant", "") + " " + r["dtype"],
                               r.get("error") or r["status"])
                for r in recs if r["status"] != "ok")[:600])

    def piece_mlp8192(self):
        m = self.model(plan.HEADLINE)
        recs = [self.ampc_bench(m, c)
                for c in plan.schedule(m, self.first)[0]]
        return self.bench_status(recs)

    def torch_peer(self, m, variants, dtypes, first, limit):
        _, warmup, steps, steps_f32 = plan.schedule(m, first)
        results = self.path("results.jsonl")
        cmd = [self.a.python, os.path.join(HERE, "torch_peer.py"),
               "--model", m["name"], "--size", self.size,
               "--dtypes", ",".join(dtypes), "--variants", ",".join(variants),
               "--steps", str(steps), "--steps-f32", str(steps_f32),
               "--warmup", str(warmup), "--lr", repr(m["lr"]),
               "--device", self.device, "--jsonl", results]
        with open(results) as f:
            f.seek(0, os.SEEK_END)
            offset = f.tell()
        if self.left() < 10:
            status, text = "skipped: deadline", ""
        else:
            status, secs, text = self.run(cmd, "peers.log", limit)
        with open(results) as f:
            f.seek(offset)
            got = []
            for line in f:
                try:
                    got.append(json.loads(line))
                except ValueError:  # cut short by the kill
                    pass
        done = {(r.get("variant"), r.get("dtype")) for r in got}
        for v in variants:
            for d in dtypes:
                if (v, d) not in done:  # never reached: time-out, crash
                    rec = dict(kind="bench", side="torch-" + v, variant=v,
                               model=m["name"], dtype=d,
                               batch=self.batches[m["name"]], status=status,
                               error="no result from torch_peer.py (%s): %s"
                               % (status, last_line(text)))
                    self.record(rec)
                    got.append(rec)
        return got

    def peers_status(self, recs):
        ok = [r for r in recs if r["status"] == "ok"]
        skipped = [r for r in recs if r["status"].startswith("skipped")]
        bad = [r for r in recs if r not in ok and r not in skipped]
        text = "%d ran, %d skipped, %d failed" % (len(ok), len(skipped),
                                                  len(bad))
        detail = "; ".join("%s %s: %s" % (r["variant"], r["dtype"],
                                         (r.get("error") or r["status"])
                                         [:120])
                           for r in bad + skipped)
        return ("failed" if bad else "ok") + " (%s%s)" % (
            text, ": " + detail if detail else "")

    def piece_peers(self):
        m = self.model(plan.HEADLINE)
        dtypes = plan.torch_dtypes(plan.schedule(m, self.first)[0])
        recs = self.torch_peer(m, ["eager-foreach", "eager-fused"], dtypes,
                               self.first, TORCH_EAGER_TIMEOUT_S)
        # Compilation is the slowest part: the AMP dtypes first.
        order = [d for d in ("f16", "bf16", "f32") if d in dtypes]
        recs += self.torch_peer(m, ["compile"], order, self.first,
                                TORCH_COMPILE_TIMEOUT_S)
        return self.peers_status(recs)

    # timeline ------------------------------------------------------------------

    def piece_timeline(self):
        if not self.gpu:
            self.record(dict(kind="timeline", status="skipped: no GPU"))
            return "skipped: no GPU"
        ncu = find_tool("ncu")
        if not ncu:
            self.record(dict(kind="timeline",
                             status="skipped: ncu not found"))
            return "skipped: ncu not found (PATH, /usr/local/cuda/bin, " \
                   "/opt/nvidia/nsight-compute)"
        config = "O2-f16"
        prog = os.path.join(self.a.programs, plan.program_name(
            plan.HEADLINE, config) + ".prog")
        # One step, kernel by kernel (no graph: each launch is its own
        # profiled kernel), every kernel's duration as ncu measures it with
        # the clocks as it finds them (--clock-control none) and the caches
        # as the previous kernel left them (--cache-control none).
        cmd = [ncu, "--clock-control", "none", "--cache-control", "none",
               "--target-processes", "all", "--metrics",
               "gpu__time_duration.sum", "--csv", "--print-units", "base",
               "--launch-count", "600",
               self.exe("amp-exec"), prog, "--mode", "train", "--device",
               "cuda", "--steps", "1", "--init-params",
               "uniform:%d" % plan.INIT_SEED, "--progress", "none",
               "--cuda-graph", "off"]
        status, secs, text = self.run(cmd, "timeline.txt", 120)
        kernels = parse_ncu_csv(text)
        total = sum(ns for _, _, ns in kernels)
        by_name = {}
        for _, k, ns in kernels:
            n, t = by_name.get(k, (0, 0.0))
            by_name[k] = (n + 1, t + ns)
        lines = ["", "== per-kernel timeline of one %s %s step (%d kernels,"
                 " %.3f ms of kernel time)" % (plan.HEADLINE, config,
                                               len(kernels), total / 1e6),
                 "order\tus\tkernel"]
        lines += ["%d\t%.1f\t%s" % (i, ns / 1e3, k[:160])
                  for i, (_, k, ns) in enumerate(kernels)]
        lines += ["", "== by kernel name: calls, total us, share",
                  "calls\tus\tshare\tkernel"]
        for k, (n, t) in sorted(by_name.items(), key=lambda kv: -kv[1][1]):
            lines.append("%d\t%.1f\t%.1f%%\t%s" % (
                n, t / 1e3, 100 * t / total if total else 0, k[:160]))
        self.append("timeline.txt", "\n".join(lines) + "\n")
        top = sorted(by_name.items(), key=lambda kv: -kv[1][1])[:12]
        self.record(dict(kind="timeline", status=status if kernels else
                         "failed (%s; no kernel in ncu's output: %s)" % (
                             status, last_line(text)),
                         config=config, kernels=len(kernels),
                         kernel_ms=total / 1e6,
                         top=[dict(kernel=k[:120], calls=n, us=t / 1e3)
                              for k, (n, t) in top]))
        if not kernels:
            return "failed (%s; no kernel in ncu's output: %s)" % (
                status, last_line(text))
        return "%s (%d kernels, %.3f ms of kernel time; see timeline.txt)" % (
            "ok" if status == "ok" else status, len(kernels), total / 1e6)

    # the other models ------------------------------------------------------

    def piece_models(self):
        recs = []
        others = [m for m in plan.MODELS if m["name"] != plan.HEADLINE]
        for m in others:
            configs = plan.schedule(m, self.first)[0]
            recs += [self.ampc_bench(m, c) for c in configs]
            recs += self.torch_peer(m, ["eager-foreach", "eager-fused"],
                                    plan.torch_dtypes(configs), self.first,
                                    TORCH_EAGER_TIMEOUT_S)
        if not self.first:
            for name in plan.COMPILE_ORDER:
                if name == plan.HEADLINE:
                    continue
                m = self.model(name)
                recs += self.torch_peer(
                    m, ["compile"], plan.torch_dtypes(
                        plan.schedule(m, False)[0]), False,
                    TORCH_COMPILE_TIMEOUT_S)
        ok = [r for r in recs if r["status"] == "ok"]
        skipped = [r for r in recs if r["status"].startswith("skipped")]
        bad = [r for r in recs if r not in ok and r not in skipped]
        text = "%d ran, %d skipped, %d failed" % (len(ok), len(skipped),
                                                  len(bad))
        detail = "; ".join("%s %s: %s" % (
            r["model"], r.get("config") or r.get("variant") + " " +
            r["dtype"], (r.get("error") or r["status"])[:100])
            for r in bad)
        return ("failed" if bad else "ok") + " (%s%s)" % (
            text, ": " + detail if detail else "")


def parse_ncu_csv(text):
    """(id, kernel name, ns) of each profiled kernel in ncu --csv output
    with the one metric gpu__time_duration.sum."""
    out = []
    header = None
    for row in csv.reader(l for l in text.splitlines()
                          if l.startswith('"')):
        if header is None:
            if "Kernel Name" in row and "Metric Value" in row:
                header = {k: i for i, k in enumerate(row)}
            continue
        try:
            if row[header["Metric Name"]] != "gpu__time_duration.sum":
                continue
            v = float(row[header["Metric Value"]].replace(",", ""))
            unit = row[header["Metric Unit"]] if "Metric Unit" in header \
                else "ns"
            scale = {"ns": 1, "nsecond": 1, "us": 1e3, "usecond": 1e3,
                     "ms": 1e6, "msecond": 1e6}.get(unit, 1)
            out.append((row[header["ID"]], row[header["Kernel Name"]],
                        v * scale))
        except (KeyError, IndexError, ValueError):
            continue
    return out


# -- self-test -----------------------------------------------------------------

def self_test():
    listing = ("Running main() from gtest_main.cc\nCudaGemm.\n  Basic\n"
               "  Bias\nInst/CudaParam.\n  Case/0  # GetParam() = 1\n")
    assert parse_suite_list(listing) == ["CudaGemm", "Inst/CudaParam"], \
        parse_suite_list(listing)
    ok = ("[==========] Running 2 tests from 1 test suite.\n"
          "[ RUN      ] CudaGemm.Basic\n[       OK ] CudaGemm.Basic (3 ms)\n"
          "[ RUN      ] CudaGemm.Bias\n[  SKIPPED ] CudaGemm.Bias (0 ms)\n"
          "[==========] 2 tests from 1 test suite ran. (5 ms total)\n"
          "[  PASSED  ] 1 test.\n[  SKIPPED ] 1 test, listed below:\n"
          "[  SKIPPED ] CudaGemm.Bias\n")
    g = parse_gtest(ok)
    assert g["completed"] and g["passed"] == 1 and g["skipped"] == 1, g
    assert suite_verdict("ok", g, True).startswith("failed (1 tests skipped")
    assert suite_verdict("ok", g, False).startswith("ok (1 skipped")
    crash = ("[ RUN      ] CudaGemm.Basic\n[       OK ] CudaGemm.Basic\n"
             "[ RUN      ] CudaGemm.Bias\nerror: cuStreamSynchronize "
             "failed: CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access "
             "was encountered)\n")
    g = parse_gtest(crash)
    assert not g["completed"] and g["running"] == "CudaGemm.Bias", g
    v = suite_verdict("killed by SIGABRT", g, True)
    assert v.startswith("crashed") and "CudaGemm.Bias" in v, v
    assert is_fault(v, crash) and is_fault("failed (exit 1)", crash)
    assert not is_fault("failed (exit 1)", "[  FAILED  ] X.Y")
    failed = ("[ RUN      ] A.B\nx.cpp:3: Failure\n[  FAILED  ] A.B (1 ms)\n"
              "[==========] 1 test from 1 test suite ran. (1 ms total)\n"
              "[  PASSED  ] 0 tests.\n[  FAILED  ] 1 test, listed below:\n"
              "[  FAILED  ] A.B\n\n 1 FAILED TEST\n")
    g = parse_gtest(failed)
    assert g["failed"] == 1 and g["failed_tests"] == ["A.B"], g
    assert suite_verdict("failed (exit 1)", g, True).startswith("failed (1")
    rows = lambda ls, sk=None: [dict(step=str(i), loss=repr(v),
                                     skipped=str((sk or {}).get(i, 0)))
                                for i, v in enumerate(ls)]
    c = compare_losses(rows([1.0, 0.9]), rows([1.00001, 0.90002]), 1e-4)
    assert all(t[6] for t in c), c
    c = compare_losses(rows([1.0, 0.9]), rows([1.0, 0.95]), 1e-2)
    assert c[0][6] and not c[1][6], c
    c = compare_losses(rows([1.0, 0.9]), rows([1.0, 0.9], {1: 1}), 1e-2)
    assert not c[1][6], c
    ncu = ('==PROF== Connected\n"ID","Process ID","Process Name",'
           '"Host Name","Kernel Name","Context","Stream","Block Size",'
           '"Grid Size","Device","CC","Section Name","Metric Name",'
           '"Metric Unit","Metric Value"\n'
           '"0","1","amp-exec","h","ampc_cast_f32_f16","1","7","(256, 1, 1)",'
           '"(8, 1, 1)","0","9.0","Command line profiler metrics",'
           '"gpu__time_duration.sum","ns","1,234"\n')
    k = parse_ncu_csv(ncu)
    assert k == [("0", "ampc_cast_f32_f16", 1234.0)], k
    fig = ampc_figures({"median_step_ms": 9.0},
                       [dict(step=str(i), loss="1", step_time_ms=str(t),
                             input_ms=str(t / 10))
                        for i, t in enumerate([50, 20, 10, 12, 11])], 2)
    assert fig["step_ms"] == 11 and abs(fig["input_ms"] - 1.1) < 1e-9 and \
        abs(fig["total_ms"] - 12.1) < 1e-9, fig
    print("drive.py --self-test: ok")


def main():
    if sys.argv[1:2] == ["--probe-libs"]:
        probe_libs("--create" in sys.argv)
        return 0
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--mode", required=True, choices=["gpu", "dry"])
    p.add_argument("--bin", required=True)
    p.add_argument("--programs", required=True)
    p.add_argument("--tiny-programs", required=True)
    p.add_argument("--sizes", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--deadline-s", type=float, required=True)
    p.add_argument("--pieces")
    p.add_argument("--rerun", metavar="FILE")
    p.add_argument("--sweep", action="store_true",
                   help="the second run's mode without an earlier run")
    p.add_argument("--python", default=sys.executable)
    a = p.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return Driver(a).main()


if __name__ == "__main__":
    sys.exit(main())
