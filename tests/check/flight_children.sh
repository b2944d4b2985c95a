#!/bin/sh
# Dead children of sessions with no output file of their own: a flight recorder (mode=overwrite,
# output=) and a trace to stdout, traced with FXTRACE alone; and `fxtrace record -m overwrite`.
# A child of fork emits N events and is killed with SIGKILL (or _exits): the parent's session
# harvests it at its stop into a file in the child's session directory's place (said on
# stderr), so the child's events + counted losses == N, in that file plus what its consumer
# had written to stdout; an overwrite session with an output file harvests into the child's
# file; record counts every event of the tree.
#   flight_children.sh FXTRACE_BIN TEST_HARVEST_BIN WORKDIR
set -eu
fxtrace=$1
image=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
shm=$(mktemp -d /dev/shm/fxtrace-test-flight.XXXXXX)
trap 'rm -rf "$shm"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
N=500

# events + dropped + overrun + lost of process PID in the FXT files given, summed.
of_pid() {
  pid=$1
  shift
  total=0
  for f in "$@"; do
    n=$("$fxtrace" stats "$f" | awk -v p="$pid" '$1 == p && NF == 7 { s += $4 + $5 + $6 + $7 }
                                                 END { print s + 0 }') || fail "fxtrace stats $f"
    total=$((total + n))
  done
  echo $total
}

# parent FXTRACE_REST END [FLUSH]: the image forks a child that ends by END (after a flush
# every FLUSH events); sets child.
parent() {
  FXTRACE="events=t:seq;buffers=$shm;$1" "$image" image $N "fork:$2" ${3:-} >"$work/p.out" \
    2>"$work/p.err" || { cat "$work/p.err"; fail "$1 fork:$2: the parent failed"; }
  child=$(sed -n 's/^child \([0-9]*\)$/\1/p' "$work/p.err")
  [ -n "$child" ] || { cat "$work/p.err"; fail "$1 fork:$2: no child"; }
}

said() { # FILE WHY: the parent said it harvested the child into FILE
  grep -q ": pid $child ended without stopping its session: its trace is in $1 $2" "$work/p.err" ||
    { cat "$work/p.err"; fail "$case: the harvest of pid $child into $1 not said"; }
}

for end in kill _exit; do
  # A flight recorder: the child's trace goes in its directory's place.
  case="flight recorder, child $end"
  parent "mode=overwrite;output=" $end
  said "$shm/$child.1.fxt" "(it had no output file)"
  got=$(of_pid "$child" "$shm/$child.1.fxt")
  echo "$case: $got"
  [ "$got" -eq $N ] || fail "$case: $got events and losses, $N emitted"
  rm "$shm/$child.1.fxt"
  [ -z "$(ls "$shm")" ] || { ls "$shm"; fail "$case: left behind"; }

  # Overwrite mode with an output file: the child's own file.
  case="overwrite with a file, child $end"
  parent "mode=overwrite;output=$work/ow.fxt" $end
  got=$(of_pid "$child" "$work/ow.fxt.$child")
  echo "$case: $got"
  [ "$got" -eq $N ] || fail "$case: $got events and losses, $N emitted"
  [ -z "$(ls "$shm")" ] || { ls "$shm"; fail "$case: left behind"; }

  # stdout: what the child's consumer had not written goes in its directory's place. The
  # child flushes half way, so that its consumer is between passes when it ends: a consumer
  # killed inside its write to a shared stdout leaves a chunk the harvest cannot tell written
  # from not (a file of its own it can measure): it is taken from the buffers again, twice in
  # all (known; 2 of 8 runs when the consumer's first pass came at once).
  case="stdout, child $end"
  parent "output=-" $end $((N / 2))
  cp "$work/p.out" "$work/stdout.fxt"
  said "$shm/$child.1.fxt" "(its output was stdout)"
  got=$(of_pid "$child" "$work/stdout.fxt" "$shm/$child.1.fxt")
  echo "$case: $got"
  [ "$got" -eq $N ] || fail "$case: $got events and losses, $N emitted"
  rm -f "$shm/$child.1.fxt"
done

# `fxtrace record -m overwrite`: a process that kills itself, and a tree whose child does.
"$fxtrace" record -m overwrite -e 't:seq' -o "$work/r1.fxt" -- "$image" image $N kill \
  >"$work/r1.log" 2>&1 || true
grep -q "recorded $N events from 1 process (1 thread) .*; 0 dropped, 0 overrun, 0 lost" \
  "$work/r1.log" || { cat "$work/r1.log"; fail "record -m overwrite of a killed process"; }
"$fxtrace" record -m overwrite -e 't:seq' -o "$work/r2.fxt" -- "$image" image $N fork:kill \
  >"$work/r2.log" 2>&1 || { cat "$work/r2.log"; fail "record -m overwrite of a tree"; }
grep -q "recorded $((2 * N)) events from 2 processes (2 threads) .*; 0 dropped, 0 overrun, 0 lost" \
  "$work/r2.log" || { cat "$work/r2.log"; fail "record -m overwrite of a tree: not every event"; }
echo "record -m overwrite: $(grep recorded "$work/r1.log"); $(grep recorded "$work/r2.log")"
rm -rf "$work"
