#!/usr/bin/env python3
"""Triggers on the running demo change what is recorded as the kernel's would on its events.

The demo runs recording demo:block_produced and demo:block_done to a file (block mode: nothing
dropped). Once it runs, B is chosen 7000 blocks or more past the newest seq its live `trace`
shows, and through the tool (fxtrace write) these triggers are written (the kernel's semantics
in brackets, Documentation/trace/events.rst 6.2 and kernel/trace/trace_events_trigger.c):

  block_produced  traceoff:1 if seq == B          [recording off after the event, which is
                                                   recorded: a trigger with a filter runs after
                                                   the event is committed]
  block_done      traceon:1 if seq == B + 200     [recording on after the event, which is not
                                                   recorded: it was discarded while off]
  block_done      enable_event:demo:block_committed:1 if seq == B + 400
                                                  [block_committed, off, records from then on]
  block_done      hist:keys=worker if seq >= B + 600 && seq < B + 1600
                                                  [counts each matching event]

The test waits for the histogram's 1000 hits, stops the demo (SIGTERM: it drains and writes its
file), and checks in `fxtrace report` of the file:
  - the producer's block_produced seqs are contiguous up to B, then none up to B + 200 (the
    producer made them before block_done B + 200 turned recording on), then contiguous to the
    end;
  - block_done B + 200 is not recorded; every block_done from B + 260 on is (3 workers finish
    out of order by a few blocks at most);
  - no block_committed is recorded before block_done B + 400; every commit of seq B + 400 and
    later is; the enable_event trigger's count reads 0;
  - the histogram's entries are the recorded block_done events of seqs B + 600 .. B + 1599,
    counted by worker here.

  demo_triggers.py FXTRACE DEMO WORKDIR
"""
import os
import re
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import livectl  # noqa: E402

fxtrace, demo, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
out = os.path.join(work, "demo.fxt")
prog = livectl.Prog(fxtrace, [demo, "--duration", "600"], stdout=subprocess.DEVNULL, env={
    "FXTRACE": "events=demo:block_produced,demo:block_done;mode=block;output=" + out})
p, fail, tool, until = prog.p, prog.fail, prog.tool, prog.until
seqs = []
until(lambda: seqs.extend(int(s) for s in re.findall(
    r" block_produced: seq=(\d+)", tool("cat", p.pid, "trace"))) or seqs, "block_produced")
B = (max(seqs) // 1000 + 8) * 1000  # 7000 blocks or more ahead: seconds, at its rate
EV = "events/demo/%s/trigger"
HIST = "hist:keys=worker if seq >= %d && seq < %d" % (B + 600, B + 1600)
ENABLE = "enable_event:demo:block_committed:1 if seq == %d" % (B + 400)
tool("write", p.pid, EV % "block_produced", "traceoff:1 if seq == %d" % B)
tool("write", p.pid, EV % "block_done", "traceon:1 if seq == %d" % (B + 200))
tool("write", p.pid, EV % "block_done", ENABLE)
tool("write", p.pid, EV % "block_done", HIST)


def hits():
    m = re.search(r"\nTotals:\n    Hits: (\d+)\n", tool("cat", p.pid, "events/demo/block_done/hist"))
    return int(m.group(1)) if m else 0


until(lambda: hits() == 1000, "1000 hits in the histogram")
hist = tool("cat", p.pid, "events/demo/block_done/hist")
trig = tool("cat", p.pid, EV % "block_done")
p.send_signal(signal.SIGTERM)
if p.wait() != 0:
    fail("the demo failed")
prog.clean()

if ENABLE.replace(":1 if", ":count=0 if") not in trig:
    fail("enable_event's count is not used up:\n" + trig)
# The file's events: (time, event, seq, fields), in file order per thread.
line_re = re.compile(r"^\s*(\S+)-(\d+) +\[\d+\] \S+ +([\d.]+): (block_\w+): seq=(\d+)(.*)$")
ev = {"block_produced": [], "block_done": [], "block_committed": []}
for line in tool("report", out).splitlines():
    m = line_re.match(line)
    if m and m.group(4) in ev:
        ev[m.group(4)].append((float(m.group(3)), int(m.group(5)), m.group(6)))

prod = [s for _, s, _ in ev["block_produced"]]
if B not in prod:
    fail("block_produced %d not recorded (a traceoff with a filter records its event; or the "
         "trigger came too late)" % B)
i = prod.index(B)
before, after = prod[:i + 1], prod[i + 1:]
if before != list(range(before[0], B + 1)):
    fail("block_produced up to %d not contiguous" % B)
if not after or after != list(range(after[0], after[0] + len(after))) or after[0] <= B + 200:
    fail("block_produced after %d: %s..." % (B, after[:5]))
done = {s: (t, f) for t, s, f in ev["block_done"]}
if B + 200 in done:
    fail("block_done %d, which turned recording on, recorded" % (B + 200))
last = max(done)
missing = [s for s in range(B + 260, last + 1) if s not in done]
if missing:
    fail("block_done after traceon not recorded: %s" % missing[:10])
if B + 400 not in done:
    fail("block_done %d not recorded" % (B + 400))
t_on = done[B + 400][0]
com = {s: t for t, s, _ in ev["block_committed"]}
if not com or min(com.values()) < t_on:
    fail("block_committed recorded before block_done %d" % (B + 400))
missing = [s for s in range(B + 400, max(com) + 1) if s not in com]
if missing:
    fail("block_committed after the enable not recorded: %s" % missing[:10])
want = {}
for s in range(B + 600, B + 1600):
    w = int(re.search(r"worker=(\d+)", done[s][1]).group(1))
    want[w] = want.get(w, 0) + 1
got = {int(k): int(n) for k, n in re.findall(r"\{ worker: +(\d+) \} hitcount: +(\d+)", hist)}
if got != want:
    fail("histogram %s, the file's %s:\n%s" % (got, want, hist))
print("ok: B=%d; produced %d+%d, done %d, committed %d, hist %s" %
      (B, len(before), len(after), len(done), len(com), sorted(got.items())))
