#!/usr/bin/env python3
"""Checks what Chromium's DevTools Performance panel built from `fxtrace convert`'s JSON
(MODEL.json, written by tests/browser/devtools_load.mjs) against what the FXT file holds,
read through `fxtrace stats` and `fxtrace report` of that file (not through the JSON).

    devtools_compare.py MODEL.json STATS.txt REPORT.txt

The panel shows, of a generic (non-Chrome) trace, each thread's slices ("X", "B"/"E") and
the flows bound to them; instants, counters and async events are not in its model (their
number in the report is printed, not checked). What is checked, exactly:

- threads: the panel's threads (pid, tid, name) are the threads of stats that have slices in
  the report (pid, tid, comm); the flame chart has one group per pid and in it one track per
  thread, "comm (tid)";
- slices, per thread, as a multiset: every complete duration of the report ("name: dur=Nus")
  is one slice of that name starting at the report's microsecond (report rounds the
  nanosecond to the nearest microsecond, half up) lasting exactly the report's duration to
  the nanosecond (JSON holds microseconds with 3 decimals); every begin/end pair of the
  report ("name: B", "name: E", paired innermost first per thread) is one slice starting and
  ending at the report's microseconds; no other slice;
- flows: one per flow id of the report (flow_begin ... flow_end), as many slices bound as the
  flow has events, each on the thread of its event and enclosing the event's time (within
  the report's rounding); no slice of that thread certainly nested in the bound one also
  encloses it (a flow binds to the innermost slice); flows and report ids matched one to one.

The recording must have lost nothing (else the pairs of the report are not the whole truth),
so every slice of the panel must be an "X": the converter writes "B"/"E" only for a begin or
an end whose other half was lost. Typed tracepoints print their own format in the report:
this reads the demo's, none of which starts like an ad-hoc duration ("B", "E", "dur="), and
devtools_events' (it has none).
Prints the numbers compared; exits 1 with the first differences on failure.
"""
import bisect
import collections
import json
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
from report_text import LINE  # noqa: E402
from stats_text import stats_rows  # noqa: E402

LOST = re.compile(r"^CPU:\d+ \[LOST")
DUR = re.compile(r"^dur=(\d+)\.(\d{3})us(?: |$)")
FLOW = re.compile(r"^flow_(begin|step|end) id=(0x[0-9a-f]+)(?: |$)")
ASYNC = re.compile(r"^async_(begin|instant|end) id=")
COUNTER = re.compile(r"^id=\d+(?: |$)")


def fail(msgs):
    for m in msgs[:20]:
        print("FAIL: " + m)
    if len(msgs) > 20:
        print("FAIL: ... and %d more" % (len(msgs) - 20))
    sys.exit(1)


def parse_stats(path):
    total_line, rows = stats_rows(path)
    m = total_line and re.match(
        r"total: (\d+) events, .*; (\d+) dropped, (\d+) overrun, (\d+) lost", total_line)
    if not m:
        fail(["no total line in " + path])
    if any(int(g) for g in m.groups()[1:]):
        fail(["the recording lost records: " + total_line.strip()])
    threads = {}
    for f, line in rows:
        comm = line.split(None, 2)[2].rsplit(None, 4)[0]
        threads[int(f[1])] = (int(f[0]), comm)
    return threads, int(m.group(1))


def parse_report(path):
    """Per tid: complete slices (name, start_us, dur_ns) and pairs (name, start_us, end_us);
    flows: id -> [(tid, us)] in order; counts of what the panel does not show."""
    complete = collections.defaultdict(list)
    pairs = collections.defaultdict(list)
    stacks = collections.defaultdict(list)
    flows = collections.defaultdict(list)
    other = collections.Counter()
    events = 0
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if LOST.match(line):
            fail(["the report shows lost records: " + line])
        m = LINE.match(line)
        if not m:
            fail(["unexpected report line: " + line])
        _, pid, _, ts, rest = m.groups()
        sec, usec = ts.split(".")
        tid, us = int(pid), int(sec) * 1000000 + int(usec)
        name, sep, body = rest.partition(": ")
        if not sep:
            name, body = rest.rstrip(":"), ""
        events += 1
        d = DUR.match(body)
        f = FLOW.match(body)
        if d:
            complete[tid].append((name, us, int(d.group(1)) * 1000 + int(d.group(2))))
        elif body == "B" or body.startswith("B "):
            stacks[tid].append((name, us))
        elif body == "E" or body.startswith("E "):
            if not stacks[tid] or stacks[tid][-1][0] != name:
                fail(["report: %r ends on tid %d with %r open" % (name, tid, stacks[tid][-1:])])
            bname, bus = stacks[tid].pop()
            pairs[tid].append((name, bus, us))
        elif f:
            flows[f.group(2)].append((f.group(1), tid, us))
        elif ASYNC.match(body):
            other["async"] += 1
        elif COUNTER.match(body):
            other["counters"] += 1
        else:
            other["instants"] += 1
    open_left = {t: s for t, s in stacks.items() if s}
    if open_left:
        fail(["report: begins without an end: %r" % open_left])
    return complete, pairs, flows, other, events


def us_of(ns):
    """The report's microsecond of a nanosecond time: rounded half up."""
    return (ns + 500) // 1000


def ns_of(us_float):
    """A JSON time or duration (microseconds, 3 decimals) in nanoseconds."""
    return int(round(us_float * 1000))


def untreed_why(model):
    """Each slice the panel left out of its thread's tree, with the slices of that thread that
    contain or end at its start (in ns): the panel drops a slice that ends after the one it
    starts in, and `ts + dur` added as doubles can put a slice's end past the next's start."""
    out = []
    spans = {t["tid"]: [(ns_of(ts), ns_of(ts) + ns_of(d or 0), n)
                        for n, ts, d, _, _ in t["slices"]] for t in model["threads"]}
    for tid, name, ts, dur in model.get("untreed", []):
        s, e = ns_of(ts), ns_of(ts) + ns_of(dur or 0)
        around = sorted(sp for sp in spans.get(tid, [])
                        if sp[0] <= s <= sp[1] and sp != (s, e, name))
        out.append("tid %d: %r [%d, %d] ns not drawn; slices around its start: %r"
                   % (tid, name, s, e, around))
    return out


def multiset_diff(want, got):
    w, g = collections.Counter(want), collections.Counter(got)
    return sorted((w - g).elements())[:5], sorted((g - w).elements())[:5]


def match_flows(model_flows, report_flows, slices_by_tid):
    """Kuhn's augmenting paths: model flow i <-> report flow id, when compatible."""
    def encloses(sl, tid, us):
        # the event's nanosecond lies in [us*1000-500, us*1000+499] (report rounding)
        s, e = sl
        return s <= us * 1000 + 499 and e >= us * 1000 - 500

    def innermost_ok(tid, sl, us):
        # a slice of tid starting after sl's start and ending before its end, that encloses
        # the event for every nanosecond the report's microsecond stands for
        lo, hi = us * 1000 - 500, us * 1000 + 499
        starts, ends = slices_by_tid[tid]
        i = bisect.bisect_right(starts, sl[0])
        while i < len(starts) and starts[i] <= lo:
            if ends[i] <= sl[1] and ends[i] >= hi and (starts[i], ends[i]) != sl:
                return False
            i += 1
        return True

    ids = list(report_flows)
    by_key = collections.defaultdict(list)  # (first tid, length) -> report ids
    for fid in ids:
        ev = report_flows[fid]
        by_key[(ev[0][1], len(ev))].append(fid)
    problems = []
    cand = []
    for i, mf in enumerate(model_flows):
        c = []
        for fid in by_key.get((mf[0][0], len(mf)), []):
            ev = report_flows[fid]
            if all(tid == mtid and encloses(sl, tid, us)
                   for (_, tid, us), (mtid, sl) in zip(ev, mf)):
                c.append(fid)
        if not c:
            problems.append("flow %d of the panel (%r) matches no flow of the report" % (i, mf))
        cand.append(c)
    if problems:
        return problems
    owner = {}

    def augment(i, seen):
        for fid in cand[i]:
            if fid in seen:
                continue
            seen.add(fid)
            if fid not in owner or augment(owner[fid], seen):
                owner[fid] = i
                return True
        return False

    sys.setrecursionlimit(max(10000, 4 * len(model_flows)))
    for i in range(len(model_flows)):
        if not augment(i, set()):
            problems.append("flow %d of the panel (%r) has no report flow of its own"
                            % (i, model_flows[i]))
    unmatched = [fid for fid in ids if fid not in owner]
    if unmatched:
        problems.append("report flows not in the panel: %r" % unmatched[:5])
    for fid, i in owner.items():
        for (_, tid, us), (mtid, sl) in zip(report_flows[fid], model_flows[i]):
            if not innermost_ok(tid, sl, us):
                problems.append("flow %s at %d us on tid %d is bound to slice %r, not the "
                                "innermost one" % (fid, us, tid, sl))
    return problems


def main():
    model = json.load(open(sys.argv[1], encoding="utf-8"))
    st_threads, st_total = parse_stats(sys.argv[2])
    complete, pairs, rflows, other, events = parse_report(sys.argv[3])
    if events != st_total:
        fail(["report has %d events, stats says %d" % (events, st_total)])
    problems = []

    # Threads: those with slices, named as in stats, each with a track.
    want_threads = {(st_threads[t][0], t, st_threads[t][1])
                    for t in set(complete) | set(pairs)}
    got_threads = {(t["pid"], t["tid"], t["name"]) for t in model["threads"]}
    if want_threads != got_threads:
        problems.append("threads: report/stats %r, panel %r" %
                        (sorted(want_threads - got_threads), sorted(got_threads - want_threads)))
    # Tracks: a group per process ("name (pid)"), its threads' tracks one level down.
    want_tracks = sorted(["%s (%d)" % (comm, tid) for _, tid, comm in want_threads])
    got_tracks = sorted(name for name, level in model["tracks"] if level == 1)
    if want_tracks != got_tracks:
        problems.append("thread tracks: want %r, the flame chart has %r" %
                        (want_tracks, model["tracks"]))
    want_procs = sorted({str(pid) for pid, _, _ in want_threads})
    got_procs = sorted(m.group(1) if m else name for m, name in (
        (re.search(r"\((\d+)\)$", name), name) for name, level in model["tracks"] if level == 0))
    if want_procs != got_procs:
        problems.append("process groups: want pids %r, the flame chart has %r" %
                        (want_procs, model["tracks"]))

    # Slices, per thread.
    n_complete = n_pairs = 0
    slices_by_tid = {}
    for t in model["threads"]:
        tid = t["tid"]
        got_c, got_p, spans = [], [], []
        for name, ts, dur, be, ph in t["slices"]:
            if ph != "X" or dur is None:
                problems.append("tid %d: slice %r is %r, not a complete event" % (tid, name, ph))
                continue
            s, d = ns_of(ts), ns_of(dur)
            spans.append((s, s + d))
            if be:
                got_p.append((name, us_of(s), us_of(s + d)))
            else:
                got_c.append((name, us_of(s), d))
        spans.sort()
        slices_by_tid[tid] = ([s for s, _ in spans], [e for _, e in spans])
        for kind, want, got in (("durations", complete.get(tid, []), got_c),
                                ("begin/end pairs", pairs.get(tid, []), got_p)):
            missing, extra = multiset_diff(want, got)
            if missing or extra:
                problems.append("tid %d %s: %d in the report, %d in the panel; report only %r; "
                                "panel only %r" % (tid, kind, len(want), len(got), missing, extra))
        n_complete += len(got_c)
        n_pairs += len(got_p)
    if model["entries"] != n_complete + n_pairs:
        problems.append("the flame chart has %d entries for %d slices"
                        % (model["entries"], n_complete + n_pairs))
        problems += untreed_why(model)

    # Flows.
    for fid, ev in rflows.items():
        if ev[0][0] != "begin" or ev[-1][0] != "end" or any(p != "step" for p, _, _ in ev[1:-1]):
            problems.append("report flow %s is not begin, steps, end: %r" % (fid, ev))
    model_flows = [[(tid, (ns_of(ts), None)) for _, tid, _, ts in f] for f in model["flows"]]
    # the bound slice's end: the slice of that thread starting there with that name
    ends = {}
    for t in model["threads"]:
        for name, ts, dur, _, _ in t["slices"]:
            ends.setdefault((t["tid"], name, ns_of(ts)), []).append(ns_of(ts) + ns_of(dur))
    for f, mf in zip(model["flows"], model_flows):
        for k, (_, tid, name, ts) in enumerate(f):
            e = ends.get((tid, name, ns_of(ts)))
            if not e or len(set(e)) != 1:
                problems.append("flow slice %r not one slice of its thread" % (f[k],))
                continue
            mf[k] = (tid, (ns_of(ts), e[0]))
    if not problems:
        problems += match_flows(model_flows, rflows, slices_by_tid)
    if problems:
        fail(problems)
    n_flow_events = sum(len(ev) for ev in rflows.values())
    print("devtools_compare: %d threads, %d slices (%d durations, %d begin/end pairs), "
          "%d flows (%d flow events) as in the report; not in the panel's model: %d instants, "
          "%d counters, %d async events"
          % (len(got_threads), n_complete + n_pairs, n_complete, n_pairs, len(rflows),
             n_flow_events, other["instants"], other["counters"], other["async"]))


if __name__ == "__main__":
    main()
