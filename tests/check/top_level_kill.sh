#!/bin/sh
# A top-level process traced with FXTRACE alone (no traced parent, no `fxtrace record`) emits N
# events and kills itself with SIGKILL: its buffers stay in the buffers directory. The next
# fxtrace process of the user that looks there (a traced program's session start, `fxtrace
# recover BUFFERS_DIR`, `fxtrace ps`, `fxtrace record`) completes the dead session's own
# output and says so on stderr (pid, file, records): then events + counted losses in it == N,
# exactly. With flushes (the consumer wrote part of it: the file held fewer before) and
# without, with and without drops; an output replaced meanwhile is left alone (the rest goes
# beside it); an output to stdout goes in the session directory's place (a consumer killed
# inside its write to it too: counted once when the harvester's stdout is the same file, else
# said to be maybe twice); two processes racing
# to harvest write it once; a live session is never touched.
#   top_level_kill.sh FXTRACE_BIN TEST_HARVEST_BIN WORKDIR
. "$(dirname "$0")/common.sh"
scratch_buffers toplevel

# events + dropped + overrun + lost of the FXT files given, summed.
counted() {
  total=0
  for f in "$@"; do
    line=$("$fxtrace" stats "$f" | grep '^total:') || fail "fxtrace stats $f"
    n=$(echo "$line" | sed -n 's/^total: \([0-9]*\) events.*; \([0-9]*\) dropped, \([0-9]*\) overrun, \([0-9]*\) lost$/\1 + \2 + \3 + \4/p')
    [ -n "$n" ] || fail "cannot read: $line"
    total=$((total + $n))
  done
  echo $total
}

# killed N FLUSH KB OUTPUT [BUFFERS]: runs the image, traced, until it kills itself; sets pid.
killed() {
  FXTRACE="events=t:seq;buffers=${5-$shm};buffer_kb=$3;output=$4" "$image" image "$1" kill "$2" \
    >"$work/killed.out" 2>"$work/killed.err" &
  pid=$!
  st=0
  wait $pid || st=$?
  [ $st -eq 137 ] || { cat "$work/killed.err"; fail "the image exited $st, not by SIGKILL"; }
  # In the user's default directory (BUFFERS given), any other traced program of the user
  # may harvest the dead session before this looks (the rest of the suite, other work on the
  # machine): harvested says so, and the output is checked all the same. Looked at once: a
  # harvest under way between two looks took the directory away after the first (seen in CI).
  # A harvester renames the output into place before it removes the directory.
  harvested=0
  if ls -d "${5-$shm}/$pid".* >/dev/null 2>&1; then
    return
  fi
  if [ -n "${5-}" ] && [ -s "$4" ]; then
    harvested=1
    return
  fi
  cat "$work/killed.err"
  ls -la "${5-$shm}"
  fail "no session directory of pid $pid"
}

# later ERRFILE: a traced process that starts in the same buffers directory.
later() {
  FXTRACE="events=t:seq;buffers=$shm;output=$work/later.fxt" "$image" image 0 exit 2>"$1" ||
    fail "the later process"
}

said() { # ERRFILE FILE: the harvest of pid into FILE is said, once
  n=$(grep -c ": pid $pid ended without stopping its session: its trace is in $2 .*records" "$1") || true
  [ "$n" = 1 ] || { cat "$1"; fail "round $round: the harvest of pid $pid into $2 said $n times"; }
}

gone() {
  if ls -d "$shm/$pid".* 2>/dev/null | grep -v '\.fxt$'; then fail "round $round: left behind"; fi
}

# 1-4: the later process is a traced program's session start.
round=0
for spec in "2000 0 4096" "2000 300 4096" "50000 0 16" "50000 999 16"; do
  round=$((round + 1))
  set -- $spec
  out="$work/r$round.fxt"
  killed "$1" "$2" "$3" "$out"
  before=0
  [ -s "$out" ] && before=$(counted "$out")
  [ "$before" -lt "$1" ] || fail "round $round: nothing was left to harvest ($before of $1)"
  if [ "$2" != 0 ]; then [ "$before" -gt 0 ] || fail "round $round: the flushes wrote nothing"; fi
  later "$work/later.err"
  said "$work/later.err" "$out"
  gone
  got=$(counted "$out")
  echo "round $round: N=$1 flush=$2 buffer_kb=$3: $before counted before, $got after"
  [ "$got" -eq "$1" ] || fail "round $round: $got events and losses, $1 emitted"
done

# 5: the output was replaced after the death: the other file is left as it is, the trace
# goes beside it; with the part the consumer wrote (moved away), all N.
round=5
out="$work/r5.fxt"
killed 2000 300 4096 "$out"
mv "$out" "$out.moved"
echo "not a trace" >"$out"
later "$work/later.err"
said "$work/later.err" "$out.$pid.recovered.fxt"
gone
[ "$(cat "$out")" = "not a trace" ] || fail "round 5: the file now at the output path was written"
got=$(counted "$out.moved" "$out.$pid.recovered.fxt")
echo "round 5: replaced output: $got"
[ "$got" -eq 2000 ] || fail "round 5: $got events and losses, 2000 emitted"

# 6: output to stdout: what the consumer had not written goes in the session directory's place.
round=6
killed 2000 300 4096 fd:1
cp "$work/killed.out" "$work/r6.stdout.fxt"
sdir=$(ls -d "$shm/$pid".*)
later "$work/later.err"
said "$work/later.err" "$sdir.fxt"
got=$(counted "$work/r6.stdout.fxt" "$sdir.fxt")
echo "round 6: stdout: $got"
[ "$got" -eq 2000 ] || fail "round 6: $got events and losses, 2000 emitted"
rm -f "$sdir.fxt"

# 6b: output to stdout, N events, then the consumer killed inside its write of them
# (FXTRACE_TEST_DIE_IN_WRITE), after the write returned or before it; stdout opened to
# truncate or to append; a flight recorder's ring of 4 KiB that overwrote most of them (the
# write's records are counted as they stand in stdout). The later process's stdout is the
# same file: it reads the write back where it was going, and counts it once. Its stdout
# another file: it cannot tell, takes the events again, and says they may be counted twice.
for spec in "after > 300" "before > 300" "after >> 300" "before >> 300" "after other 300" \
  "after > 3000 mode=overwrite;buffer_kb=4" "before >> 3000 mode=overwrite;buffer_kb=4"; do
  set -- $spec
  ne=$3
  round="6b ($1, $2, $ne${4:+, $4})"
  : >"$work/r6b.out"
  st=0
  if [ "$2" = ">>" ]; then
    FXTRACE="events=t:seq;buffers=$shm;output=fd:1;${4:-}" FXTRACE_TEST_DIE_IN_WRITE=$1 "$image" \
      image $ne kill $ne >>"$work/r6b.out" 2>"$work/killed.err" || st=$?
  else
    FXTRACE="events=t:seq;buffers=$shm;output=fd:1;${4:-}" FXTRACE_TEST_DIE_IN_WRITE=$1 "$image" \
      image $ne kill $ne >"$work/r6b.out" 2>"$work/killed.err" || st=$?
  fi
  [ $st -eq 137 ] || { cat "$work/killed.err"; fail "round $round: the image exited $st"; }
  # Where the write it died in went (the hook says), and what stdout holds at the death.
  w=$(sed -n 's/^fxtrace test: killed in a write of \([0-9]*\) bytes at offset \([0-9]*\)$/\1 \2/p' \
    "$work/killed.err")
  [ -n "$w" ] || { cat "$work/killed.err"; fail "round $round: not killed in a write"; }
  wlen=${w% *}
  woff=${w#* }
  size=$(stat -c %s "$work/r6b.out")
  sdir=$(ls -d "$shm"/*.* | grep -v '\.fxt$')
  pid=$(basename "$sdir" | cut -d. -f1)
  if [ "$2" = other ]; then
    later "$work/later.err" >"$work/r6b.other"
  else
    later "$work/later.err" >>"$work/r6b.out"
  fi
  said "$work/later.err" "$sdir.fxt"
  in_stdout=$(counted "$work/r6b.out")
  got=$(counted "$work/r6b.out" "$sdir.fxt")
  echo "round $round: $got ($in_stdout in stdout: $size bytes at the death, the write $wlen at $woff)"
  if [ "$2" = other ]; then
    grep -q "pid $pid died inside a write of [0-9]* bytes to stdout.* may be counted twice" \
      "$work/later.err" || { cat "$work/later.err"; fail "round $round: not said"; }
    # All of them once, and the records of the write it died in (all of them unless a pass a
    # full ring or the timer woke wrote some before) a second time.
    [ "$got" -gt $ne ] && [ "$got" -le $((2 * ne)) ] ||
      fail "round $round: $got events and losses: not $ne and up to $ne again"
  else
    if grep -q "counted twice\|damage" "$work/later.err"; then
      cat "$work/later.err"
      fail "round $round: said"
    fi
    [ "$got" -eq $ne ] || fail "round $round: $got events and losses, $ne emitted"
    # The write it died in landed whole (after) or not at all (before), and nothing after it;
    # passes a full ring or the timer woke may have written before it.
    if [ $1 = after ]; then want=$((woff + wlen)); else want=$woff; fi
    [ "$size" -eq $want ] ||
      fail "round $round: stdout had $size bytes at the death, not $want (a write of $wlen at $woff)"
  fi
  rm -f "$sdir.fxt"
done

# 7: `fxtrace recover BUFFERS_DIR` (the listing) harvests too.
round=7
out="$work/r7.fxt"
killed 3000 0 4096 "$out"
"$fxtrace" recover "$shm" 2>"$work/recover.err" || { cat "$work/recover.err"; fail "recover listing"; }
said "$work/recover.err" "$out"
gone
[ "$(counted "$out")" -eq 3000 ] || fail "round 7: not 3000"

# 8: two later processes race: one harvests, once.
round=8
out="$work/r8.fxt"
killed 50000 0 16 "$out"
later "$work/race1.err" &
a=$!
later "$work/race2.err"
wait $a
cat "$work/race1.err" "$work/race2.err" >"$work/race.err"
said "$work/race.err" "$out"
gone
[ "$(counted "$out")" -eq 50000 ] || fail "round 8: not 50000"

# 9: a live session (its process waits on a pipe) is not touched by the later process.
round=9
mkfifo "$work/hold"
FXTRACE="events=t:seq;buffers=$shm;output=$work/r9.fxt" "$image" image 500 hold <"$work/hold" \
  2>"$work/r9.err" &
live=$!
exec 3>"$work/hold"
for i in $(seq 100); do ls -d "$shm/$live".* >/dev/null 2>&1 && break; sleep 0.05; done
ls -d "$shm/$live".* >/dev/null 2>&1 || fail "round 9: no session of the live process"
later "$work/later.err"
grep -q "pid $live " "$work/later.err" && fail "round 9: the live session was harvested"
ls -d "$shm/$live".* >/dev/null 2>&1 || fail "round 9: the live session's directory went"
exec 3>&-
wait $live || fail "round 9: the live process"
[ "$(counted "$work/r9.fxt")" -eq 500 ] || fail "round 9: not 500"

# 10-11: in the default buffers directory, `fxtrace ps` and `fxtrace record` harvest too (the
# message is not checked: any other program of the user may be first).
for who in ps record; do
  round=$((round + 1))
  out="$work/r$round.fxt"
  killed 3000 0 4096 "$out" "/dev/shm/fxtrace-$(id -u)"
  # The directory is shared with every other program of the user (the rest of the suite runs
  # beside this test): one that holds the dead session's lock for a moment when this sweep
  # comes makes it pass the session by, so the same command sweeps again, a few times.
  for try in $(seq 20); do
    [ $harvested = 0 ] || break
    if [ $who = ps ]; then
      "$fxtrace" ps >/dev/null 2>"$work/$who.err" || fail "fxtrace ps"
    else
      "$fxtrace" record -o "$work/rec.fxt" -- true >/dev/null 2>"$work/$who.err" || true
    fi
    ls -d "/dev/shm/fxtrace-$(id -u)/$pid".* >/dev/null 2>&1 || break
    sleep 0.1
  done
  if ls -d "/dev/shm/fxtrace-$(id -u)/$pid".* 2>/dev/null; then fail "round $round: left behind"; fi
  got=$(counted "$out")
  echo "round $round: fxtrace $who: $got$([ $harvested = 0 ] || echo ' (harvested by another program first)')"
  [ "$got" -eq 3000 ] || fail "round $round ($who): $got, 3000 emitted"
done
rm -rf "$work"
