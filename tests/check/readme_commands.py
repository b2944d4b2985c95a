#!/usr/bin/env python3
"""Every command the README shows, run (issue 16).

    readme_commands.py FXTRACE SOURCE_DIR BUILD_DIR WORKDIR

The shell blocks of README.md are split into commands (a line, its comment dropped; a line
of only a comment continues the one before). Each one is in the table below, run as shown,
run adapted (a placeholder replaced: ./app, PID, $!, a directory of the test's own; the
adaptation is said), or skipped with the reason; a README command missing from the table, or
one of the table the README no longer shows, fails the test, so the two stay in step.

./app is README's own C example ("Tracing a program"), compiled with a prelude giving what it
leaves out (struct pkt, q_depth, n) and a main that calls on_packet for 16 packets (len 700*i,
from 10.0.0.i or 192.168.0.i); with the argument `wait` it then says "ready" and fires a
packet of len 2000 from 10.0.0.1 for each line of its stdin, answering "fired", until EOF.
libnet.so is the same example as a shared object. Every command must exit 0; the test also
checks what each says it does (the file written holds net:rx events, ps lists the process...).
"""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

fxtrace, src, build, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []
ctl_dir = tempfile.mkdtemp(prefix="fxrm.")  # a socket path has at most 107 bytes
os.rmdir(ctl_dir)  # the traced process creates it, 0700
env = dict(os.environ, FXTRACE_DIR=ctl_dir, PATH=os.path.dirname(fxtrace) + ":" + os.environ["PATH"])
env.pop("FXTRACE", None)
buffers = os.path.join(work, "buffers")
children = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def sh(cmd, ok=True, **kw):
    """Runs cmd (sh -c) in the work directory; its result. ok: must exit 0."""
    r = subprocess.run(["sh", "-c", cmd], cwd=work, env=kw.pop("env", env), capture_output=True,
                       text=True, errors="replace", **kw)
    if ok and r.returncode != 0:
        fail(f"`{cmd}` exited {r.returncode}: {r.stderr[-2000:]}")
    return r


# ---- the README's commands --------------------------------------------------------------
readme = open(os.path.join(src, "README.md")).read()
commands = []
for block in re.findall(r"```sh\n(.*?)```", readme, re.S):
    for line in block.splitlines():
        code = re.sub(r"(^|\s+)#.*$", "", line).strip()
        if code:
            commands.append(code)
c_example = re.search(r"```c\n(#include <fxtrace/fxtrace.h>.*?)```", readme, re.S).group(1)

# ---- ./app and libnet.so from the README's example ----------------------------------------
prelude = """#include <stdio.h>
#include <string.h>
struct pkt { unsigned len; char from[32]; };
static unsigned long long q_depth(void) { return 3; }
static int n = 2;
void on_packet(const struct pkt *p);
"""
main = r"""
int main(int argc, char **argv) {
  struct pkt p;
  for (unsigned i = 0; i < 16; i++) {
    p.len = 700 * i;
    snprintf(p.from, sizeof p.from, i % 2 ? "10.0.0.%u" : "192.168.0.%u", i);
    on_packet(&p);
  }
  if (argc > 1 && strcmp(argv[1], "wait") == 0) {
    char line[64];
    printf("ready\n");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
      p.len = 2000;
      strcpy(p.from, "10.0.0.1");
      on_packet(&p);
      printf("fired\n");
      fflush(stdout);
    }
  }
  return 0;
}
"""
open(os.path.join(work, "net.c"), "w").write(prelude + c_example)
open(os.path.join(work, "app.c"), "w").write(prelude + c_example + main)
inc = os.path.join(src, "include")
link = f"-L{build} -lfxtrace -Wl,-rpath,{build}"
sh(f"cc -std=c11 -Wall -Werror -I{inc} -o app app.c {link}")
sh(f"cc -std=c11 -Wall -Werror -fPIC -shared -I{inc} -o libnet.so net.c {link}")


def events_of(fxt, want="net:rx"):
    r = sh(f"fxtrace stats {fxt}")
    if want not in r.stdout:
        fail(f"{fxt} holds no {want} event: {r.stdout}")


def start_app(fxtrace_env):
    """./app wait under FXTRACE, once it said ready (its events of the 16 packets fired)."""
    p = subprocess.Popen(["./app", "wait"], cwd=work, env=dict(env, FXTRACE=fxtrace_env),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    children.append(p)
    if p.stdout.readline() != "ready\n":
        fail("./app wait did not say ready")
    return p


def wait_socket(p):
    """Until the traced process serves live control (its socket), a bounded wait."""
    sock = os.path.join(ctl_dir, f"{p.pid}.sock")
    for _ in range(1200):
        if os.path.exists(sock):
            return
        if p.poll() is not None:
            break
        subprocess.run(["sleep", "0.05"])
    fail(f"no live-control socket {sock}")


def stop_app(p):
    p.stdin.close()
    if p.wait() != 0:
        fail(f"./app exited {p.returncode}")


def run_live(cmds):
    """The live-control block on ./app wait, traced with no events and no file."""
    p = start_app("events=;output=")
    wait_socket(p)
    pid = str(p.pid)
    for cmd in cmds:
        c = cmd.replace("PID", pid)
        if "trace_pipe" in c:  # streams: until the packet fired after it passes the filter
            cat = subprocess.Popen(["sh", "-c", "exec " + c], cwd=work, env=env, stdout=subprocess.PIPE,
                                   text=True)
            # a line that never comes (the filter refuses the packet) ends the read: not a hang
            watchdog = threading.Timer(60, cat.kill)
            watchdog.start()
            p.stdin.write("fire\n")
            p.stdin.flush()
            p.stdout.readline()
            lines = []  # net:* is on: the packet's scope, counter, then rx (the filter's)
            while not lines or ("rx:" not in lines[-1] and lines[-1] and len(lines) < 100):
                lines.append(cat.stdout.readline())
            if "len=2000 from=10.0.0.1" not in lines[-1]:
                fail(f"`{c}` printed {lines!r}")
            watchdog.cancel()
            cat.kill()
            cat.wait()
        else:
            r = sh(c)
            if c == "fxtrace ps" and pid not in r.stdout:
                fail(f"fxtrace ps does not list {pid}: {r.stdout}")
    stop_app(p)


def run_flight(cmds):
    """The flight recorder's block: ./app wait instead of ./app &, its pid for $!."""
    p = start_app(cmds[0].split("'")[1])
    wait_socket(p)
    for cmd in cmds[1:]:
        r = sh(cmd.replace("$!", str(p.pid)))
        if " cat " in cmd and "rx:" not in r.stdout:
            fail(f"`{cmd}` shows no net:rx event: {r.stdout[:500]}")
    events_of("now.fxt")
    stop_app(p)


def dead_session(output):
    """A session of ./app wait killed (SIGKILL) in the buffers directory of the test. With no
    output, a flight recorder's: its buffers keep every event (a session with no file but
    the live view's may have drained them, or not, when it dies)."""
    mode = "" if output else "mode=overwrite;"
    p = start_app(f"{mode}events=net:*;buffers={buffers};output={output}")
    p.kill()
    p.wait()
    return p.pid


def run_recover(cmd):
    dead_session(os.path.join(work, "F.fxt"))
    sh(cmd.replace("/dev/shm/fxtrace-$(id -u)", buffers))
    events_of("F.fxt")


def run_recover_one(cmd):
    pid = dead_session("")
    dirs = glob.glob(os.path.join(buffers, f"{pid}.*[0-9]"))
    if len(dirs) != 1:
        fail(f"no session directory of pid {pid} in {os.listdir(buffers)}")
        return
    sh(cmd.replace("/dev/shm/fxtrace-$(id -u)/4242.1", dirs[0]))
    events_of("full.fxt")


def kernel_ok():
    if shutil.which("trace-cmd") is None or os.geteuid() != 0:
        return "trace-cmd absent, or not root"
    if not os.path.exists("/sys/kernel/tracing/trace") and subprocess.run(
            ["mount", "-t", "tracefs", "nodev", "/sys/kernel/tracing"],
            capture_output=True).returncode:
        return "no tracefs at /sys/kernel/tracing, and it cannot be mounted"
    return None


ADAPT, SKIP, RUN = "adapt", "skip", "run"
live_cmds, flight_cmds = [], []
table = {
    "./scripts/demo": (SKIP, "the demo job itself: builds a tree of its own and records the demo "
                             "(demo_record_check runs the same recording)"),
    "./scripts/test": (SKIP, "the whole suite, this test among them"),
    "cmake -S . -B build && cmake --build build && cmake --install build":
        (SKIP, "a build of its own; install_consumers builds, installs and uses a plain tree"),
    "cmake -S . -B build -G Ninja && cmake --build build && cmake --install build --prefix /usr/local":
        (SKIP, "installs into /usr/local; install_consumers installs into a prefix of its own"),
    "cc app.c $(pkg-config --cflags --libs fxtrace)":
        (ADAPT, "the README's example as app.c, fxtrace.pc of a prefix installed by the test"),
    "FXTRACE='events=net:*;buffer_kb=512;output=run-%p.fxt' ./app": (RUN, None),
    "fxtrace record -e 'net:*' -o run.fxt -- ./app args...": (ADAPT, "args... is 'one two'"),
    "fxtrace record -e 'net:*' -o - -- ./app | fxtrace report -": (RUN, None),
    "fxtrace report run.fxt | head": (RUN, None),
    "fxtrace report --events 'net:*' --tid 42 --from +1.5 --filter 'len > 1000' run.fxt":
        (RUN, None),
    "fxtrace stats run.fxt": (RUN, None),
    "fxtrace list ./app libnet.so": (RUN, None),
    "fxtrace stats --durations [--by-thread] run.fxt":
        (ADAPT, "run without, then with the optional --by-thread"),
    "fxtrace hist -k common_pid,dur_ns.log2 -v dur_ns run.fxt": (RUN, None),
    "fxtrace convert run.fxt -o run.json": (RUN, None),
    "fxtrace convert run.fxt -o run.dat": (RUN, None),
    "trace-cmd record -C mono -e sched:sched_switch -e sched:sched_waking -- ./app":
        (RUN, "when trace-cmd can record the kernel here (root, tracefs), else skipped"),
    "fxtrace merge trace.dat run.fxt -o both.fxt": (RUN, "with the trace.dat above"),
    "fxtrace ps": (ADAPT, "./app wait traced, live"),
    "fxtrace write PID events/net/rx/filter 'len > 1000 && from ~ \"*.0.1\"'": (ADAPT, "PID: ./app wait"),
    "fxtrace write PID set_event 'net:*'": (ADAPT, "PID: ./app wait"),
    "fxtrace write PID events/net/rx/trigger 'traceoff:1 if len > 9000'": (ADAPT, "PID: ./app wait"),
    "fxtrace cat PID trace_pipe": (ADAPT, "PID: ./app wait; read until its first line, an event "
                                          "./app fires after the filter, then stopped"),
    "fxtrace mount -d PID /tmp/t && tail -f /tmp/t/trace_pipe":
        (SKIP, "FUSE, and tail -f never ends: live_control_fuse mounts the tree and reads "
               "trace_pipe with tail -f"),
    "fxtrace recover /dev/shm/fxtrace-$(id -u)":
        (ADAPT, "the test's own buffers directory, holding a session killed with SIGKILL"),
    "fxtrace recover /dev/shm/fxtrace-$(id -u)/4242.1 -o full.fxt":
        (ADAPT, "a session of the test's own buffers directory, killed with SIGKILL"),
    "FXTRACE='mode=overwrite;output=;trigger=/tmp/crash-%p.fxt' ./app &":
        (ADAPT, "./app wait (it stays), its stdin a pipe"),
    "fxtrace snapshot $! -o now.fxt": (ADAPT, "$!: ./app wait's pid"),
    "fxtrace cat $! trace": (ADAPT, "$!: ./app wait's pid"),
    "fxtrace cat -n $! trace_pipe": (ADAPT, "$!: ./app wait's pid"),
}
for c in commands:
    if c not in table:
        fail(f"README shows `{c}`, which this test does not know: add it to its table")
for c in table:
    if c not in commands:
        fail(f"README no longer shows `{c}`: remove it from the table")

try:
    kernel_skip = kernel_ok()
    for c in commands:
        how, why = table.get(c, (SKIP, "unknown"))
        if how == SKIP:
            print(f"skipped: `{c}`: {why}")
            continue
        print(f"{'adapted' if how == ADAPT else 'run'}: `{c}`" + (f" ({why})" if why else ""))
        if c.startswith("FXTRACE='events=net:*"):
            sh(c)
            files = glob.glob(os.path.join(work, "run-*.fxt"))
            if len(files) != 1:
                fail(f"`{c}` wrote {files}")
            else:
                events_of(files[0])
        elif "args..." in c:
            sh(c.replace("args...", "one two"))
            events_of("run.fxt")
        elif "[--by-thread]" in c:
            sh(c.replace(" [--by-thread]", ""))
            sh(c.replace("[--by-thread]", "--by-thread"))
        elif c.startswith("cc app.c"):
            prefix = os.path.join(work, "prefix")
            sh(f"cmake --install {build} --prefix {prefix} >/dev/null")
            pc = env.copy()
            pc["PKG_CONFIG_PATH"] = glob.glob(os.path.join(prefix, "lib*", "pkgconfig"))[0] + \
                ":" + glob.glob(os.path.join(prefix, "lib*", "*", "pkgconfig"))[0] \
                if glob.glob(os.path.join(prefix, "lib*", "*", "pkgconfig")) else \
                glob.glob(os.path.join(prefix, "lib*", "pkgconfig"))[0]
            sh(c + " -Wl,-rpath,$(pkg-config --variable=libdir fxtrace) -o app_pc", env=pc)
            sh("./app_pc")
        elif c.startswith("trace-cmd"):
            r = sh(c, ok=False) if not kernel_skip else None
            if r is not None and r.returncode != 0 and "not permitted" in r.stderr:
                kernel_skip = "trace-cmd may not record the kernel here: " + r.stderr.strip()
            elif r is not None and r.returncode != 0:
                fail(f"`{c}` exited {r.returncode}: {r.stderr}")
            if kernel_skip:
                print(f"skipped: `{c}`: {kernel_skip}")
        elif c.startswith("fxtrace merge"):
            if kernel_skip:
                print(f"skipped: `{c}`: {kernel_skip}")
                continue
            sh(c)
            events_of("both.fxt")
        elif c == "fxtrace ps" or "PID" in c:
            live_cmds.append(c)
            if len(live_cmds) == sum(1 for x in commands if x == "fxtrace ps" or
                                     ("PID" in x and table.get(x, (SKIP,))[0] != SKIP)):
                run_live(live_cmds)
        elif c.startswith("fxtrace recover") and "4242" in c:
            run_recover_one(c)
        elif c.startswith("fxtrace recover"):
            run_recover(c)
        elif "$!" in c or c.endswith("&"):
            flight_cmds.append(c)
            if len(flight_cmds) == sum(1 for x in commands if "$!" in x or x.endswith("&")):
                run_flight(flight_cmds)
        else:
            r = sh(c)
            if c.startswith("fxtrace list") and "net:rx" not in r.stdout:
                fail(f"`{c}` does not list net:rx: {r.stdout}")
            if c.startswith("fxtrace convert"):
                out = c.split()[-1]
                if not os.path.getsize(os.path.join(work, out)):
                    fail(f"`{c}` wrote nothing")
finally:
    for p in children:
        if p.poll() is None:
            p.kill()
            p.wait()
    shutil.rmtree(ctl_dir, ignore_errors=True)
print(f"{len(commands)} README commands, {len(failures)} failures")
sys.exit(1 if failures else 0)
