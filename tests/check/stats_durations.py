#!/usr/bin/env python3
"""tests/check/stats_durations.py - `fxtrace stats --durations [--by-thread]` against an
independent computation: the same files converted to Chrome JSON by `fxtrace convert` (its own
begin/end pairing into complete events, durations in microseconds with nanosecond decimals),
summed, sorted and ranked here in Python, and printed in the table's documented layout.

  stats_durations.py FXTRACE DEMO DURATION_EVENTS WORKDIR
"""
import json
import os
import subprocess
import sys


def expected(js, by_thread):
    names = {}
    for e in js["traceEvents"]:
        if e.get("ph") == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
    groups, begins, ends = {}, 0, 0
    for e in js["traceEvents"]:
        ph = e.get("ph")
        if ph == "X" and e.get("cat") != "kernel:meta":
            k = (e["cat"] + ":" + e["name"], (e["pid"], e["tid"]) if by_thread else None)
            groups.setdefault(k, []).append(round(e["dur"] * 1000))
        elif ph == "B":
            begins += 1
        elif ph == "E":
            ends += 1
    rows = []
    for (name, th), v in groups.items():
        v.sort()
        n, tot = len(v), sum(v)

        def rank(p):  # nearest rank: the value at ceil(p/100 * n)
            return v[max(-(-n * p // 100), 1) - 1]

        q, r = divmod(tot, n)
        rows.append((tot, name, th, [n, tot, v[0], q + (2 * r >= n), rank(50), rank(90), rank(99),
                                     v[-1]]))
    rows.sort(key=lambda r: (-r[0], r[1], r[2][1] if r[2] else 0))
    out = ["durations (ns):",
           "%10s %14s %12s %12s %12s %12s %12s %12s  " % ("count", "total", "min", "mean", "p50",
                                                          "p90", "p99", "max")
           + ("%10s %10s  %-16s %s" % ("pid", "tid", "comm", "system:event") if by_thread
              else "system:event")]
    for _, name, th, c in rows:
        line = "%10d %14d %12d %12d %12d %12d %12d %12d  " % tuple(c)
        if th:
            line += "%10d %10d  %-16s " % (th[0], th[1], names.get(th[1], "<...>"))
        out.append(line + name)
    out += ["", "unmatched: %d begins without an end, %d ends without a begin" % (begins, ends)]
    return "\n".join(out) + "\n"


def main():
    fxtrace, demo, gen, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    files = []
    f = os.path.join(work, "demo.fxt")
    if os.path.exists(f):
        os.remove(f)
    subprocess.run([fxtrace, "record", "-e", "demo:*", "-b", "65536", "-o", f, "--", demo,
                    "--duration", "0.3"], check=True, capture_output=True)
    files.append(f)
    f = os.path.join(work, "durations.fxt")
    subprocess.run([gen, f], check=True)
    files.append(f)
    failed = 0
    for f in files:
        subprocess.run([fxtrace, "convert", "-q", f, "-o", f + ".json"], check=True)
        js = json.load(open(f + ".json"))
        for by in (False, True):
            args = [fxtrace, "stats", "--durations"] + (["--by-thread"] if by else []) + [f]
            got = subprocess.run(args, capture_output=True, text=True)
            want = expected(js, by)
            if got.returncode != 0 or got.stdout != want:
                failed += 1
                print("FAIL: %s: exit %d\n--- got\n%s--- want\n%s%s" % (
                    " ".join(args[1:]), got.returncode, got.stdout, want, got.stderr))
            else:
                print("ok: %s: %d rows" % (" ".join(args[1:]), want.count("\n") - 4))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
