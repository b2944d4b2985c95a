#!/bin/sh
# What the session and the tools say when something fails (issue 13, item 8): the system's
# reason, never a misleading one, and a non-zero exit when a tool's output fails.
#  - output in a directory that does not exist: "No such file or directory" (not "invalid
#    argument");
#  - buffers=DIR that others may write in (0777, not sticky), also through a symbolic link:
#    refused, saying why; a sticky one (/tmp) is used;
#  - total_kb that leaves threads without a buffer: said once;
#  - RLIMIT_AS about 1.1 GB: the reservation shrinks to a quarter of it, said, and the
#    program runs (skipped where the program cannot run under such a limit at all: ASan);
#  - `fxtrace stats`, `check`, `report`, `--help` to /dev/full: said, exit 1;
#  - a file without events converts to trace.dat.
#   messages.sh FXTRACE DEMO WORKDIR
. "$(dirname "$0")/common.sh"
demo=$image
run() { # FXTRACE value, then the demo's stderr in $work/err (its exit status ignored)
  FXTRACE="$1" "$demo" --duration 0.1 >/dev/null 2>"$work/err" || true
}

run "events=demo:*;output=$work/no/such/dir/x.fxt"
grep -q "x.fxt: No such file or directory" "$work/err" || { cat "$work/err"; fail "output ENOENT"; }
if grep -q "invalid argument" "$work/err"; then cat "$work/err"; fail "invalid argument said"; fi

mkdir -p "$work/open"
chmod 0777 "$work/open"
ln -s "$work/open" "$work/link"
for d in open link; do
  run "events=demo:*;buffers=$work/$d;output=$work/b.fxt"
  grep -q "buffers directory $work/$d: mode 0777 lets others write in it and is not sticky: refused" \
    "$work/err" || { cat "$work/err"; fail "buffers=$d accepted"; }
done
run "events=demo:*;buffers=/tmp;output=$work/b.fxt"
if grep -q "buffers directory" "$work/err"; then cat "$work/err"; fail "buffers=/tmp refused"; fi
"$fxtrace" check "$work/b.fxt" >/dev/null || fail "buffers=/tmp: no valid output"

run "events=demo:*;buffer_kb=64;total_kb=128;output=$work/cap.fxt"
[ "$(grep -c "got no buffer: the 1 buffers total_kb=128 allows are in use" "$work/err")" -eq 1 ] ||
  { cat "$work/err"; fail "no buffer: not said once"; }

if (ulimit -v 1100000; "$demo" --duration 0.1 >/dev/null 2>&1); then
  (ulimit -v 1100000; FXTRACE="events=demo:*;output=$work/as.fxt" "$demo" --duration 0.1 \
     >/dev/null 2>"$work/err") || { cat "$work/err"; fail "RLIMIT_AS: the program failed"; }
  grep -q "fxtrace: RLIMIT_AS is 1074 MiB: the buffers reserve 268 MiB of it" "$work/err" ||
    { cat "$work/err"; fail "RLIMIT_AS: not said"; }
  "$fxtrace" check "$work/as.fxt" >/dev/null || fail "RLIMIT_AS: no valid output"
else
  echo "RLIMIT_AS: skipped (the program does not run under 1.1 GB of address space here)"
fi

"$fxtrace" convert -q "$work/b.fxt" -o "$work/b.json"
for c in stats check report; do
  rc=0
  "$fxtrace" $c "$work/b.fxt" >/dev/full 2>"$work/err" || rc=$?
  [ "$rc" -eq 1 ] && grep -q "fxtrace $c: writing standard output: No space left on device" \
    "$work/err" || { cat "$work/err"; fail "$c >/dev/full: exit $rc"; }
done
rc=0
"$fxtrace" --help >/dev/full 2>"$work/err" || rc=$?
[ "$rc" -eq 1 ] && grep -q "No space left" "$work/err" || fail "--help >/dev/full: exit $rc"

run "events=nothing:matches;output=$work/empty.fxt"
"$fxtrace" convert -q "$work/empty.fxt" -o "$work/empty.dat" || fail "no events to .dat"
[ -s "$work/empty.dat" ] || fail "no events to .dat: empty output"
echo "ok"
