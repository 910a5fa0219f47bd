"""Checks what `amp-run --compare-fp32 --plot --eval-metrics` reported.

    check_training_report.py STDOUT EVAL_CSV PLOT_SVG --min-accuracy PCT
                             --max-gap POINTS

Reads the per-epoch lines of both runs from amp-run's stdout, and checks:
the AMP run's final test accuracy is at least PCT, the f32 run's is within
POINTS of it, the eval metrics file holds the AMP run's epochs with the same
figures as stdout, and the plot is well-formed SVG with its three panels.
Prints PASS/FAIL lines and a RESULT line.
"""
import argparse
import csv
import re
import sys
import xml.etree.ElementTree as ET

EPOCH = re.compile(r"^(?P<run>[^:]+): epoch (?P<e>\d+)/(?P<n>\d+): train loss "
                   r"(?P<train>\S+), test loss (?P<loss>\S+), test accuracy "
                   r"(?P<acc>\S+)%")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("stdout")
    p.add_argument("eval_csv")
    p.add_argument("plot")
    p.add_argument("--min-accuracy", type=float, required=True)
    p.add_argument("--max-gap", type=float, required=True)
    a = p.parse_args()
    runs = {}
    for line in open(a.stdout):
        m = EPOCH.match(line)
        if m:
            runs.setdefault(m.group("run"), []).append(
                (int(m.group("e")), float(m.group("loss")),
                 float(m.group("acc"))))
    amp = [r for r in runs if r != "f32"]
    checks = []
    if len(amp) != 1 or "f32" not in runs:
        print("FAIL expected one AMP run and f32 in the output, got %s"
              % sorted(runs))
        return 1
    amp_rows, f32_rows = runs[amp[0]], runs["f32"]
    acc, f32_acc = amp_rows[-1][2], f32_rows[-1][2]
    checks.append(("%s reaches %.2f%% test accuracy in %d epochs (>= %g%%)"
                   % (amp[0], acc, len(amp_rows), a.min_accuracy),
                   acc >= a.min_accuracy))
    checks.append(("f32 on the same batches reaches %.2f%%: %s is %+.2f "
                   "points from it (within %g)"
                   % (f32_acc, amp[0], acc - f32_acc, a.max_gap),
                   abs(acc - f32_acc) <= a.max_gap))
    rows = list(csv.DictReader(open(a.eval_csv)))
    same = len(rows) == len(amp_rows) and all(
        abs(float(r["test_accuracy"]) * 100 - e[2]) < 0.006 and
        abs(float(r["test_loss"]) - e[1]) < 6e-5 and
        float(r["epoch"]) == e[0] for r, e in zip(rows, amp_rows))
    checks.append(("--eval-metrics holds the %d epochs stdout shows"
                   % len(amp_rows), same))
    try:
        root = ET.parse(a.plot).getroot()
        panels = [g.get("id") for g in root.iter("{http://www.w3.org/2000/svg}g")
                  if (g.get("id") or "").endswith("-panel")]
        ok = root.tag == "{http://www.w3.org/2000/svg}svg" and panels == [
            "loss-panel", "accuracy-panel", "scale-panel"]
        text = open(a.plot).read()
        ok = ok and amp[0] in text and "f32" in text
        checks.append(("the plot is SVG with the loss, accuracy and scale "
                       "panels and both runs", ok))
    except ET.ParseError as e:
        checks.append(("the plot parses as XML (%s)" % e, False))
    for what, ok in checks:
        print("%s %s" % ("PASS" if ok else "FAIL", what))
    print("RESULT %s: %s; f32: %s" % (
        amp[0], " ".join("%.2f%%" % r[2] for r in amp_rows),
        " ".join("%.2f%%" % r[2] for r in f32_rows)))
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
