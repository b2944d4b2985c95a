#!/bin/sh
# A session whose output fails (issue 13, item 2): the file keeps every record written before
# the failure, readable by every reader, and what could not be written is counted.
#  - RLIMIT_FSIZE of 1 MiB (SIGXFSZ ignored: write(2) fails with EFBIG), gen_events N: stderr
#    says where writing stopped and how many records were not written; the file ends on a
#    record boundary; `fxtrace check` passes; events in the file + the count = N, exactly;
#    when the file could take the last small record, `fxtrace stats` shows the count as lost
#    (thread 0);
#  - the same on a 1 MiB tmpfs (No space left on device), as root where mount works (else said
#    and skipped);
#  - a torn tail (the file cut inside a record): report, stats, check and convert read what
#    precedes it, warn with its offset and exit 0; with --strict they exit 1.
#   full_output.sh FXTRACE GEN_EVENTS WORKDIR
. "$(dirname "$0")/common.sh"
gen=$image
n=200000 # about 4.4 MB of FXT

# stats' "total: E events, ... L lost" -> "E L"
totals() { "$fxtrace" stats "$1" | sed -n 's/^total: \([0-9]*\) events.* \([0-9]*\) lost$/\1 \2/p'; }

# $1 name, $2 file: the session's stderr is $work/$1.err
expect_stopped() {
  err=$work/$1.err
  grep -q "write failed at byte [0-9]*: .*; stopped writing there: [0-9]* records not written" \
    "$err" || { cat "$err"; fail "$1: no write-failure message with a count"; }
  at=$(sed -n 's/.*write failed at byte \([0-9]*\): .*/\1/p' "$err")
  unwritten=$(sed -n 's/.*stopped writing there: \([0-9]*\) records not written.*/\1/p' "$err")
  "$fxtrace" check "$2" >"$work/$1.check" 2>&1 || { cat "$work/$1.check"; fail "$1: check"; }
  grep -q "warning" "$work/$1.check" && { cat "$work/$1.check"; fail "$1: torn tail left"; }
  set -- "$1" "$2" $(totals "$2")
  events=$3 lost=$4
  [ $((events + unwritten)) -eq $n ] ||
    fail "$1: $events events in the file + $unwritten not written != $n"
  if grep -q "counted in the file as lost" "$err"; then
    [ "$lost" -eq "$unwritten" ] || fail "$1: stats lost $lost, $unwritten not written"
  else
    [ "$lost" -eq 0 ] || fail "$1: lost $lost without the final record"
  fi
  size=$(wc -c <"$2")
  [ "$size" -ge "$at" ] || fail "$1: file of $size bytes, failure at $at"
  echo "$1: ok: stopped at byte $at of a $size-byte file; $events events + $unwritten not" \
    "written = $n ($(grep -o '(counted[^)]*)\|(not counted[^)]*)' "$err"))"
}

# RLIMIT_FSIZE (dash's ulimit -f counts 512-byte blocks); SIGXFSZ ignored across exec.
(trap '' XFSZ; ulimit -f 2048; exec "$gen" $n "$work/fsize.fxt") 2>"$work/fsize.err" ||
  { cat "$work/fsize.err"; fail "fsize: gen_events failed"; }
expect_stopped fsize "$work/fsize.fxt"

# A full tmpfs, as root.
mkdir -p "$work/tmpfs"
if mount -t tmpfs -o size=1m none "$work/tmpfs" 2>/dev/null; then
  rc=0
  "$gen" $n "$work/tmpfs/full.fxt" 2>"$work/tmpfs.err" || rc=$?
  cp "$work/tmpfs/full.fxt" "$work/full.fxt"
  rm "$work/tmpfs/full.fxt"
  # stdout on the full tmpfs, appended to a file that holds a line before the trace (the
  # shell's, a parent's): the file is never cut back, so the line and every whole record
  # stay, and the count of what was not written is exact.
  printf 'a line before\n' >"$work/tmpfs/shared.out"
  rc2=0
  "$gen" $n - >>"$work/tmpfs/shared.out" 2>"$work/shared.err" || rc2=$?
  head -c 14 "$work/tmpfs/shared.out" >"$work/shared.head"
  tail -c +15 "$work/tmpfs/shared.out" >"$work/shared.fxt"
  umount "$work/tmpfs"
  [ "$rc" -eq 0 ] || { cat "$work/tmpfs.err"; fail "tmpfs: gen_events exited $rc"; }
  grep -q "No space left on device" "$work/tmpfs.err" || { cat "$work/tmpfs.err"; fail "tmpfs: reason"; }
  expect_stopped tmpfs "$work/full.fxt"
  [ "$rc2" -eq 0 ] || { cat "$work/shared.err"; fail "shared stdout: gen_events exited $rc2"; }
  [ "$(cat "$work/shared.head")" = "a line before" ] || fail "shared stdout: the line is gone"
  grep -q "write failed at byte [0-9]*: No space left on device; stopped writing there: [0-9]* records not written" \
    "$work/shared.err" || { cat "$work/shared.err"; fail "shared stdout: no write-failure message"; }
  unwritten=$(sed -n 's/.*stopped writing there: \([0-9]*\) records not written.*/\1/p' "$work/shared.err")
  set -- $(totals "$work/shared.fxt")
  [ $# -eq 2 ] || fail "shared stdout: stats cannot read the trace after the line"
  [ $(($1 + unwritten)) -eq $n ] ||
    fail "shared stdout: $1 events in the file + $unwritten not written != $n"
  echo "shared stdout: ok: $1 events + $unwritten not written = $n, the line before kept"
else
  echo "tmpfs: skipped (mounting a tmpfs needs root)"
fi

# A torn tail: the whole file of a session without a limit, cut inside its last record.
"$gen" 4096 "$work/whole.fxt"
size=$(wc -c <"$work/whole.fxt")
head -c $((size - 3)) "$work/whole.fxt" >"$work/torn.fxt"
for cmd in report stats check; do
  rc=0
  "$fxtrace" $cmd "$work/torn.fxt" >"$work/torn.$cmd" 2>"$work/torn.$cmd.err" || rc=$?
  [ "$rc" -eq 0 ] || { cat "$work/torn.$cmd" "$work/torn.$cmd.err"; fail "torn: $cmd exited $rc"; }
  grep -q "^fxtrace $cmd: $work/torn.fxt: offset [0-9]*: warning: the file ends inside a record" \
    "$work/torn.$cmd.err" || { cat "$work/torn.$cmd.err"; fail "torn: $cmd warning"; }
  rc=0
  "$fxtrace" $cmd --strict "$work/torn.fxt" >/dev/null 2>&1 || rc=$?
  [ "$rc" -eq 1 ] || fail "torn: $cmd --strict exited $rc"
done
[ "$(wc -l <"$work/torn.report")" -eq 4096 ] || fail "torn: report lines"
set -- $(totals "$work/torn.fxt")
[ "$1" -eq 4096 ] || fail "torn: stats counts $1 events"
"$fxtrace" convert -q "$work/torn.fxt" -o "$work/torn.json" 2>/dev/null || fail "torn: convert"
echo "torn tail: ok"
