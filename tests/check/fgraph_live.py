#!/usr/bin/env python3
"""function_graph in the live `trace` and `trace_pipe` files (src/host/live_fgraph.c) against
the layout rebuilt here (fgraph_ref.py, the kernel's rules) from the JSON conversion of the
same session's file.

fn_live (tests/check/fn_live.c) records, under function_graph, call trees of two threads one
after the other, pinned to CPU 0, with events inside the calls and one outside, then reads
`trace` twice and `trace_pipe` until it is empty through the library's tracefs API. The clock
is CLOCK_MONOTONIC (FXTRACE_CLOCK), so the live view's times and the file's are the same
nanoseconds; but the file maps them through its clock syncs (each a pair of reads of the
clock, a few ns apart: a slope off 1 by about 1e-7) and the view does not, so a duration may
differ by a few ns (at most 2 ns + 1e-6 of it here), the rest of its line not. `trace` must be
the kernel's function_graph header and the reference's lines, the same text when read again;
`trace_pipe` the same lines without the header.

Then (fn_live --long) one outermost call holding more calls than the view holds for a thread:
`trace` must print the marker comment, and every call once, at its depth (as a multiset of
function and depth: the calls printed early come before their callers' lines), braces
balanced, nothing lost. And (fn_live --threads) more threads holding calls at once than the
view keeps: the same, the marker once at least.

Then (fn_live --split) the layout made as the files are read, across its edges: `trace`
opened while a thread is inside its outermost call and read after the call returned must be
the header and the trees that closed before it (main's first); the first of two trace_pipe
reads, made while a thread is inside its call, the trees before that thread's; every
trace_pipe read together, the reference without the first tree of "fn_clear", which was inside
that call at a read and when `trace` was emptied (what it held then is gone, and its call
started before: nothing of it prints, not even when the thread's next tree is printed), with
the last tree of main, arranged by a `trace` opened in the layout while a `trace` reader in the
plain layout was inside it (fn_live checks that this reader stops there).

And (fn_live --options) `trace` with each set of options/funcgraph-* below, trace_pipe with
the last, against the reference with the same options (the kernel's columns, fgraph_ref.py);
an absolute time may differ by 1 us (the file's clock mapping, as a duration's few ns).
`fxtrace report -O` of the session's file with each set (the kernel's trace_options words)
against the same reference, exactly (the file's times are the reference's): the live files'
text and report's for the same options and events are the one layout.

  fgraph_live.py FXTRACE FN_LIVE WORKDIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgraph_ref  # noqa: E402

fxtrace, prog, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


fxt, t1, t2, pipe, js = (os.path.join(work, n) for n in
                         ("live.fxt", "trace1", "trace2", "pipe", "live.json"))
env = dict(os.environ, FXTRACE_CLOCK="monotonic")
subprocess.run([prog, fxt, t1, t2, pipe], check=True, env=env)
subprocess.run([fxtrace, "convert", fxt, "-o", js], check=True, capture_output=True)


def mark(e):  # the program's own events: "mark: x=N" as an ad-hoc event's text
    return "%s: x=%d" % (e["name"], e["args"]["x"]) if e.get("cat") == "demo" else None


items, names, cpus = fgraph_ref.read_json(js, mark)
for tid, c in cpus.items():
    if c != {0}:
        fail("thread %d on CPUs %s though pinned to 0" % (tid, c))
if len(names) < 2 or sum(1 for i in items if i[1] == "e") != 5:
    fail("the recording lacks its threads or events: %d threads, %d events"
         % (len(names), sum(1 for i in items if i[1] == "e")))
# The CPU column's width: the highest possible CPU's digits, as the kernel's nr_cpu_ids.
possible = open("/sys/devices/system/cpu/possible").read().strip()
width = len(str(max(int(p.split("-")[-1]) for p in possible.split(","))))
want = fgraph_ref.layout(items, {tid: 0 for tid in cpus}, names, width)
if not any(w.startswith(" ------") for w in want) or not any("() {" in w for w in want):
    fail("the reference has no context switch or no nesting")

DUR = re.compile(r"^( *\d+\) )(.) (\d+(?:\.\d+)?) us +\|  (.*)$")


def same(g, w):
    """Lines equal but for a duration a few ns apart."""
    mg, mw = DUR.match(g), DUR.match(w)
    if g == w or not mg or not mw or mg.group(1, 2, 4) != mw.group(1, 2, 4):
        return g == w
    a, b = float(mg.group(3)) * 1000, float(mw.group(3)) * 1000
    return abs(a - b) <= 2 + 1e-6 * b + (10 if "." not in mw.group(3) else 0)


def near(got, want):
    """got's lines with those that are the reference's but for a duration made the reference's."""
    lines = got.split("\n")
    return "\n".join(w if i < len(want) and same(g, want[i]) else g
                     for i, (g, w) in enumerate(zip(lines, want + [None] * len(lines))))


read = [open(p).read() for p in (t1, t2, pipe)]
fgraph_ref.compare(near(read[0], fgraph_ref.HEADER + want), fgraph_ref.HEADER + want, "trace",
                   fail)
if read[1] != read[0]:
    fail("trace read twice differs")
fgraph_ref.compare(near(read[2], want), want, "trace_pipe", fail)

# ---- past the bound ------------------------------------------------------------------------
fxt, t1, js = (os.path.join(work, n) for n in ("long.fxt", "long_trace", "long.json"))
subprocess.run([prog, "--long", fxt, t1], check=True, env=env)
subprocess.run([fxtrace, "convert", fxt, "-o", js], check=True, capture_output=True)
CALL = re.compile(r"^ *\d+\) .{14}\|  ( *)(\w+)\(\)( \{|;)$")


def calls(lines):
    return sorted((m.group(2), len(m.group(1)) // 2) for m in map(CALL.match, lines) if m)


MARK = "/* fxtrace: the calls below returned inside calls still open */"


def check_bound(what, t1, js):
    items, names, cpus = fgraph_ref.read_json(js, mark)
    got = open(t1).read().split("\n")[4:-1]
    ref = fgraph_ref.layout(items, {}, names, width)
    if not any(l.endswith(MARK) for l in got):
        fail("%s: no marker line" % what)
    if sum(1 for i in items if i[1] == "X") != len(calls(ref)) or calls(got) != calls(ref):
        fail("%s: the calls (function, depth) differ: %d printed, %d recorded"
             % (what, len(calls(got)), len(calls(ref))))
    if sum(l.endswith("{") for l in got) != sum(l.endswith("}") for l in got):
        fail("%s: braces not balanced" % what)
    if any("LOST" in l for l in got):
        fail("%s: events lost" % what)
    return len(got)


nlong = check_bound("long", t1, js)
fxt, t1, js = (os.path.join(work, n) for n in ("threads.fxt", "threads_trace", "threads.json"))
subprocess.run([prog, "--threads", fxt, t1], check=True, env=env)
subprocess.run([fxtrace, "convert", fxt, "-o", js], check=True, capture_output=True)
nthreads = check_bound("threads", t1, js)

# ---- the layout made as the files are read --------------------------------------------------
nmain = len(want)
fxt, t1, p1, pall, js = (os.path.join(work, n) for n in
                         ("split.fxt", "split_trace", "split_pipe1", "split_pipe", "split.json"))
subprocess.run([prog, "--split", fxt, t1, p1, pall], check=True, env=env)
subprocess.run([fxtrace, "convert", fxt, "-o", js], check=True, capture_output=True)
items, names, cpus = fgraph_ref.read_json(js, mark)
tid_of = {n: t for t, n in names.items()}
if any(n not in tid_of for n in ("fn_open", "fn_split", "fn_clear")):
    fail("split: threads missing from the recording: %s" % sorted(names.values()))


def first(name):
    return min(i[0] for i in items if i[2] == tid_of[name])


def ref(keep):
    return fgraph_ref.layout([i for i in items if keep(i)], {t: 0 for t in cpus}, names, width)


want = ref(lambda i: i[0] < first("fn_open"))
fgraph_ref.compare(near(open(t1).read(), fgraph_ref.HEADER + want), fgraph_ref.HEADER + want,
                   "split: trace opened inside a call", fail)
want = ref(lambda i: i[0] < first("fn_split"))
fgraph_ref.compare(near(open(p1).read(), want), want, "split: trace_pipe inside a call", fail)
again = sorted(i[0] for i in items if i[2] == tid_of["fn_clear"] and i[3] == "fn_live_outer")
if len(again) != 2:
    fail("split: fn_clear made %d trees, not 2" % len(again))
want = ref(lambda i: i[2] != tid_of["fn_clear"] or i[0] >= again[1])
if sum(w.endswith("fn_live_outer() {") for w in want) != 6:
    fail("split: the reference has not the 6 trees printed: %s" % want)
fgraph_ref.compare(near(open(pall).read(), want), want, "split: trace_pipe's reads", fail)
nsplit = len(want)

# ---- options/funcgraph-* ---------------------------------------------------------------------
SETS = ["abstime=1", "cpu=0", "duration=0", "overhead=0", "proc=1", "tail=1",
        "abstime=1,proc=1,tail=1,overhead=0", "cpu=0,duration=0,proc=1"]
fxt, out, js = (os.path.join(work, n) for n in ("opts.fxt", "opts", "opts.json"))
subprocess.run([prog, "--options", fxt, out] + SETS, check=True, env=env)
subprocess.run([fxtrace, "convert", fxt, "-o", js], check=True, capture_output=True)
items, names, cpus = fgraph_ref.read_json(js, mark)
ABS = re.compile(r"^ *(\d+)\.(\d{6}) \|  ")
DURF = re.compile(r"(.) (\d+(?:\.\d+)?) us +\|  ")


def same_opts(g, w):
    """g is w but for an absolute time 1 us apart and a duration a few ns apart."""
    ag, aw = ABS.match(g), ABS.match(w)
    if ag and aw and abs(int(ag.group(1) + ag.group(2)) - int(aw.group(1) + aw.group(2))) <= 1:
        g = aw.group(0) + g[ag.end():]
    dg, dw = DURF.search(g), DURF.search(w)
    if dg and dw and dg.start() == dw.start():
        a, b = float(dg.group(2)) * 1000, float(dw.group(2)) * 1000
        if dg.group(1) == dw.group(1) and \
                abs(a - b) <= 2 + 1e-6 * b + (10 if "." not in dw.group(2) else 0):
            g = g[:dg.start()] + dw.group(0) + g[dg.end():]
    return g == w


def near_opts(got, want):
    lines = got.split("\n")
    return "\n".join(w if i < len(want) and same_opts(g, want[i]) else g
                     for i, (g, w) in enumerate(zip(lines, want + [None] * len(lines))))


for k, st in enumerate(SETS + ["pipe"]):
    opts = {o: v == "1" for o, v in (x.split("=") for x in (SETS[-1] if st == "pipe" else st).split(","))}
    want = fgraph_ref.layout(items, {t: 0 for t in cpus}, names, width, opts)
    if st != "pipe":
        want = fgraph_ref.header(opts) + want
    got = open("%s.%s" % (out, "pipe" if st == "pipe" else k)).read()
    fgraph_ref.compare(near_opts(got, want), want, "options %s" % st, fail)
    if st != "pipe":  # report's CPU column: the width of the highest CPU in the file (0)
        w = ",".join(("" if on else "no") + "funcgraph-" + o for o, on in opts.items())
        rep = subprocess.run([fxtrace, "report", "-O", w, fxt], check=True, capture_output=True,
                             text=True).stdout
        want = fgraph_ref.header(opts) + fgraph_ref.layout(items, {t: 0 for t in cpus}, names,
                                                           1, opts)
        fgraph_ref.compare(rep, want, "report -O " + w, fail)
print("fgraph_live: ok (%d lines; past the bounds %d and %d; split %d; %d option sets)"
      % (nmain, nlong, nthreads, nsplit, len(SETS)))
