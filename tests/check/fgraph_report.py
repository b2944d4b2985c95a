#!/usr/bin/env python3
"""`fxtrace report`'s function_graph layout (src/formats/fgraph.h) against a reference built
here from the calls read independently, out of the JSON conversion of the same file.

fn_prog (tests/check/fn_prog.c, -finstrument-functions) is recorded twice under
function_graph and once under function, each pinned to CPU 0 (taskset) so the CPU of every
line is known from the JSON's "cpu" counters; the three files are merged, so the report has
two threads' call trees on one CPU (the kernel's context-switch block between them) and a
function tracer's calls (comment lines). The reference follows the kernel's rules
(kernel/trace/trace_functions_graph.c) written out below, not the C code: nesting by
containment per thread, leaf "f();" with its duration, "f() {" ... "}" with the duration at
the close, the duration column (truncated nanoseconds, at most 7 digits, marks at the
kernel's thresholds, strictly greater), " ------" blocks when a CPU's lines change thread
(comm cut to 7, "comm-pid" centred in 14), other events as "/* text */" indented as the
kernel's per-CPU depth says.

The header's first two lines are compared with the live kernel's `trace` file (its first two
lines, the tracer's name replaced) when tracefs can be mounted; the column lines with the
kernel's function_graph `trace` when this kernel has the tracer, else with the strings of
__print_graph_headers_flags (default flags: cpu, duration), quoted here from the kernel
source since this kernel lacks CONFIG_FUNCTION_GRAPH_TRACER.

  fgraph_report.py FXTRACE FN_PROG WORKDIR
"""
import json
import os
import shutil
import subprocess
import sys

fxtrace, prog, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)


def run(*args, **kw):
    return subprocess.run(list(args), check=True, capture_output=True, text=True, **kw).stdout


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
parts = []
for i, (tracer, n) in enumerate([("function_graph", "6"), ("function", "3"),
                                 ("function_graph", "5")]):
    out = os.path.join(work, "part%d.fxt" % i)
    run(fxtrace, "record", "-p", tracer, "-o", out, "--", *pin, prog, n)
    parts.append(out)
merged = os.path.join(work, "fg.fxt")
run(fxtrace, "merge", "-o", merged, *parts)
js = os.path.join(work, "fg.json")
run(fxtrace, "convert", merged, "-o", js)
got = run(fxtrace, "report", merged)

# ---- the calls, read from the JSON ------------------------------------------------------------
ev = json.load(open(js))["traceEvents"]
names = {}
cpus = {}
items = []  # (start ns, kind, tid, name, dur ns / parent)
for e in ev:
    if e["ph"] == "M" and e["name"] == "thread_name":
        names[e["tid"]] = e["args"]["name"]
    elif e["ph"] == "C" and e["name"].startswith("cpu (tid"):
        cpus.setdefault(e["tid"], set()).add(e["args"]["cpu"])
    elif e["ph"] == "X" and e.get("cat") == "function":
        items.append((round(e["ts"] * 1000), "X", e["tid"], e["name"], round(e["dur"] * 1000)))
    elif e["ph"] in ("i", "I") and e.get("cat") == "function":
        items.append((round(e["ts"] * 1000), "i", e["tid"], e["name"], e["args"]["parent"]))
if pin:
    for tid, c in cpus.items():
        if len(c) != 1:
            fail("thread %d on CPUs %s though pinned" % (tid, c))
cpu_of = {tid: next(iter(c)) for tid, c in cpus.items()}
if sum(1 for i in items if i[1] == "X") < 20 or not any(i[1] == "i" for i in items):
    fail("the recordings lack calls")

def duration(ns):
    marks = [(1000000000, "$"), (100000000, "@"), (10000000, "*"), (1000000, "#"),
             (100000, "!"), (10000, "+")]
    mark = next((m for t, m in marks if ns > t), " ")
    us = str(ns // 1000)
    s = us
    if len(us) < 7:
        s += "." + ("%03d" % (ns % 1000))[:7 - len(us)]
    return mark + " " + s + " us " + " " * max(0, 8 - len(s)) + "|  "


width = len(str(max(cpu_of.values(), default=0)))


def cpu_col(c):
    return " %*d) " % (width, c)


def proc(tid):
    s = "%s-%d" % (names.get(tid, "<...>")[:7], tid)
    sp = max(0, 14 - len(s))
    return " " * (sp // 2) + s + " " * (sp - sp // 2)



def layout(items):
    """The kernel's function_graph lines of items (sorted here)."""
    # Nesting per thread: slices by start, the longer first; a slice inside the innermost open one
    # that it starts before the end of.
    items.sort(key=lambda i: (i[0], -i[4] if i[1] == "X" else 0))
    has_child = set()
    depth_of = {}
    stacks = {}
    for k, it in enumerate(items):
        if it[1] != "X":
            continue
        st = stacks.setdefault(it[2], [])
        while st and items[st[-1]][0] + items[st[-1]][4] <= it[0]:
            st.pop()
        if st:
            has_child.add(st[-1])
        depth_of[k] = len(st)
        st.append(k)


    # Lines: each item at its start; each parent's close at its end (before an item that starts
    # then), deeper closes first.
    seq = []
    for k, it in enumerate(items):
        seq.append((it[0], 1, 0, k, "open"))
        if k in has_child:
            seq.append((it[0] + it[4], 0, -depth_of[k], k, "close"))
    seq.sort()
    last = {}
    open_n = {}
    want = ["# tracer: function_graph", "#", "# CPU  DURATION                  FUNCTION CALLS",
            "# |     |   |                     |   |   |   |"]
    for _, _, _, k, what in seq:
        start, kind, tid, name, x = items[k]
        c = cpu_of.get(tid, 0)
        if last.get(c, tid) != tid:
            want += [" ------------------------------------------",
                     cpu_col(c) + proc(last[c]) + " => " + proc(tid), " ------------------------------------------", ""]
        last[c] = tid
        if what == "close":
            open_n[tid] -= 1
            want.append(cpu_col(c) + duration(x) + "  " * depth_of[k] + "}")
        elif kind == "i":
            d = open_n.get(tid, 0) - 1
            want.append(cpu_col(c) + "              |  " + ("  " * (d + 1) if d > 0 else "") +
                        "/* %s <-%s */" % (name, x))
        elif k in has_child:
            want.append(cpu_col(c) + "              |  " + "  " * depth_of[k] + name + "() {")
            open_n[tid] = open_n.get(tid, 0) + 1
        else:
            want.append(cpu_col(c) + duration(x) + "  " * depth_of[k] + name + "();")

    return want


def compare(got, want, what):
    lines = got.split("\n")
    if lines[-1] == "":
        lines.pop()
    for i, (g, w) in enumerate(zip(lines, want)):
        if g != w:
            fail("%s, line %d:\n  got  %r\n  want %r" % (what, i + 1, g, w))
    if len(lines) != len(want):
        fail("%s: %d lines, want %d" % (what, len(lines), len(want)))
    return lines


lines = compare(got, layout(items), "report")
if pin and not any(l.startswith(" ------") for l in lines):
    fail("no context-switch block though both threads ran on CPU 0")
# With a selection: what it leaves out is not there (main holds fn_run directly; the function
# tracer's calls of those names stay, as comments).
sel = run(fxtrace, "report", "--events", "function:main,function:fn_run", merged)
compare(sel, layout([i for i in items if i[3] in ("main", "fn_run")]), "report --events")

# ---- the header against the kernel's ---------------------------------------------------------
tr = "/sys/kernel/tracing"
if not os.path.exists(tr + "/trace") and os.geteuid() == 0:
    subprocess.run(["mount", "-t", "tracefs", "nodev", tr], capture_output=True)
if os.path.exists(tr + "/trace"):
    tracer = open(tr + "/current_tracer").read().strip()
    head = open(tr + "/trace").read().split("\n")[:2]
    mine = [head[0].replace("# tracer: " + tracer, "# tracer: function_graph"), head[1]]
    if lines[:2] != mine:
        fail("header %r, the kernel's %r" % (lines[:2], mine))
    if "function_graph" in open(tr + "/available_tracers").read().split():
        print("note: this kernel has function_graph; its column lines are compared")
        open(tr + "/current_tracer", "w").write("function_graph")
        try:
            kh = [l for l in open(tr + "/trace").read().split("\n")[:6] if l.startswith("# ")]
        finally:
            open(tr + "/current_tracer", "w").write("nop")
        if lines[2:4] != kh[1:3]:
            fail("column lines %r, the kernel's %r" % (lines[2:4], kh[1:3]))
else:
    print("note: no tracefs here; the header's first lines are not compared")
print("fgraph_report: ok (%d lines)" % len(lines))
