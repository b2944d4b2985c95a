#!/bin/sh
# `fxtrace record` of processes that end without stopping their session (_exit, abort) and no
# traced parent harvests: record writes their traces from their buffers before the merge, so
# the summary counts every event emitted, and no session directory of theirs is left in the
# buffers directory.
#   record_harvest.sh FXTRACE_BIN TEST_HARVEST_BIN WORKDIR
. "$(dirname "$0")/common.sh"
shm=/dev/shm/fxtrace-$(id -u)

# One process, _exit: its 5 events.
"$fxtrace" record -e 't:seq' -o "$work/one.fxt" -- "$image" image 5 _exit \
  >"$work/one.log" 2>"$work/one.err" || { cat "$work/one.log" "$work/one.err"; echo "FAIL: record"; exit 1; }
cat "$work/one.log" "$work/one.err"
# The summary is on stderr: stdout is the program's.
grep -q "recorded 5 events from 1 process (1 thread)" "$work/one.err" ||
  { echo "FAIL: expected 5 events"; exit 1; }
grep -q "0 dropped, 0 overrun, 0 lost" "$work/one.err" || { echo "FAIL: losses"; exit 1; }
grep -q "ended without stopping its session" "$work/one.err" || { echo "FAIL: not said"; exit 1; }

# A tree: a shell that runs three images, ending by _exit, a clean exit and abort.
if "$fxtrace" record -e 't:seq' -o "$work/tree.fxt" -- sh -c \
  "'$image' image 5 _exit; '$image' image 3 exit; exec '$image' image 2 abort" \
  >"$work/tree.log" 2>"$work/tree.err"; then
  echo "FAIL: record of an aborting command exited 0"; exit 1
fi
cat "$work/tree.log" "$work/tree.err"
grep -q "recorded 10 events from 3 processes (3 threads)" "$work/tree.err" ||
  { echo "FAIL: expected 10 events from 3 processes"; exit 1; }
# (The _exit image's session may hold nothing to recover when its consumer kept up: the next
# image's clean-up then removes it before record looks; the abort's records are mid-file.)
grep -q "ended without stopping its session" "$work/tree.err" || { echo "FAIL: not said"; exit 1; }

# No directory of the harvested processes is left.
for pid in $(sed -n 's/.*: pid \([0-9]*\) ended without stopping.*/\1/p' "$work/one.err" "$work/tree.err"); do
  if ls -d "$shm/$pid".* 2>/dev/null; then
    echo "FAIL: $shm/$pid.* left behind"; exit 1
  fi
done
rm -rf "$work"
