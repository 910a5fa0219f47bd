"""Checks that docs/bad-inputs.md and the bad-input catalogue agree.

usage: check_catalogue.py TEST_DIR DOCS_FILE

The catalogue is every `# CASE ID: description` line of TEST_DIR/*.test;
the page lists a case as a line `- **`ID`** ...`. Fails (exit 1, naming
each) when an id is in one and not the other, when an id appears twice,
when a case has no RUN line checked with its own FileCheck prefix (the id
in lower case) and %no-crash, or when the page refers in backticks to an
id that no case has. Prints "N cases (M open)", the open ones being those
of XFAIL files.
"""
import glob
import os
import re
import sys

CASE = re.compile(r"^# CASE ([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+): \S")
LISTED = re.compile(r"^- \*\*`([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)`\*\*")
MENTION = re.compile(r"`([A-Z][A-Z0-9]*(?:-[A-Z0-9]+)+)`")


def catalogue(test_dir, problems):
    """{id: file} of every case, and the set of open (XFAIL) ids."""
    cases, open_cases = {}, set()
    for path in sorted(glob.glob(os.path.join(test_dir, "*.test"))):
        name = os.path.basename(path)
        lines = open(path).read().splitlines()
        xfail = any(l.startswith("XFAIL:") for l in lines)
        starts = [(i, CASE.match(l).group(1)) for i, l in enumerate(lines)
                  if CASE.match(l)]
        for k, (i, cid) in enumerate(starts):
            if cid in cases:
                problems.append("%s: case %s is also in %s" %
                                (name, cid, cases[cid]))
            cases[cid] = name
            if xfail:
                open_cases.add(cid)
            end = starts[k + 1][0] if k + 1 < len(starts) else len(lines)
            body = lines[i + 1:end]
            prefix = "--check-prefix=" + cid.lower()
            runs = [l for l in body if l.startswith("RUN:") and
                    re.search(re.escape(prefix) + r"(\s|$)", l)]
            if not runs or not all("%no-crash" in l for l in runs):
                problems.append("%s: case %s has no RUN line checked with "
                                "%s and %%no-crash" % (name, cid, prefix))
            if not any(l.startswith(cid.lower() + ":") for l in body):
                problems.append("%s: case %s checks no message (no line "
                                "'%s:')" % (name, cid, cid.lower()))
    return cases, open_cases


def main():
    test_dir, docs = sys.argv[1:3]
    problems = []
    cases, open_cases = catalogue(test_dir, problems)
    listed, mentioned = {}, set()
    for n, line in enumerate(open(docs).read().splitlines(), 1):
        m = LISTED.match(line)
        if m:
            if m.group(1) in listed:
                problems.append("%s:%d: %s is listed twice" %
                                (docs, n, m.group(1)))
            listed[m.group(1)] = n
        mentioned.update(MENTION.findall(line))
    for cid in sorted(set(cases) - set(listed)):
        problems.append("%s (%s) is missing from %s" % (cid, cases[cid], docs))
    for cid in sorted(set(listed) - set(cases)):
        problems.append("%s:%d: %s is no case of the catalogue" %
                        (docs, listed[cid], cid))
    for cid in sorted(mentioned - set(cases) - set(listed)):
        problems.append("%s mentions %s, which is no case" % (docs, cid))
    for p in problems:
        print("error: " + p)
    print("%d cases (%d open)" % (len(cases), len(open_cases)))
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
