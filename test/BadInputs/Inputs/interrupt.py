"""Sends a signal to a training run once it has taken a step, and reports
how it ended (for checkpoints.test).

usage: interrupt.py SIGNAL METRICS_FILE AMP_RUN ARGS...

Starts AMP_RUN ARGS... (which must write --metrics METRICS_FILE), waits
until METRICS_FILE.tmp (the metrics amp-run writes as it goes) holds a step
row, sends SIGNAL (INT or TERM) and prints amp-run's stderr and then
"exit code N". Gives up (exit code 1) if no step is taken in 60 seconds.
"""
import signal
import subprocess
import sys
import time


def rows(path):
    try:
        with open(path) as f:
            return max(0, len(f.read().splitlines()) - 1)
    except OSError:
        return 0


def main():
    sig = getattr(signal, "SIG" + sys.argv[1])
    metrics = sys.argv[2] + ".tmp"
    p = subprocess.Popen(sys.argv[3:], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, universal_newlines=True)
    deadline = time.time() + 60
    while p.poll() is None and rows(metrics) < 1:
        if time.time() > deadline:
            p.kill()
            sys.exit("no step was taken in 60 seconds")
        time.sleep(0.01)
    p.send_signal(sig)
    _, err = p.communicate()
    sys.stdout.write(err)
    print("exit code %d" % p.returncode)


if __name__ == "__main__":
    main()
