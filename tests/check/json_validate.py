#!/usr/bin/env python3
"""Checks `fxtrace convert --to json` output against the FXT file's `fxtrace stats`.

    json_validate.py OUT.json STATS.txt [--all-flows-bound]

- the output is valid JSON (strict: no NaN/Infinity literals) with displayTimeUnit "ns",
  traceEvents and otherData;
- every event has ph, and every non-metadata event cat, name, pid, tid and a numeric ts;
- time order: the metadata events first, then every event's ts at least the one before it
  (viewers such as DevTools read events in file order);
- events accounted for: per thread, the JSON events not of category kernel:meta equal the
  `events` column of stats (an "X" with "fxt_be" is a begin/end pair: two FXT events), their
  total equals stats' total, and otherData says the same (and "paired" the "fxt_be" count);
  the kernel:meta events are exactly the "fxtrace lost (tid T)" and "cpu (tid T)" counters;
  per thread, the last "fxtrace lost" value equals dropped + overrun + lost of stats, and the
  values never decrease;
- B/E (only where records were lost; closed pairs are "X"): per thread, in file order, every E
  closes the innermost open B of the same name at a time not before it, and nothing stays
  open;
- X: dur >= 0;
- async b/n/e: per (pid, cat, name, id2.local), as many b as e; in time order (b before n
  before e at equal times) an n or e never comes without an open b;
- flows s/t/f: each at the start of a slice (X or B) of its own thread, so that DevTools binds
  it: as many as otherData's flows_bound (--all-flows-bound: every one);
  per (pid, cat, name, id), one s and one f, f has bp "e", s.ts <= t.ts <= f.ts
  (flow ids are global in FXT and in JSON; the demo's are per-process sequence numbers whose
  flows stay inside the process, so two demos reuse them: this check keys them by pid);
- every pid with events has a process_name and every thread a thread_name.
Prints a one-line summary; exits 1 with a message on the first failure.
"""
import collections
import json
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
from stats_text import TOTAL, stats_rows  # noqa: E402


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def reject_constant(name):
    fail("non-standard JSON constant " + name)


def parse_stats(path):
    total_line, rows = stats_rows(path)
    if total_line is None:
        fail("no total line in " + path)
    threads = {}
    for f, _ in rows:
        ev, dropped, overrun, lost = (int(x) for x in f[-4:])
        threads[(int(f[0]), int(f[1]))] = (ev, dropped + overrun + lost)
    return threads, int(TOTAL.match(total_line).group(1))


def main():
    out, stats_path = sys.argv[1], sys.argv[2]
    all_bound = "--all-flows-bound" in sys.argv[3:]
    with open(out, encoding="utf-8") as fh:  # strict UTF-8: invalid bytes raise
        doc = json.load(fh, parse_constant=reject_constant)
    if doc.get("displayTimeUnit") != "ns":
        fail("displayTimeUnit is not ns")
    events, other = doc.get("traceEvents"), doc.get("otherData")
    if not isinstance(events, list) or not isinstance(other, dict):
        fail("no traceEvents list or otherData object")
    st_threads, st_total = parse_stats(stats_path)

    per_thread = collections.Counter()
    lost_last, cpu_n, lost_n = {}, 0, 0
    names, procs = set(), set()
    stacks = collections.defaultdict(list)
    asyncs = collections.defaultdict(list)
    flows = collections.defaultdict(list)
    counts = collections.Counter()
    last_ts, paired = None, 0
    slice_starts = collections.defaultdict(set)
    flow_events = []
    for i, e in enumerate(events):
        ph = e.get("ph")
        counts[ph] += 1
        if ph == "M":
            if last_ts is not None:
                fail("metadata event %d after the first timed event" % i)
            if e.get("name") == "thread_name":
                names.add((e["pid"], e["tid"]))
            elif e.get("name") == "process_name":
                procs.add(e["pid"])
            continue
        for k in ("cat", "name", "pid", "tid", "ts"):
            if k not in e:
                fail("event %d has no %s: %r" % (i, k, e))
        ts = e["ts"]
        if not isinstance(ts, (int, float)) or isinstance(ts, bool) or ts < 0:
            fail("event %d: bad ts %r" % (i, ts))
        if last_ts is not None and ts < last_ts:
            fail("event %d goes back in time: ts %r after %r" % (i, ts, last_ts))
        last_ts = ts
        th = (e["pid"], e["tid"])
        if e["cat"] == "kernel:meta":
            if ph != "C":
                fail("kernel:meta event %d is not a counter" % i)
            if e["name"] == "fxtrace lost (tid %d)" % e["tid"]:
                v = e["args"]["records"]
                if v < lost_last.get(th, 0):
                    fail("lost counter of %r went down" % (th,))
                lost_last[th] = v
                lost_n += 1
            elif e["name"] == "cpu (tid %d)" % e["tid"]:
                cpu_n += 1
            else:
                fail("unexpected kernel:meta event %r" % e)
            continue
        per_thread[th] += 1
        if ph in "XB":
            slice_starts[th].add(ts)
        if ph == "B":
            stacks[th].append((e["name"], ts))
        elif ph == "E":
            if not stacks[th]:
                fail("E without B on %r: %r" % (th, e))
            name, start = stacks[th].pop()
            if name != e["name"] or ts < start:
                fail("E %r closes B %r at %r on %r" % (e["name"], name, start, th))
        elif ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                fail("X with bad dur: %r" % e)
            if e.get("fxt_be") == 1:  # a begin/end pair: two FXT events
                per_thread[th] += 1
                paired += 1
        elif ph in "bne":
            key = (e["pid"], e["cat"], e["name"], e["id2"]["local"])
            asyncs[key].append((ts, "bne".index(ph)))
        elif ph in "stf":
            if ph == "f" and e.get("bp") != "e":
                fail("flow end without bp e: %r" % e)
            flows[(e["pid"], e["cat"], e["name"], e["id"])].append((ph, ts))
            flow_events.append((th, ts))
        elif ph not in "iC":
            fail("unexpected phase %r" % ph)

    for th, stack in stacks.items():
        if stack:
            fail("B without E on %r: %r" % (th, stack[-1]))
    for key, evs in asyncs.items():
        depth = 0
        for _, kind in sorted(evs):
            depth += 1 if kind == 0 else (-1 if kind == 2 else 0)
            if depth < 0 or (kind == 1 and depth == 0):
                fail("async %r: n or e without an open b" % (key,))
        if depth != 0:
            fail("async %r: %d b without e" % (key, depth))
    for key, evs in flows.items():
        phs = "".join(p for p, _ in evs)
        if phs.count("s") != 1 or phs.count("f") != 1:
            fail("flow %r has phases %r" % (key, phs))
        s = next(t for p, t in evs if p == "s")
        f = next(t for p, t in evs if p == "f")
        if not all(s <= t <= f for _, t in evs):
            fail("flow %r out of order: %r" % (key, evs))

    bound = sum(1 for th, ts in flow_events if ts in slice_starts[th])
    if bound != other.get("flows_bound"):
        fail("%d flows at a slice start, otherData flows_bound = %r" % (bound,
                                                                       other.get("flows_bound")))
    if all_bound and bound != len(flow_events):
        fail("%d of %d flows at the start of a slice of their thread" % (bound, len(flow_events)))
    total = sum(per_thread.values())
    if total != st_total:
        fail("%d events in the JSON, stats says %d" % (total, st_total))
    for th, (n, lost) in st_threads.items():
        if per_thread.get(th, 0) != n:
            fail("thread %r: %d events in the JSON, stats says %d" % (th, per_thread[th], n))
        if lost_last.get(th, 0) != lost:
            fail("thread %r: lost counter %r, stats says %d" % (th, lost_last.get(th), lost))
    for th in per_thread:
        if th not in st_threads:
            fail("thread %r is not in stats" % (th,))
        if th not in names:
            fail("thread %r has no thread_name" % (th,))
        if th[0] not in procs:
            fail("process %r has no process_name" % th[0])
    want = {"events": total, "lost_counters": lost_n, "cpu_counters": cpu_n,
            "metadata": counts["M"], "paired": paired}
    for k, v in want.items():
        if other.get(k) != v:
            fail("otherData %s = %r, counted %d" % (k, other.get(k), v))
    print("ok: %d events (%s; %d begin/end pairs as X), time order, %d lost counters, "
          "%d cpu counters, %d names, %d flows (%d of %d flow events at their slice's start), "
          "%d async ids" % (total, " ".join("%s=%d" % kv for kv in sorted(counts.items())),
                            paired, lost_n, cpu_n, counts["M"], len(flows), bound,
                            len(flow_events), len(asyncs)))


main()
