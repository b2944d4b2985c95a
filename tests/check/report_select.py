#!/usr/bin/env python3
"""tests/check/report_select.py - `fxtrace report`'s selection options against an independent
reader: the same demo trace converted to trace.dat and printed by `trace-cmd report -R`
(libtraceevent decoding each record's raw fields), selected here in Python.

  report_select.py FXTRACE DEMO WORKDIR

Every case runs `fxtrace report OPTIONS demo.fxt` and compares its events, as (tid, cpu,
time as printed, event name), with the events of trace-cmd's output that the case's Python
predicate keeps. Exit 77 (skipped) without trace-cmd.
"""
import fnmatch
import os
import re
import shutil
import subprocess
import sys

LINE = re.compile(r"^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(?:\S{5}\s+)?(\d+\.\d{6}): ([^:]+):\s?(.*)$")
PAIR = re.compile(r"(\w+)=(\S*)")


def parse(text, raw):
    out = []
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        comm, tid, cpu, ts, name, rest = m.groups()
        ev = {"comm": comm, "tid": int(tid), "cpu": int(cpu), "ts": ts, "name": name.strip()}
        if raw:
            fields = {}
            for k, v in PAIR.findall(rest):
                try:
                    fields[k] = int(v, 0)
                except ValueError:
                    fields[k] = v
            ev["fields"] = fields
        out.append(ev)
    return out


def key(e):
    return (e["tid"], e["cpu"], e["ts"], e["name"])


def demo_trace(fxtrace, demo, work):
    """The demo recorded into WORK/demo.fxt, and its events as trace-cmd report -R prints the
    same trace converted to trace.dat (each with its raw fields)."""
    os.makedirs(work, exist_ok=True)
    fxt = os.path.join(work, "demo.fxt")
    dat = os.path.join(work, "demo.dat")
    for f in (fxt, dat):
        if os.path.exists(f):
            os.remove(f)
    subprocess.run([fxtrace, "record", "-e", "demo:*,printk:*", "-b", "65536", "-o", fxt, "--",
                    demo, "--duration", "0.5"], check=True, capture_output=True)
    subprocess.run([fxtrace, "convert", "-q", fxt, "-o", dat], check=True)
    tc = subprocess.run(["trace-cmd", "report", "-R", "-i", dat], check=True,
                        capture_output=True, text=True).stdout
    return fxt, parse(tc, True)


def main():
    fxtrace, demo, work = sys.argv[1:4]
    if shutil.which("trace-cmd") is None:
        print("SKIP: no trace-cmd")
        return 77
    fxt, ref = demo_trace(fxtrace, demo, work)
    full = parse(subprocess.run([fxtrace, "report", fxt], check=True, capture_output=True,
                                text=True).stdout, False)
    if sorted(map(key, full)) != sorted(map(key, ref)) or len(ref) < 20:
        print("FAIL: unselected report and trace-cmd differ (%d vs %d events)" % (len(full), len(ref)))
        return 1

    tids = sorted({e["tid"] for e in ref})
    producer = next(e["tid"] for e in ref if e["comm"] == "producer")
    pid = min(tids)  # the demo's main thread: its tid is the process id
    times = sorted(e["ts"] for e in ref)
    t_from, t_to = times[len(times) // 4], times[len(times) // 2]
    # A relative start in the middle of a gap of more than 4 us between two events, so that
    # the microseconds printed decide it.
    first = float(times[0])
    gaps = [(float(b) - float(a), a) for a, b in zip(times[len(times) // 3:], times[len(times) // 3 + 1:])]
    gap, before = max(gaps)
    assert gap > 4e-6
    rel = float(before) + gap / 2 - first
    cpus = sorted({e["cpu"] for e in ref})
    pcpu = next(e["cpu"] for e in ref if e["tid"] == producer)

    def sysname(e):  # every demo event is in system demo; printk's are printk:<format>
        return ("printk:" if e["name"] == "printk" else "demo:") + e["name"]

    def field(e, f):
        return e["fields"].get(f)

    cases = [
        (["--events", "demo:queue*"], lambda e: fnmatch.fnmatchcase(sysname(e), "demo:queue*")),
        (["--events", "demo,!demo:block*"],
         lambda e: e["name"] != "printk" and not e["name"].startswith("block")),
        (["--events", "printk"], lambda e: e["name"] == "printk"),
        (["--pid", str(pid)], lambda e: True),
        (["--pid", "1-%d,%d-4194304" % (pid - 1, pid + 1)], lambda e: False),
        (["--tid", "%d,%d-%d" % (tids[0], tids[-2], tids[-1])],
         lambda e: e["tid"] == tids[0] or tids[-2] <= e["tid"] <= tids[-1]),
        (["--comm", "worker-*"], lambda e: e["comm"].startswith("worker-")),
        (["--cpu", str(cpus[-1])], lambda e: e["cpu"] == cpus[-1]),
        (["--from", t_from], lambda e: e["ts"] >= t_from),
        (["--to", t_to], lambda e: e["ts"] <= t_to),
        (["--from", t_from, "--to", t_to], lambda e: t_from <= e["ts"] <= t_to),
        (["--from", "+%.6f" % rel], lambda e: float(e["ts"]) - first >= rel),
        (["--filter", "dur_ns > 1000000"], lambda e: (field(e, "dur_ns") or 0) > 1000000),
        (["--events", "demo:queue_depth", "--filter", "depth >= 3"],
         lambda e: e["name"] == "queue_depth" and field(e, "depth") >= 3),
        (["--filter", "common_pid == %d && dur_ns < 1000000" % producer],
         lambda e: e["tid"] == producer and field(e, "dur_ns") is not None
         and field(e, "dur_ns") < 1000000),
        # Events without a field the filter names do not pass it (the kernel cannot set it
        # on them; trace-cmd report -F leaves them out).
        (["--filter", 'comm ~ "work*" || seq == 3'],
         lambda e: field(e, "seq") is not None and (e["comm"].startswith("work")
                                                     or field(e, "seq") == 3)),
        (["--filter", "cpu == %d" % pcpu, "--comm", "producer"],
         lambda e: e["cpu"] == pcpu and e["comm"] == "producer"),
    ]
    failed = 0
    for args, pred in cases:
        got = subprocess.run([fxtrace, "report"] + args + [fxt], capture_output=True, text=True)
        want = sorted(key(e) for e in ref if pred(e))
        have = sorted(map(key, parse(got.stdout, False)))
        if got.returncode != 0 or have != want:
            failed += 1
            print("FAIL: report %s: exit %d, %d events, want %d (first differences: %s)" % (
                " ".join(args), got.returncode, len(have), len(want),
                sorted(set(have) ^ set(want))[:3]))
            print(got.stderr)
        else:
            print("ok: report %s: %d events" % (" ".join(args), len(have)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
