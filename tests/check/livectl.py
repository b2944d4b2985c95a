"""A traced program under live control for the check scripts (adhoc_hist_live.py,
demo_triggers.py): started with its own runtime directory (FXTRACE_DIR, short for the socket's
path), its socket waited for, the tool run on it, a failure (or the script's exit, however)
that kills it and cleans up."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time


class Prog:
    def __init__(self, fxtrace, argv, env=None, **popen):
        self.fxtrace = fxtrace
        self.rt = tempfile.mkdtemp(prefix="fxlc.")
        os.rmdir(self.rt)  # the program creates it, 0700
        self.env = dict(os.environ, FXTRACE_DIR=self.rt, **(env or {}))
        self.p = subprocess.Popen(argv, env=self.env, **popen)
        atexit.register(self.kill)  # a script that dies leaves no program running
        sock = os.path.join(self.rt, "%d.sock" % self.p.pid)
        self.until(lambda: os.path.exists(sock), "control socket %s" % sock, 20)

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        self.clean()

    def fail(self, msg):
        print("FAIL: " + msg)
        self.kill()
        sys.exit(1)

    def clean(self):
        shutil.rmtree(self.rt, ignore_errors=True)

    def tool(self, *args):
        """fxtrace's standard output; it failing fails the test."""
        r = subprocess.run([self.fxtrace] + [str(a) for a in args], capture_output=True,
                           text=True, env=self.env)
        if r.returncode != 0:
            self.fail("fxtrace %s: %d %s" % (" ".join(map(str, args)), r.returncode, r.stderr))
        return r.stdout

    def until(self, cond, what, seconds=240):
        end = time.monotonic() + seconds
        while not cond():
            if self.p.poll() is not None:
                self.fail("the program exited while waiting for " + what)
            if time.monotonic() > end:
                self.fail("no %s after %d s" % (what, seconds))
            time.sleep(0.05)
