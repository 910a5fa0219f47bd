"""Checks that `amp-run --help` documents every option with its default.

    amp-run --help | check_help.py

Every option of amp-run's own categories (LLVM's generic ones aside) must
say what it does and its default ("default ..."), or that it may be
repeated. Prints one FAIL line per option that does not, then a summary.
"""
import re
import sys

option = None
options = {}
category = None
for line in sys.stdin:
    if re.match(r"^\S.*:$", line):
        category = line.strip()[:-1]
        continue
    m = re.match(r"^  (-{1,2}[\w-]+)\S*\s+- (.*)$", line)
    if m:
        option = m.group(1)
        options[option] = (category, m.group(2))
    elif option and line.startswith(" " * 10):
        options[option] = (options[option][0],
                           options[option][1] + " " + line.strip())
ours = {o: d for o, (c, d) in options.items() if c != "Generic Options"}
bad = [o for o, d in ours.items()
       if "default" not in d and "repeatable" not in d]
for o in bad:
    print("FAIL %s does not give its default: %s" % (o, ours[o]))
print("%d options documented, %d without a default" % (len(ours), len(bad)))
sys.exit(1 if bad or len(ours) < 40 else 0)
