#!/usr/bin/env python3
"""tests/check/hist_check.py - `fxtrace hist` against the kernel's hist file format, computed
independently: the demo's trace converted to trace.dat and printed by `trace-cmd report -R`
(libtraceevent decoding each record's raw fields), its histograms counted here in Python and
printed with the kernel's format strings (kernel/trace/trace_events_hist.c:
hist_trigger_show, hist_trigger_print_key, hist_trigger_entry_print, event_hist_trigger_print;
Documentation/trace/histogram.rst). Ties of the sort keys are ordered by key, ascending (the
kernel leaves them unordered).

  hist_check.py FXTRACE DEMO GEN_EVENTS WORKDIR

Exit 77 (skipped) without trace-cmd.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report_select import demo_trace  # noqa: E402  (the demo, and trace-cmd's view of it)


def log2_up(v):  # ilog2(roundup_pow_of_two(v))
    return 0 if v <= 1 else (v - 1).bit_length()


def hist(events, keys, vals=(), sort=(("hitcount", False),), size=2048, flt=None, pred=None):
    """keys: (name, modifier, buckets); vals: names. Returns the kernel's hist text."""
    def get(e, name):
        if name == "common_pid":
            return e["tid"]
        if name in ("cpu", "common_cpu"):
            return e["cpu"]
        if name == "comm":
            return e["comm"]
        return e["fields"].get(name)

    table = {}
    hits = 0
    for e in events:
        if pred is not None and not pred(e):
            continue
        ks = [get(e, k[0]) for k in keys]
        vs = [get(e, v) for v in vals]
        if any(x is None for x in ks + vs):
            continue
        key = []
        for (name, mod, b), x in zip(keys, ks):
            if isinstance(x, int):
                x &= (1 << 64) - 1
                x = log2_up(x) if mod == "log2" else (x // b * b if mod == "buckets" else x)
            key.append(x)
        key = tuple(key)
        ent = table.setdefault(key, [0] + [0] * len(vals))
        ent[0] += 1
        for i, v in enumerate(vs):
            ent[i + 1] = (ent[i + 1] + v) & ((1 << 64) - 1)
        hits += 1

    def desc(k):
        name, mod, b = k
        return name + ("." + mod if mod else "") + ("=%d" % b if mod == "buckets" else "")

    names = [k[0] for k in keys]
    sort_desc = []
    for s, d in sort:
        if s == "hitcount":
            sort_desc.append("hitcount" + (".descending" if d else ""))
        elif s in names:
            sort_desc.append(desc(keys[names.index(s)]) + (".descending" if d else ""))
        else:
            sort_desc.append(s + (".descending" if d else ""))
    out = ["# event histogram", "#",
           "# trigger info: hist:keys=%s:vals=%s:sort=%s:size=%d%s [active]" % (
               ",".join(desc(k) for k in keys), ",".join(["hitcount"] + list(vals)),
               ",".join(sort_desc), size, " if " + flt if flt else ""), "#", ""]

    def sortval(item, s):
        key, ent = item
        if s == "hitcount":
            return ent[0]
        if s in names:
            x = key[names.index(s)]
            return x.encode() if isinstance(x, str) else x
        return ent[1 + list(vals).index(s)]

    def keyorder(item):
        return tuple(x.encode() if isinstance(x, str) else x for x in item[0])

    items = sorted(table.items(), key=keyorder)
    for s, d in reversed(sort):  # stable sorts, least significant first
        items.sort(key=lambda it: sortval(it, s), reverse=d)
    for key, ent in items:
        parts = []
        for (name, mod, b), x in zip(keys, key):
            if isinstance(x, str):
                parts.append("%s: %-50s" % (name, x))
            elif mod == "log2":
                parts.append("%s: ~ 2^%-2d" % (name, x))
            elif mod == "buckets":
                parts.append("%s: ~ %d-%d" % (name, x, x + b - 1))
            elif mod == "hex":
                parts.append("%s: %x" % (name, x))
            else:
                parts.append("%s: %10d" % (name, x))
        line = "{ " + ", ".join(parts) + " } hitcount: %10d" % ent[0]
        for v, s in zip(vals, ent[1:]):
            line += "  %s: %10d" % (v, s)
        out.append(line)
    out += ["", "Totals:", "    Hits: %d" % hits, "    Entries: %d" % len(table),
            "    Dropped: 0"]
    return "\n".join(out) + "\n"


def main():
    fxtrace, demo, gen, work = sys.argv[1:5]
    if shutil.which("trace-cmd") is None:
        print("SKIP: no trace-cmd")
        return 77
    fxt, ev = demo_trace(fxtrace, demo, work)
    producer = next(e["tid"] for e in ev if e["comm"] == "producer")

    def dur(e):
        return e["fields"].get("dur_ns")

    cases = [
        (["-k", "common_pid"], hist(ev, [("common_pid", "", 0)])),
        (["-k", "dur_ns.log2", "-v", "dur_ns", "-s", "dur_ns.descending", "--filter",
          "dur_ns > 1000"],
         hist(ev, [("dur_ns", "log2", 0)], ["dur_ns"], [("dur_ns", True)], flt="dur_ns > 1000",
              pred=lambda e: dur(e) is not None and dur(e) > 1000)),
        (["-k", "comm,depth", "-s", "hitcount.descending"],
         hist(ev, [("comm", "", 0), ("depth", "", 0)], sort=[("hitcount", True)])),
        (["-k", "depth.buckets=2", "-v", "depth", "--size", "100"],
         hist(ev, [("depth", "buckets", 2)], ["depth"], size=128)),
        (["-k", "seq.hex,common_pid", "-v", "bytes", "-s", "bytes.descending,seq",
          "--events", "demo:block_produced"],
         hist(ev, [("seq", "hex", 0), ("common_pid", "", 0)], ["bytes"],
              [("bytes", True), ("seq", False)],
              pred=lambda e: e["name"] == "block_produced")),
        (["-k", "cpu", "-v", "dur_ns", "--tid", str(producer)],
         hist(ev, [("cpu", "", 0)], ["dur_ns"], pred=lambda e: e["tid"] == producer)),
    ]
    failed = 0
    for args, want in cases:
        got = subprocess.run([fxtrace, "hist"] + args + [fxt], capture_output=True, text=True)
        if got.returncode != 0 or got.stdout != want:
            failed += 1
            print("FAIL: hist %s: exit %d\n--- got\n%s--- want\n%s%s" % (
                " ".join(args), got.returncode, got.stdout, want, got.stderr))
        else:
            print("ok: hist %s: %d lines" % (" ".join(args), want.count("\n")))
    # A full map: the first 128 distinct keys are entries, the later events of other keys are
    # dropped. gen_events' ticks (i = 8g + 1..5 in group g, in that order) all differ.
    gen_file = os.path.join(work, "gen.fxt")
    subprocess.run([gen, "8000", gen_file], check=True)
    ticks = [8 * g + k for g in range(1000) for k in range(1, 6)]
    first = [{"tid": 0, "cpu": 0, "comm": "", "fields": {"i": i}} for i in ticks[:128]]
    want = hist(first, [("i", "", 0)], size=128).replace("Dropped: 0", "Dropped: %d" % (len(ticks) - 128))
    got = subprocess.run([fxtrace, "hist", "-k", "i", "--size", "128", gen_file],
                         capture_output=True, text=True)
    if got.returncode != 0 or got.stdout != want:
        failed += 1
        print("FAIL: hist -k i --size 128: exit %d\n--- got\n%s--- want\n%s%s" % (
            got.returncode, got.stdout, want, got.stderr))
    else:
        print("ok: hist -k i --size 128: 128 entries, %d dropped" % (len(ticks) - 128))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
