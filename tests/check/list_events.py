#!/usr/bin/env python3
"""`fxtrace list` against the live tree of the same objects (issue 16).

    list_events.py FXTRACE SHIM LIBFXTRACE WORKDIR EXE... -- SO...

For each executable EXE (a PIE, a non-PIE one, the demo) and each shared object SO: the
program runs with the preloaded SHIM (tests/check/list_shim.c), which writes at its exit the
available_events and every format file its live tracefs tree serves; an SO is loaded by the
shim (dlopen) into /bin/true. The reference holds the events of libfxtrace.so too (its own
ftrace:print), so the list compared is `fxtrace list OBJECT LIBFXTRACE`:
  - its lines, as a set, equal the live available_events (and have no duplicates);
  - `-v`: each event's text, without its '#' line, equals the live format file without its
    ID line, for every event the live tree serves a format of (at least one per object).
Errors, each exit 1: a text file is "not an ELF file", a program built without fxtrace has
"no fxtrace events", one of another machine or class is refused, saying so.
"""
import os
import subprocess
import sys

fxtrace, shim, libfxt, work = sys.argv[1:5]
rest = sys.argv[5:]
sep = rest.index("--")
exes, sos = rest[:sep], rest[sep + 1:]
os.makedirs(work, exist_ok=True)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def live(obj, is_exe):
    out = os.path.join(work, os.path.basename(obj) + ".live")
    env = dict(os.environ, LD_PRELOAD=shim, FXT_LIST_OUT=out, FXTRACE="")
    env.pop("FXTRACE", None)
    if is_exe:
        cmd = [obj] + (["--help"] if os.path.basename(obj) == "demo" else [])
    else:
        env["FXT_LIST_DLOPEN"] = obj
        cmd = ["/bin/true"]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    names = open(out).read().splitlines()
    formats = {}
    cur = None
    for line in open(out + ".formats").read().splitlines():
        if line.startswith("==== "):
            cur = line[5:]
            formats[cur] = []
        elif not line.startswith("ID: "):
            formats[cur].append(line)
    return names, formats


def listed(obj, verbose):
    r = subprocess.run([fxtrace, "list"] + (["-v"] if verbose else []) + [obj, libfxt],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"fxtrace list {obj}: exit {r.returncode}: {r.stderr}")
    return r.stdout.splitlines()


for obj, is_exe in [(e, True) for e in exes] + [(s, False) for s in sos]:
    names, formats = live(obj, is_exe)
    mine = listed(obj, False)
    if len(mine) != len(set(mine)):
        fail(f"{obj}: a name listed twice")
    if set(mine) != set(names):
        fail(f"{obj}: listed {sorted(set(mine) - set(names))} not live, "
             f"live {sorted(set(names) - set(mine))} not listed")
    # -v: blocks of 'system:event', '# kind, file:line', the format, ending at 'print fmt:'
    blocks, cur = {}, None
    for line in listed(obj, True):
        if cur is None:
            cur = line
            blocks[cur] = []
        elif line.startswith("#") and not blocks[cur]:
            continue
        else:
            blocks[cur].append(line)
            if line.startswith("print fmt: "):
                cur = None
    if set(blocks) != set(mine):
        fail(f"{obj}: -v lists other events than without it")
    own = [n for n in formats if not n.startswith("ftrace:")]
    if not own:
        fail(f"{obj}: the live tree served no format of the object's events")
    for name, text in formats.items():
        if blocks.get(name) != text:
            fail(f"{obj}: {name}: -v gives {blocks.get(name)}, the live format is {text}")
    print(f"{obj}: {len(mine)} events, {len(formats)} formats compared")

# Errors.
text = os.path.join(work, "not-elf.txt")
open(text, "w").write("hello\n")
# Another ABI: the first executable with another machine (e_machine, offset 18) or class.
image = bytearray(open(exes[0], "rb").read())
machine = int.from_bytes(image[18:20], "little")
other = os.path.join(work, "other-machine")
open(other, "wb").write(image[:18] + (183 if machine != 183 else 62).to_bytes(2, "little") +
                        image[20:])
elf32 = os.path.join(work, "elf32")
open(elf32, "wb").write(image[:4] + b"\x01" + image[5:])
for path, want in [(text, "not an ELF file"), ("/bin/true", "no fxtrace events"),
                   (other, "built for ELF machine"), (elf32, "not a 64-bit ELF file")]:
    r = subprocess.run([fxtrace, "list", path], capture_output=True, text=True)
    if r.returncode != 1 or f"fxtrace list: {path}: {want}" not in r.stderr or r.stdout:
        fail(f"fxtrace list {path}: exit {r.returncode}, stderr {r.stderr!r}")
sys.exit(1 if failures else 0)
