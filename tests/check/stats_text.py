"""tests/check/stats_text.py - reads the text of `fxtrace stats` for the check scripts
(devtools_compare.py, json_validate.py), which each keep their own view of it.

stats_rows(path): the "total: N events, ..." line (None when there is none) and the rows of the
"threads:" table, each as (fields, line): a row starts with a pid and a tid and has at least 7
fields (pid tid comm... events dropped overrun lost; comm may hold spaces). A table ends at the
total line.
"""
import re

TOTAL = re.compile(r"total: (\d+) events")


def stats_rows(path):
    total, rows, in_threads = None, [], False
    for line in open(path, encoding="utf-8"):
        if line.startswith("threads:"):
            in_threads = True
            continue
        if TOTAL.match(line):
            total = line
            in_threads = False
            continue
        f = line.split()
        if in_threads and len(f) >= 7 and f[0].isdigit() and f[1].isdigit():
            rows.append((f, line))
    return total, rows
