#!/usr/bin/env python3
"""hist triggers on a running program's ad-hoc events, through the tool (fxtrace write / cat),
against the same run's recorded file.

adhoc_hist_prog (tests/check/adhoc_hist_prog.c) records ahp:* to a file and fires rounds of
ad-hoc events only when told on stdin: a counter ahp:ctr (id, k an s64, v), an instant
ahp:inst (who a string, n) and a scope ahp:work. Triggers are written while it waits: keys and
values among the counter's arguments and id, the instant's string, with an `if`, the scope's
dur_ns; some rounds are fired before them (not counted), more after. Each `hist` file read must
hold, entry by entry, the counts computed here from `fxtrace report` of the file the same run
wrote (its lines after the marker round's), the kernel's rules: a key printed as u64, the
Totals' Hits the sum of the hitcounts. dur_ns is compared by its sum (the clock is
CLOCK_MONOTONIC; the file maps times through its clock syncs, a duration may differ by a few ns
from the one the trigger counted).

  adhoc_hist_live.py FXTRACE ADHOC_HIST_PROG WORKDIR
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livectl  # noqa: E402

fxtrace, prog_path, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
out = os.path.join(work, "run.fxt")
prog = livectl.Prog(fxtrace, [prog_path, out], env={"FXTRACE_CLOCK": "monotonic"},
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
p, fail, tool = prog.p, prog.fail, prog.tool


def emit(n):
    p.stdin.write("emit %d\n" % n)
    p.stdin.flush()
    return int(p.stdout.readline().split()[1])


before = emit(50)  # not counted: before the triggers
TRIGGERS = {
    "ctr": ["hist:keys=k:vals=v", "hist:keys=id,k:vals=hitcount,v if k > 2"],
    "inst": ["hist:keys=who:vals=n if n >= 100"],
    "work": ["hist:keys=common_pid:vals=dur_ns"],
}
for ev, trigs in TRIGGERS.items():
    for t in trigs:
        tool("write", p.pid, "events/ahp/%s/trigger" % ev, t)
total = emit(700)
hists = {ev: tool("cat", p.pid, "events/ahp/%s/hist" % ev) for ev in TRIGGERS}
p.stdin.close()
if p.wait() != 0:
    fail("the program failed")
prog.clean()

# The recorded rounds: every event's fields, in order; those of rounds >= before counted.
rounds = {"ctr": [], "inst": [], "work": []}
pids = set()
line_re = re.compile(r"-(\d+) +\[\d+\] \S+ +[\d.]+: (ctr|inst|work): (.*)$")
for line in tool("report", out).splitlines():
    m = line_re.search(line)
    if not m:
        continue
    pids.add(int(m.group(1)))
    ev, f = m.group(2), dict(kv.split("=", 1) for kv in m.group(3).split())
    rounds[ev].append(f)
for ev, fs in rounds.items():
    if len(fs) != total:
        fail("%s: %d events recorded, %d fired" % (ev, len(fs), total))
if len(pids) != 1:
    fail("events of threads %s" % pids)
pid = pids.pop()
U64 = 1 << 64


def count(ev, keys, vals, cond):
    """The histogram of ev's counted rounds: {key tuple: [hitcount, sums...]}."""
    h = {}
    for f in rounds[ev][before:]:
        if not cond(f):
            continue
        k = tuple(keys(f))
        e = h.setdefault(k, [0] + [0] * len(vals))
        e[0] += 1
        for i, v in enumerate(vals):
            e[1 + i] += v(f)
    return h


def parse(text):
    """The entries of one histogram's text: {key tuple: [hitcount, values...]}, checked
    against its Totals' Hits."""
    h = {}
    for line in text.splitlines():
        if not line.startswith("{ "):
            continue
        key, rest = line[2:].split(" } ", 1)
        k = tuple(part.split(":", 1)[1].strip() for part in key.split(", "))
        nums = [int(x) for x in re.findall(r":\s+(\d+)", rest)]
        if k in h:
            fail("key %s twice:\n%s" % (k, text))
        h[k] = nums
    hits = re.search(r"\nTotals:\n    Hits: (\d+)\n", text)
    if not hits or int(hits.group(1)) != sum(e[0] for e in h.values()):
        fail("Totals' Hits is not the sum of the hitcounts:\n" + text)
    return h


def split(text):
    """The histograms of a hist file, newest trigger first (blank lines between)."""
    return [t for t in re.split(r"\n\n(?=# event histogram)", text) if t.strip()]


def u64(s):
    return str(int(s) % U64)


def same(ev, text, want):
    got = parse(text)
    want = {tuple(str(x) for x in k): v for k, v in want.items()}
    if got != want:
        fail("%s: hist\n%s\nexpected %s" % (ev, text, sorted(want.items())))


ctr = split(hists["ctr"])
inst = split(hists["inst"])
work = split(hists["work"])
if (len(ctr), len(inst), len(work)) != (2, 1, 1):
    fail("histograms per file: %d %d %d" % (len(ctr), len(inst), len(work)))
# Newest first: the conditional one.
same("ctr", ctr[1], count("ctr", lambda f: [u64(f["k"])], [lambda f: int(f["v"])],
                          lambda f: True))
same("ctr", ctr[0], count("ctr", lambda f: [f["id"], u64(f["k"])], [lambda f: int(f["v"])],
                          lambda f: int(f["k"]) > 2))
same("inst", inst[0], count("inst", lambda f: [f["who"]], [lambda f: int(f["n"])],
                            lambda f: int(f["n"]) >= 100))
got = parse(work[0])
dur = [int(round(float(f["dur"][:-2]) * 1000)) for f in rounds["work"][before:]]
if list(got) != [(str(pid),)] or got[(str(pid),)][0] != len(dur):
    fail("work: hist\n%s\nexpected %d hits of pid %d" % (work[0], len(dur), pid))
if abs(got[(str(pid),)][1] - sum(dur)) > 3 * len(dur) + sum(dur) // 100000:
    fail("work: dur_ns summed %d, the file's %d" % (got[(str(pid),)][1], sum(dur)))
print("ok: %d rounds counted of %d; ctr %d+%d entries, inst %d, work %d hits" %
      (total - before, total, len(parse(ctr[1])), len(parse(ctr[0])), len(parse(inst[0])),
       len(dur)))
