#!/usr/bin/env python3
"""The function tracers' events in trace.dat (src/formats/tracedat_write_fn.h) read by
trace-cmd, against the calls read independently out of the JSON conversion of the same file.

fn_prog (tests/check/fn_prog.c) is recorded under function_graph and under function, pinned to
one CPU (taskset), and converted to trace.dat. Then:
  - `trace-cmd report`: the function_graph layout trace-cmd prints for the kernel's records
    ("f();" with the duration for a call with no recorded call inside, "f() {" ... "}" with
    the duration at the close), in the calls' order, each name, indentation (nesting depth)
    and duration (as printed: truncated to its digits) as the JSON's calls say;
  - `trace-cmd report -R`: every funcgraph_entry/exit's func, depth, calltime and rettime (the
    call's start and end ns), every function record's ip and parent_ip (names through the
    file's kallsyms) as the JSON says;
  - `trace-cmd dump --ftrace-events`: the three formats are the running kernel's
    events/ftrace/<event>/format byte for byte but the ID line (when tracefs is there).
Skipped (exit 77) without trace-cmd.

  tracedat_fn.py FXTRACE FN_PROG WORKDIR
"""
import json
import os
import re
import shutil
import subprocess
import sys

fxtrace, prog, work = sys.argv[1:4]
if shutil.which("trace-cmd") is None:
    print("SKIP: no trace-cmd")
    sys.exit(77)
os.makedirs(work, exist_ok=True)


def run(*args):
    return subprocess.run(list(args), check=True, capture_output=True, text=True).stdout


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []


def record(tracer, n):
    base = os.path.join(work, tracer)
    run(fxtrace, "record", "-p", tracer, "-o", base + ".fxt", "--", *pin, prog, n)
    run(fxtrace, "convert", base + ".fxt", "-o", base + ".json")
    run(fxtrace, "convert", base + ".fxt", "-o", base + ".dat")
    return base, json.load(open(base + ".json"))["traceEvents"]


# ---- function_graph -------------------------------------------------------------------------
base, ev = record("function_graph", "7")
calls = [(round(e["ts"] * 1000), round(e["dur"] * 1000), e["name"], e["tid"]) for e in ev
         if e["ph"] == "X" and e.get("cat") == "function"]
if len(calls) < 40:
    fail("only %d calls recorded" % len(calls))
calls.sort(key=lambda c: (c[0], -c[1]))
depth, leaf, stacks = {}, {}, {}
for i, (start, dur, name, tid) in enumerate(calls):
    st = stacks.setdefault(tid, [])
    while st and calls[st[-1]][0] + calls[st[-1]][1] <= start:
        st.pop()
    if st:
        leaf[st[-1]] = False
    depth[i] = len(st)
    leaf[i] = True
    st.append(i)

# What trace-cmd must print, in time order: each call at its start, a parent's close at its
# end (deeper closes first at one time).
want = []
for i, (start, dur, name, tid) in enumerate(calls):
    if leaf[i]:
        want.append((start, 1, 0, ("leaf", name, depth[i], dur)))
    else:
        want.append((start, 1, 0, ("open", name, depth[i], None)))
        want.append((start + dur, 0, -depth[i], ("close", None, depth[i], dur)))
want = [w[3] for w in sorted(want, key=lambda w: w[:3])]

line_re = re.compile(r"funcgraph_(entry|exit):\s+[+!#*@$]?\s*(?:([0-9.]+) us)?\s*\|( *)(.*)$")
got = []
for line in run("trace-cmd", "report", base + ".dat").splitlines():
    if "funcgraph_" not in line:
        continue
    m = line_re.search(line)
    if not m:
        fail("unparsed line %r" % line)
    kind, dur, indent, text = m.groups()
    d = (len(indent) - 2) // 2
    if text == "}":
        got.append(("close", None, d, dur, line))
    elif text.endswith("();"):
        got.append(("leaf", text[:-3], d, dur, line))
    elif text.endswith("() {"):
        got.append(("open", text[:-4], d, None, line))
    else:
        fail("unexpected function column %r" % line)
if len(got) != len(want):
    fail("trace-cmd printed %d function_graph lines, the calls make %d" % (len(got), len(want)))
for g, w in zip(got, want):
    if g[:3] != w[:3]:
        fail("%r: want %s %s at depth %d" % (g[4], w[0], w[1], w[2]))
    if w[3] is not None:
        if g[3] is None:
            fail("%r: no duration" % g[4])
        digits = len(g[3].split(".")[1]) if "." in g[3] else 0
        if int(g[3].replace(".", "")) != w[3] // 10 ** (3 - digits):
            fail("%r: the call took %d ns" % (g[4], w[3]))


def kallsyms(dat):
    syms = {}
    for line in run("trace-cmd", "dump", "--kallsyms", dat).splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and re.fullmatch("[0-9a-f]{16}", parts[0]):
            syms[int(parts[0], 16)] = parts[2]
    return syms


def field(line, name):
    m = re.search(r"\b%s=(\S+)" % name, line)
    if not m:
        fail("no %s in %r" % (name, line))
    return m.group(1)


def sym(syms, v):  # -R prints a resolved address as its name, else as hex
    return syms.get(int(v, 16), v) if v.startswith("0x") else v


syms = kallsyms(base + ".dat")
entries = []
exits = []
for line in run("trace-cmd", "report", "-R", base + ".dat").splitlines():
    if "funcgraph_entry:" in line:
        entries.append((sym(syms, field(line, "func")), int(field(line, "depth"))))
    elif "funcgraph_exit:" in line:
        exits.append((sym(syms, field(line, "func")), int(field(line, "depth")),
                      int(field(line, "calltime"), 16), int(field(line, "rettime"), 16),
                      int(field(line, "overrun"))))
if entries != [(c[2], depth[i]) for i, c in enumerate(calls)]:
    fail("funcgraph_entry func/depth differ from the calls")
want_exits = sorted(((c[2], depth[i], c[0], c[0] + c[1], 0) for i, c in enumerate(calls)),
                    key=lambda x: (x[3], -x[1]))
if exits != want_exits:
    fail("funcgraph_exit func/depth/calltime/rettime differ from the calls")

# ---- function ---------------------------------------------------------------------------------
base, ev = record("function", "5")
fcalls = [(e["name"], e["args"]["parent"]) for e in sorted(
    (e for e in ev if e["ph"] in ("i", "I") and e.get("cat") == "function"),
    key=lambda e: e["ts"])]
syms = kallsyms(base + ".dat")
got = [(sym(syms, field(l, "ip")), sym(syms, field(l, "parent_ip")))
       for l in run("trace-cmd", "report", "-R", base + ".dat").splitlines() if " function:" in l]
if len(fcalls) < 10 or got != fcalls:
    fail("ftrace:function records %r, the calls %r" % (got[:5], fcalls[:5]))

# ---- the formats against the kernel's ----------------------------------------------------------
tr = "/sys/kernel/tracing"
if not os.path.exists(tr + "/events") and os.geteuid() == 0:
    subprocess.run(["mount", "-t", "tracefs", "nodev", tr], capture_output=True)
if os.path.exists(tr + "/events/ftrace/funcgraph_exit/format"):
    dump = run("trace-cmd", "dump", "--ftrace-events", base + ".dat")
    for ev_name in ("function", "funcgraph_entry", "funcgraph_exit"):
        kernel = open(tr + "/events/ftrace/%s/format" % ev_name).read()
        m = re.search(r"^name: %s\n.*?print fmt: [^\n]*\n" % ev_name, dump, re.S | re.M)
        if not m:
            fail("no %s format in the file" % ev_name)
        mine = re.sub(r"^ID: \d+$", "ID", m.group(0), flags=re.M)
        if mine != re.sub(r"^ID: \d+$", "ID", kernel, flags=re.M):
            fail("%s's format differs from the kernel's:\n%s\n---\n%s" % (ev_name, mine, kernel))
else:
    print("note: no tracefs; the formats are not compared with the kernel's")
print("tracedat_fn: ok (%d calls, %d function records)" % (len(calls), len(fcalls)))
