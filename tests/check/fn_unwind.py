#!/usr/bin/env python3
"""Unwinding through traced C++ functions (fn_unwind.cpp) under function_graph, the patchable-
entry engine's build (PE_PROG) against the same source built with -finstrument-functions
(INSTR_PROG), whose hooks see every return without redirecting any.

throw: the exception leaves thrower's 3 frames and is caught in catcher; a second one is
caught in rethrower, thrown again from there (`throw;`) and caught in outer; a third leaves 2
thrower frames and guarded, whose object's destructor throws and catches inside itself on the
way, and is caught in catcher_guarded. Both builds: the program's results; the slices of main,
catcher, after_catch, after_return, outer and catcher_guarded, each once, nested as the source
calls them (each slice's parent the innermost slice of its thread that contains it), the same
in both. The engine: the 8 thrower frames, rethrower's and guarded's counted as cut, none a
slice, and so is Guard::~Guard's (the catch inside it, with the exception that runs it still
in flight, leaves the return addresses put back); the hooks: each of those 11 activations a
slice (g++ calls the exit hook as a frame unwinds) or a cut (clang++ does not).

exit: a thread calls pthread_exit from exit_leaf, under raii_at's 3 frames, each holding an
object whose destructor counts: all 3 run in both builds; each activation of exit_thread,
raii_at and exit_leaf a slice (g++'s hooks as the frames unwind) or a cut: 5 in all.

stop: the same frames (raii_at's) left by _Unwind_ForcedUnwind, whose stop function catches
an exception of its own in the middle of the walk: all 3 destructors run in both builds.

cancel: the same frames (raii_at's) left by the thread's cancellation, which glibc unwinds
from inside itself (no entry point to interpose: the return trampoline's personality puts the
addresses back): all 3 destructors run in both builds.

  fn_unwind.py FXTRACE PE_PROG INSTR_PROG WORKDIR
"""
import json
import os
import subprocess
import sys

fxtrace, pe_prog, instr_prog, work = sys.argv[1:5]
os.makedirs(work, exist_ok=True)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def record(prog, mode, tag):
    """Runs prog mode under function_graph: its stdout's "key value" lines and its slices."""
    out = os.path.join(work, tag + ".fxt")
    js = os.path.join(work, tag + ".json")
    r = subprocess.run([fxtrace, "record", "-p", "function_graph", "-o", out, "--", prog, mode],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail("%s %s: exit %d\n%s%s" % (prog, mode, r.returncode, r.stdout, r.stderr))
    said = dict(l.split(" ", 1) for l in r.stdout.splitlines() if " " in l)
    subprocess.run([fxtrace, "convert", out, "-o", js], check=True, capture_output=True)
    ev = json.load(open(js))["traceEvents"]
    slices = [(e["tid"], e["ts"], e["ts"] + e["dur"], e["name"]) for e in ev
              if e["ph"] == "X" and e.get("cat") == "function"]
    return said, slices


def tree(slices, names):
    """{(name, parent name)} of the slices named in names; fails unless each is there once."""
    got = {}
    for tid, b, e, name in slices:
        if name not in names:
            continue
        outer = [s for s in slices if s[0] == tid and s[3] != name and s[1] <= b and e <= s[2]]
        parent = min(outer, key=lambda s: s[2] - s[1])[3] if outer else None
        if name in got:
            fail("%s: two slices" % name)
        got[name] = parent
    if set(got) != set(names):
        fail("slices %s, not %s" % (sorted(got), sorted(names)))
    return got


def count(slices, name):
    return sum(1 for s in slices if s[3] == name)


# throw
kept = {"main", "catcher()", "after_catch(int)", "after_return(int)", "outer()",
        "catcher_guarded()"}
left = ("thrower(int)", "rethrower()", "guarded(int)", "Guard::~Guard()")
pe_said, pe = record(pe_prog, "throw", "throw_pe")
in_said, ins = record(instr_prog, "throw", "throw_instr")
for said in (pe_said, in_said):
    if said.get("result") != "15" or said.get("rethrown") != "7" or said.get("guarded") != "7":
        fail("the exceptions' results: %s" % said)
want = tree(ins, kept)
if want != {"main": None, "catcher()": "main", "after_catch(int)": "catcher()",
            "after_return(int)": "main", "outer()": "main", "catcher_guarded()": "main"}:
    fail("-finstrument-functions' nesting: %s" % want)
got = tree(pe, kept)
if got != want:
    fail("the engine's slices nest as %s, -finstrument-functions' as %s" % (got, want))
pe_left = sum(count(pe, f) for f in left)
if pe_left != 0 or pe_said.get("cut") != "11":
    fail("the engine: %d slices of frames unwound, cut %s (want 0 and 11)" %
         (pe_left, pe_said.get("cut")))
in_left = sum(count(ins, f) for f in left)
if in_left + int(in_said.get("cut", "-1")) != 11:
    fail("-finstrument-functions: %d slices of frames unwound, cut %s" %
         (in_left, in_said.get("cut")))

# exit
for prog, tag in ((pe_prog, "exit_pe"), (instr_prog, "exit_instr")):
    said, sl = record(prog, "exit", tag)
    if said.get("destructors") != "3":
        fail("%s: destructors run: %s, not 3" % (tag, said.get("destructors")))
    gone = sum(count(sl, f) for f in ("exit_thread(void*)", "raii_at(int, void (*)())", "exit_leaf()"))
    if gone + int(said.get("cut", "-1")) != 5:
        fail("%s: %d slices of the exiting thread, cut %s: not 5 activations" %
             (tag, gone, said.get("cut")))
# stop, cancel
for mode in ("stop", "cancel"):
    for prog, tag in ((pe_prog, mode + "_pe"), (instr_prog, mode + "_instr")):
        said, sl = record(prog, mode, tag)
        if said.get("destructors") != "3":
            fail("%s: destructors run: %s, not 3" % (tag, said.get("destructors")))
print("fn_unwind: ok")
