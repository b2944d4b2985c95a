#!/usr/bin/env python3
"""Compares `fxtrace report FILE.fxt` with `trace-cmd report -i FILE.dat` (the same recording
converted by `fxtrace convert --to tracedat`), line by line.

  tracedat_compare.py REPORT.txt TRACECMD.txt [--raw TRACECMD_RAW.txt]
                      [--stat TRACECMD_STAT.txt --stats FXTRACE_STATS.txt]

Every event must appear in both with the same timestamp (microseconds), CPU, pid, comm, event
name and text; events of one timestamp may come in another order (both sort by time; equal
times on different CPUs are merged differently), so lines are compared per timestamp as
sorted lists. Losses: fxtrace's "CPU:N [LOST n EVENTS]" before an event must be trace-cmd's
"CPU:N [n EVENTS DROPPED]" before the same event. Losses fxtrace prints at the end (after a
thread's last event) have no event to stand before in trace.dat: they are counted and
returned for the caller to check against `trace-cmd report --stat`.

Events trace-cmd prints through a plugin (libtraceevent's plugins own these system:event
names) have another text: with TRACECMD_RAW (`trace-cmd report -R`, the raw fields) they are
compared field by field against the name=value pairs of fxtrace's text instead.

With --stat (`trace-cmd report --stat`: the CPUSTAT options) and --stats (`fxtrace stats`):
each CPU's "read events" is the number of events fxtrace report shows on it, their sum the
total of `fxtrace stats`; each CPU's "overrun" + "dropped events" is what fxtrace report shows
lost on it (before events and at the end), their sum the dropped + overrun + lost of
`fxtrace stats`.

Exit 0 and a summary line on success; 1 with the first differences on failure.
"""
import re
import sys
from collections import defaultdict

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
from report_text import LINE as REPORT_LINE  # noqa: E402

# system:event names libtraceevent's plugins (and trace-cmd's own) print themselves.
PLUGIN_EVENTS = {
    ("sched", "sched_switch"), ("sched", "sched_wakeup"), ("sched", "sched_wakeup_new"),
    ("ftrace", "function"), ("ftrace", "funcgraph_entry"), ("ftrace", "funcgraph_exit"),
    ("ftrace", "kernel_stack"), ("ftrace", "user_stack"),
    ("kmem", "kmalloc"), ("kmem", "kmalloc_node"), ("kmem", "kfree"),
    ("kmem", "kmem_cache_alloc"), ("kmem", "kmem_cache_alloc_node"), ("kmem", "kmem_cache_free"),
    ("irq", "irq_handler_entry"), ("irq", "irq_handler_exit"), ("irq", "softirq_entry"),
    ("irq", "softirq_exit"), ("irq", "softirq_raise"),
    ("timer", "hrtimer_expire_entry"), ("timer", "hrtimer_start"),
    ("jbd2", "jbd2_checkpoint_stats"), ("jbd2", "jbd2_run_stats"),
    ("mac80211", "drv_bss_info_changed"), ("xen", "xen_mc_batch"),
}
PLUGIN_NAMES = {name for _, name in PLUGIN_EVENTS}

FXT_LOST = re.compile(r"^CPU:(\d+) \[LOST (\d+) EVENTS\]$")
# trace-cmd report: "%16s-%-5d [%03d] %5llu.%06llu: name: " padded to 20 columns, then text
TC_LINE = re.compile(r"^(.{16})-(\d+) *\[(\d{3})\] +(\d+\.\d{6}): ([A-Za-z0-9_]+): (.*)$")
TC_DROP = re.compile(r"^CPU:(\d+) \[(\d+) EVENTS DROPPED\]$")
TC_RAW_PAIR = re.compile(r"(\w+)=(\S*)")


def ident(name):
    """The trace.dat format name of an fxtrace event name (tracedat_write_event.h)."""
    out = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return out if out else "_"


def split_name(rest):
    """fxtrace's "name: text" (the name may contain ": " only if weird: take the first)."""
    name, sep, text = rest.partition(": ")
    if not sep:
        raise ValueError("no ': ' after the event name")
    return name, text


def read_fxtrace(path):
    events, trailing = [], []
    pending = None
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            m = FXT_LOST.match(line)
            if m:
                if pending is not None:  # two LOST lines in a row: the first was trailing
                    trailing.append(pending)
                pending = (int(m.group(1)), int(m.group(2)))
                continue
            m = REPORT_LINE.match(line)
            if not m:
                raise SystemExit(f"{path}:{n}: not a report line: {line!r}")
            comm, pid, cpu, ts, rest = m.groups()
            name, text = split_name(rest)
            if name == "tracing_mark_write":  # ftrace:print prints so; its format is "print"
                name = "print"
            events.append({"line": n, "comm": comm.strip(), "pid": int(pid), "cpu": int(cpu),
                           "ts": ts, "name": ident(name), "text": text,
                           "lost": pending[1] if pending else 0})
            if pending and pending[0] != int(cpu):
                raise SystemExit(f"{path}:{n}: LOST line of CPU {pending[0]} before an event "
                                 f"of CPU {cpu}")
            pending = None
    if pending is not None:
        trailing.append(pending)
    return events, trailing


def read_tracecmd(path):
    events = []
    pending = None
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if n == 1 and line.startswith("cpus="):
                continue
            m = TC_DROP.match(line)
            if m:
                pending = (int(m.group(1)), int(m.group(2)))
                continue
            if re.match(r"^CPU:\d+ \[EVENTS DROPPED\]$", line):
                raise SystemExit(f"{path}:{n}: a page lost events without their count: {line}")
            m = TC_LINE.match(line)
            if not m:
                raise SystemExit(f"{path}:{n}: not a report line: {line!r}")
            comm, pid, cpu, ts, name, rest = m.groups()
            pad = max(0, 20 - len(name))
            if not rest.startswith(" " * pad):
                raise SystemExit(f"{path}:{n}: event name not padded to 20 columns: {line!r}")
            events.append({"line": n, "comm": comm.strip(), "pid": int(pid), "cpu": int(cpu),
                           "ts": ts, "name": name, "text": rest[pad:],
                           "lost": pending[1] if pending else 0})
            pending = None
    return events


def key(e, text):
    return (e["cpu"], e["pid"], e["comm"], e["name"], text, e["lost"])


def pairs(text):
    return dict(TC_RAW_PAIR.findall(text))


def read_cpustat(path):
    """trace-cmd report --stat: {cpu: {"read events": n, ...}}."""
    cpus, cur = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^CPU: (\d+)$", line.strip())
            if m:
                cur = cpus.setdefault(int(m.group(1)), {})
                continue
            m = re.match(r"^(entries|overrun|commit overrun|bytes|dropped events|read events): "
                         r"(\d+)$", line.strip())
            if m and cur is not None:
                cur[m.group(1)] = int(m.group(2))
    return cpus


def check_stats(fx, trailing, stat_path, stats_path, problems):
    cpus = read_cpustat(stat_path)
    with open(stats_path, encoding="utf-8") as f:
        total = re.search(r"^total: (\d+) events, .*; (\d+) dropped, (\d+) overrun, (\d+) lost$",
                          f.read(), re.M)
    if not cpus or not total:
        problems.append("no CPU stats in trace-cmd report --stat, or no total in fxtrace stats")
        return 0
    events, lost = defaultdict(int), defaultdict(int)
    for e in fx:
        events[e["cpu"]] += 1
        lost[e["cpu"]] += e["lost"]
    for cpu, n in trailing:
        lost[cpu] += n
    for cpu in sorted(set(cpus) | set(events) | set(lost)):
        st = cpus.get(cpu, {})
        if st.get("read events") != events[cpu]:
            problems.append(f"CPU {cpu}: --stat says {st.get('read events')} read events, "
                            f"fxtrace report shows {events[cpu]}")
        if st.get("overrun", 0) + st.get("dropped events", 0) != lost[cpu]:
            problems.append(f"CPU {cpu}: --stat says {st.get('overrun')} overrun + "
                            f"{st.get('dropped events')} dropped, fxtrace report {lost[cpu]} lost")
    n, dropped, overrun, other = (int(x) for x in total.groups())
    if sum(st.get("read events", 0) for st in cpus.values()) != n:
        problems.append(f"--stat's read events do not add up to fxtrace stats' {n} events")
    if sum(st.get("overrun", 0) + st.get("dropped events", 0) for st in cpus.values()) != \
            dropped + overrun + other:
        problems.append("--stat's lost records do not add up to fxtrace stats' losses")
    return len(cpus)


def main():
    args = sys.argv[1:]
    opts = {}
    for name in ("--raw", "--stat", "--stats"):
        if name in args:
            i = args.index(name)
            opts[name] = args[i + 1]
            del args[i:i + 2]
    if len(args) != 2 or (("--stat" in opts) != ("--stats" in opts)):
        raise SystemExit(__doc__)
    fx, trailing = read_fxtrace(args[0])
    tc = read_tracecmd(args[1])
    raw = read_tracecmd(opts["--raw"]) if "--raw" in opts else None
    if raw is not None and len(raw) != len(tc):
        raise SystemExit(f"trace-cmd -R printed {len(raw)} events, without -R {len(tc)}")
    problems = []
    if len(fx) != len(tc):
        problems.append(f"fxtrace report has {len(fx)} events, trace-cmd report {len(tc)}")
    by_ts_fx, by_ts_tc = defaultdict(list), defaultdict(list)
    plugin = 0
    for e in fx:
        by_ts_fx[e["ts"]].append(e)
    for i, e in enumerate(tc):
        if raw is not None:
            e["raw"] = pairs(raw[i]["text"])
        by_ts_tc[e["ts"]].append(e)
    for ts in sorted(set(by_ts_fx) | set(by_ts_tc), key=float):
        left = list(by_ts_tc.get(ts, []))
        unmatched = []
        for e in by_ts_fx.get(ts, []):
            k = key(e, e["text"])
            hit = next((i for i, t in enumerate(left) if key(t, t["text"]) == k), None)
            if hit is None:
                unmatched.append(e)
            else:
                del left[hit]
        for e in unmatched:
            # printed by a plugin: trace-cmd's raw fields must be fxtrace's name=value pairs
            want = pairs(e["text"])
            hit = None
            if e["name"] in PLUGIN_NAMES and raw is not None and want:
                hit = next((i for i, t in enumerate(left) if key(t, "")[:4] == key(e, "")[:4] and
                            t["lost"] == e["lost"] and
                            all(t["raw"].get(f) == v for f, v in want.items())), None)
            if hit is None:
                problems.append(f"{ts}: only in fxtrace report (line {e['line']}): "
                                f"{key(e, e['text'])}")
            else:
                del left[hit]
                plugin += 1
        for t in left:
            problems.append(f"{ts}: only in trace-cmd report (line {t['line']}): "
                            f"{key(t, t['text'])}")
        if len(problems) > 20:
            break
    ncpus = check_stats(fx, trailing, opts["--stat"], opts["--stats"], problems) \
        if "--stat" in opts else 0
    if problems:
        print("FAIL: the reports differ:")
        for p in problems[:20]:
            print("  " + p)
        return 1
    lost = sum(e["lost"] for e in fx)
    print(f"ok: {len(fx)} events identical ({plugin} plugin-printed, compared by fields); "
          f"{lost} lost records shown before their events; "
          f"trailing lost: {' '.join(f'cpu{c}={n}' for c, n in trailing) or 'none'}"
          + (f"; --stat agrees on {ncpus} CPUs" if ncpus else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
