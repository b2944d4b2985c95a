"""The kernel's function_graph layout rebuilt from the calls of a Chrome JSON conversion
(`fxtrace convert FILE -o X.json`), for fgraph_report.py (report's layout) and fgraph_live.py
(the live `trace` and `trace_pipe`). It follows the kernel's rules
(kernel/trace/trace_functions_graph.c) written out below, not fxtrace's C code: nesting by
containment per thread, leaf "f();" with its duration, "f() {" ... "}" with the duration at the
close, the duration column (truncated nanoseconds, at most 7 digits, marks at the kernel's
thresholds, strictly greater), " ------" blocks when a CPU's lines change thread (comm cut to
7, "comm-pid" centred in 14), other events as "/* text */" indented as the kernel's per-CPU
depth says.
"""
import json

HEADER = ["# tracer: function_graph", "#", "# CPU  DURATION                  FUNCTION CALLS",
          "# |     |   |                     |   |   |   |"]


def read_json(path, other=None):
    """(items, names, cpus) of a JSON conversion: items (start ns, kind, tid, name, x) with
    kind "X" a slice (x: its duration in ns), "i" a function tracer's call (x: its parent),
    "e" another event whose comment text other(event) gives (None: not kept); names: tid ->
    thread name; cpus: tid -> the set of CPUs its "cpu" counters name."""
    names, cpus, items = {}, {}, []
    for e in json.load(open(path))["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        elif e["ph"] == "C" and e["name"].startswith("cpu (tid"):
            cpus.setdefault(e["tid"], set()).add(e["args"]["cpu"])
        elif e["ph"] == "X" and e.get("cat") == "function":
            items.append((round(e["ts"] * 1000), "X", e["tid"], e["name"],
                          round(e["dur"] * 1000)))
        elif e["ph"] in ("i", "I") and e.get("cat") == "function":
            items.append((round(e["ts"] * 1000), "i", e["tid"], e["name"], e["args"]["parent"]))
        elif e["ph"] in ("i", "I") and other is not None and other(e) is not None:
            items.append((round(e["ts"] * 1000), "e", e["tid"], e["name"], other(e)))
    return items, names, cpus


def duration(ns):
    marks = [(1000000000, "$"), (100000000, "@"), (10000000, "*"), (1000000, "#"),
             (100000, "!"), (10000, "+")]
    mark = next((m for t, m in marks if ns > t), " ")
    us = str(ns // 1000)
    s = us
    if len(us) < 7:
        s += "." + ("%03d" % (ns % 1000))[:7 - len(us)]
    return mark + " " + s + " us " + " " * max(0, 8 - len(s)) + "|  "


DEFAULTS = {"abstime": False, "cpu": True, "duration": True, "overhead": True, "proc": False,
            "tail": False}


def header(opts=None):
    """The header with the columns options/funcgraph-* (opts: name -> on, the kernel's defaults
    for the others) print: __print_graph_headers_flags."""
    o = dict(DEFAULTS, **(opts or {}))
    cols = [("abstime", "     TIME       ", "      |         "), ("cpu", " CPU", " |  "),
            ("proc", "  TASK/PID       ", "   |    |        "),
            ("duration", "  DURATION   ", "   |   |      ")]
    return ["# tracer: function_graph", "#",
            "#" + "".join(t for k, t, _ in cols if o[k]) + "               FUNCTION CALLS",
            "#" + "".join(b for k, _, b in cols if o[k]) + "               |   |   |   |"]


def layout(items, cpu_of, names, width, opts=None):
    """The kernel's function_graph lines of items (sorted here), header excluded; cpu_of: tid ->
    CPU; width: the CPU column's; opts: options/funcgraph-* (name -> on; the kernel's defaults
    for the others): the columns print_graph_prologue and print_graph_duration print, and a
    return's "} /* f */" (tail)."""
    o = dict(DEFAULTS, **(opts or {}))

    def cpu_col(c):
        return " %*d) " % (width, c)

    def prologue(c, tid, ns):
        return (("%5d.%06d |  " % (ns // 10**9, ns % 10**9 // 1000)) if o["abstime"] else "") + \
            (cpu_col(c) if o["cpu"] else "") + ((proc(tid) + " | ") if o["proc"] else "")

    def dur(ns):
        if not o["duration"]:
            return ""
        return duration(ns) if o["overhead"] else " " + duration(ns)[1:]

    fill = "              |  " if o["duration"] else ""

    def proc(tid):
        s = "%s-%d" % (names.get(tid, "<...>")[:7], tid)
        sp = max(0, 14 - len(s))
        return " " * (sp // 2) + s + " " * (sp - sp // 2)

    # Nesting per thread: slices by start, the longer first; a slice inside the innermost open
    # one that it starts before the end of.
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
    want = []
    for _, _, _, k, what in seq:
        start, kind, tid, name, x = items[k]
        c = cpu_of.get(tid, 0)
        if last.get(c, tid) != tid:
            want += [" ------------------------------------------",
                     cpu_col(c) + proc(last[c]) + " => " + proc(tid),
                     " ------------------------------------------", ""]
        last[c] = tid
        if what == "close":
            open_n[tid] -= 1
            want.append(prologue(c, tid, start + x) + dur(x) + "  " * depth_of[k] +
                        ("} /* %s */" % name if o["tail"] else "}"))
        elif kind in ("i", "e"):
            d = open_n.get(tid, 0) - 1
            text = "%s <-%s" % (name, x) if kind == "i" else x
            want.append(prologue(c, tid, start) + fill + ("  " * (d + 1) if d > 0 else "") +
                        "/* %s */" % text)
        elif k in has_child:
            want.append(prologue(c, tid, start) + fill + "  " * depth_of[k] + name + "() {")
            open_n[tid] = open_n.get(tid, 0) + 1
        else:
            want.append(prologue(c, tid, start) + dur(x) + "  " * depth_of[k] + name + "();")
    return want


def compare(got, want, what, fail):
    """got's lines (text) against want; fail(msg) on the first difference. Returns them."""
    lines = got.split("\n")
    if lines[-1] == "":
        lines.pop()
    for i, (g, w) in enumerate(zip(lines, want)):
        if g != w:
            fail("%s, line %d:\n  got  %r\n  want %r" % (what, i + 1, g, w))
    if len(lines) != len(want):
        fail("%s: %d lines, want %d" % (what, len(lines), len(want)))
    return lines
