#!/bin/sh
# Two suites at once on one buffers directory (the default, /dev/shm/fxtrace-<uid>, which every
# program of the user shares): each runs `fxtrace record` of images that end by _exit, abort
# and a clean exit, several times over, while the other does the same; every record counts
# exactly the events its image emitted (no session of one suite is removed or harvested by
# the other: each session's lock protects it while it lives, and `record` harvests only the
# sessions whose output is in its own directory).
#   two_suites.sh FXTRACE_BIN TEST_HARVEST_BIN WORKDIR
. "$(dirname "$0")/common.sh"

suite() { # NAME: 4 rounds of three endings; prints FAIL lines
  for round in 1 2 3 4; do
    for end in _exit abort exit; do
      log="$work/$1.$round.$end.log"
      "$fxtrace" record -e 't:seq' -o "$work/$1.$round.$end.fxt" -- "$image" image 300 "$end" \
        >"$log" 2>&1 || true
      grep -q "recorded 300 events from 1 process (1 thread) .*; 0 dropped, 0 overrun, 0 lost" \
        "$log" || { echo "FAIL: suite $1 round $round $end:"; cat "$log"; }
    done
  done
}

suite a >"$work/a.out" 2>&1 &
a=$!
suite b >"$work/b.out" 2>&1 &
b=$!
wait $a
wait $b
if grep -q FAIL "$work/a.out" "$work/b.out"; then
  cat "$work/a.out" "$work/b.out"
  exit 1
fi
rm -rf "$work"
