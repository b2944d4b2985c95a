#!/usr/bin/env python3
"""Alignment of a merged kernel + user trace (tdr_merge.sh), from `fxtrace report` lines.

    tdr_align.py REPORT.txt

The traced thread fires tdr:nap_begin, sleeps, fires tdr:nap_end. Physically, its kernel
sched_switch away to sleep (prev_pid = tid, state S) follows nap_begin, and its sched_wakeup
(pid = tid) and then its sched_switch back (next_pid = tid) precede nap_end; the resume is
the first switch back after the wakeup when the trace holds one, else the wakeup (on the
6.18 VM this was written on, trace-cmd record often holds no switch back from the idle task,
while the wakeup is always there). With the user clock
shifted by d against the kernel's:
    out_gap = switch_out - nap_begin = lat_out - d,  in_gap = nap_end - resume = lat_in + d,
latencies >= 0, so  -min(out_gap) <= d <= min(in_gap): the alignment error is bounded by the
smallest gaps. Fails (exit 1) unless every nap has both kernel moments, the median gaps are
under 1 ms, the bound on d lies within +-1 ms, and no gap is below -1 ms (events in the
wrong order by more than that).
"""
import re
import sys

LINE = re.compile(r"^\s*(?P<comm>.*)-(?P<tid>\d+)\s+\[(?P<cpu>\d+)\]\s+\S+\s+"
                  r"(?P<sec>\d+)\.(?P<usec>\d{6}): (?P<name>[^:]+): (?P<body>.*)$")


def main():
    begins, ends, outs, ins, wakes = {}, {}, [], [], []
    tid = None
    for raw in open(sys.argv[1], encoding="utf-8", errors="replace"):
        m = LINE.match(raw)
        if not m:
            continue
        t = int(m["sec"]) * 1000000 + int(m["usec"])  # microseconds (report's resolution)
        name, body = m["name"], m["body"]
        if name in ("nap_begin", "nap_end"):
            kv = dict(x.split("=", 1) for x in body.split())
            tid = int(kv["tid"])
            (begins if name == "nap_begin" else ends)[int(kv["i"])] = t
        elif name == "sched_switch":
            kv = dict(x.split("=", 1) for x in body.split() if "=" in x)
            state = int(kv.get("prev_state", 0))
            if state & 0xff == 1:  # S: an interruptible sleep, as nanosleep's (not preempted,
                                   # not D: a page fault at the thread's start sleeps in D)
                outs.append((t, int(kv.get("prev_pid", -1))))
            ins.append((t, int(kv.get("next_pid", -1))))
        elif name == "sched_wakeup":
            kv = dict(x.split("=", 1) for x in body.split() if "=" in x)
            wakes.append((t, int(kv.get("pid", -1))))
    if tid is None or not begins:
        print("FAIL: no tdr:nap events in the merged report")
        return 1
    outs = sorted(t for t, p in outs if p == tid)
    ins = sorted(t for t, p in ins if p == tid)
    wakes = sorted(t for t, p in wakes if p == tid)
    if not outs or not wakes:
        print(f"FAIL: thread {tid} never appears in sched_switch / sched_wakeup records")
        return 1
    out_gaps, in_gaps = [], []
    for i, b in sorted(begins.items()):
        e = ends.get(i)
        # the wakeup that ends the nap: the last one up to its end; the sleep it ends: the last
        # switch-out before that wakeup (not the first one after nap_begin - 1 ms: a thread
        # may also block just before nap_begin, e.g. on a lock, as it did under ASan)
        # (one up to the end when there is one: a later wakeup within the 1 ms slack is the
        # thread's next sleep's, as a loaded run showed, 313 us after nap_end)
        w = max((t for t in wakes if e is not None and b - 1000 <= t <= e), default=None)
        if w is None:
            w = max((t for t in wakes if e is not None and b - 1000 <= t <= e + 1000),
                    default=None)
        o = max((t for t in outs if w is not None and b - 1000 <= t <= w), default=None)
        # the resume: the first switch back after the wakeup, when the trace holds it
        s = min((t for t in ins if w is not None and w <= t <= e), default=w)
        if o is None or e is None or s is None:
            print(f"FAIL: nap {i}: no matching kernel record (out {o}, resume {s}, end {e})")
            return 1
        out_gaps.append(o - b)
        in_gaps.append(e - s)
    lo, hi = -min(out_gaps), min(in_gaps)
    med = lambda g: sorted(g)[len(g) // 2]
    print(f"naps {len(out_gaps)}; switch-out after nap_begin: min {min(out_gaps)} us, median "
          f"{med(out_gaps)} us; nap_end after the resume: min {min(in_gaps)} us, median "
          f"{med(in_gaps)} us; user-vs-kernel clock offset within [{lo}, {hi}] us")
    bad = [g for g in out_gaps + in_gaps if g < -1000]
    if bad or lo > 1000 or hi < -1000 or lo > hi + 2 or med(out_gaps) > 1000 or med(in_gaps) > 1000:
        print("FAIL: the timelines are not within a millisecond of each other")
        return 1
    print("ok: kernel and user timelines agree within a millisecond")
    return 0


if __name__ == "__main__":
    sys.exit(main())
