#!/usr/bin/env python3
"""`fxtrace report`'s function_graph layout (src/formats/fgraph.h) against a reference built
here from the calls read independently, out of the JSON conversion of the same file.

fn_prog (tests/check/fn_prog.c, -finstrument-functions) is recorded twice under
function_graph and once under function, each pinned to CPU 0 (taskset) so the CPU of every
line is known from the JSON's "cpu" counters; the three files are merged, so the report has
two threads' call trees on one CPU (the kernel's context-switch block between them) and a
function tracer's calls (comment lines). The reference follows the kernel's rules
(kernel/trace/trace_functions_graph.c), written out in fgraph_ref.py, not the C code.

With -O, the kernel's options of the layout (its options/funcgraph-* names, written as its
trace_options file takes them: funcgraph-X on, nofuncgraph-X off), each alone and in
combinations, against the reference laid out with the same options (fgraph_ref.layout, the
kernel's columns; fgraph_live.py holds the live `trace` file to the same reference with the
same sets); -O repeated, joined to its value, the last word of an option winning, with a
selection; an unknown name a usage error (exit 2) naming it and every option.

The header's first two lines are compared with the live kernel's `trace` file (its first two
lines, the tracer's name replaced) when tracefs can be mounted; the column lines with the
kernel's function_graph `trace` when this kernel has the tracer, else with the strings of
__print_graph_headers_flags (default flags: cpu, duration), quoted here from the kernel
source since this kernel lacks CONFIG_FUNCTION_GRAPH_TRACER.

  fgraph_report.py FXTRACE FN_PROG WORKDIR
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgraph_ref  # noqa: E402

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
items, names, cpus = fgraph_ref.read_json(js)
if pin:
    for tid, c in cpus.items():
        if len(c) != 1:
            fail("thread %d on CPUs %s though pinned" % (tid, c))
cpu_of = {tid: next(iter(c)) for tid, c in cpus.items()}
if sum(1 for i in items if i[1] == "X") < 20 or not any(i[1] == "i" for i in items):
    fail("the recordings lack calls")
width = len(str(max(cpu_of.values(), default=0)))


def layout(items):
    return fgraph_ref.HEADER + fgraph_ref.layout(items, cpu_of, names, width)


def compare(got, want, what):
    return fgraph_ref.compare(got, want, what, fail)


lines = compare(got, layout(items), "report")
if pin and not any(l.startswith(" ------") for l in lines):
    fail("no context-switch block though both threads ran on CPU 0")
# With a selection: what it leaves out is not there (main holds fn_run directly; the function
# tracer's calls of those names stay, as comments).
sel = run(fxtrace, "report", "--events", "function:main,function:fn_run", merged)
compare(sel, layout([i for i in items if i[3] in ("main", "fn_run")]), "report --events")

# ---- -O: options/funcgraph-* --------------------------------------------------------------------
# Each option away from the kernel's default alone, then combinations (fgraph_live.py's sets).
SETS = [{"abstime": True}, {"cpu": False}, {"duration": False}, {"overhead": False},
        {"proc": True}, {"tail": True},
        {"abstime": True, "proc": True, "tail": True, "overhead": False},
        {"cpu": False, "duration": False, "proc": True}]


def words(opts):
    return ["%sfuncgraph-%s" % ("" if on else "no", k) for k, on in sorted(opts.items())]


def layout_opts(items, opts):
    return fgraph_ref.header(opts) + fgraph_ref.layout(items, cpu_of, names, width, opts)


for opts in SETS:
    w = ",".join(words(opts))
    compare(run(fxtrace, "report", "-O", w, merged), layout_opts(items, opts), "report -O " + w)
# Repeated and joined (-OX), each word alone; the last word of an option wins; the defaults
# named; with a selection.
opts = SETS[6]
args = ["-O" + x for x in words(opts)] + ["-O", "nofuncgraph-abstime,funcgraph-abstime"]
compare(run(fxtrace, "report", *args, merged), layout_opts(items, opts), "report " + str(args))
args = ["-O", "funcgraph-tail,nofuncgraph-proc", "-O", "funcgraph-cpu,nofuncgraph-tail"]
compare(run(fxtrace, "report", *args, merged), layout(items), "report " + str(args))
compare(run(fxtrace, "report", "--events", "function:main,function:fn_run", "-O",
            "funcgraph-proc,funcgraph-tail", merged),
        layout_opts([i for i in items if i[3] in ("main", "fn_run")],
                    {"proc": True, "tail": True}), "report --events -O")
for bad in ["funcgraph-nosuch", "funcgraph-tail,abstime", "tail", ""]:
    p = subprocess.run([fxtrace, "report", "-O", bad, merged], capture_output=True, text=True)
    name = [w for w in bad.split(",") if not w.startswith("funcgraph-")]
    name = name[0] if name else bad
    if p.returncode != 2 or p.stdout or "'%s'" % name not in p.stderr.split("\n")[0] or \
            not all("funcgraph-" + k in p.stderr.split("\n")[0] for k in fgraph_ref.DEFAULTS) \
            or "usage: fxtrace report " not in p.stderr:
        fail("report -O %r: exit %d, stdout %d bytes, stderr %r"
             % (bad, p.returncode, len(p.stdout), p.stderr[:300]))

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
print("fgraph_report: ok (%d lines; %d option sets)" % (len(lines), len(SETS)))
