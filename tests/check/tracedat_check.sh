#!/bin/sh
# `fxtrace convert --to tracedat` checked with the real trace-cmd (spec tracedat.md):
#  - the demo recorded (as demo_record_check does) and converted: `trace-cmd report` prints
#    every event with the timestamp, CPU, pid, comm, name and text of `fxtrace report`, line
#    by line, without a warning (tracedat_compare.py), and `trace-cmd report --stat` agrees with
#    the counts (events and losses per CPU, totals of `fxtrace stats`);
#  - a process tree of two demos (two providers in one file);
#  - the writer as a session's output (FXTRACE output=X.dat, fxtrace record -o X.dat);
#  - the demo with 4 KiB buffers, in discard and in overwrite mode (records are dropped or
#    overwritten when the consumer falls behind), and tracedat_events in discard mode with
#    4 KiB buffers (records are dropped all along): each loss shows as "CPU:N [n EVENTS
#    DROPPED]" before the event `fxtrace report` shows it before;
#  - tracedat_events: events trace-cmd prints through its plugins (compared field by field,
#    `trace-cmd report -R`) and print formats of every field type, from two threads;
#  - each trace.dat read back (`fxtrace convert --to fxt`): the same events, each with its
#    thread, CPU, time and name;
#  - a truncated input (torn tail): with --strict exit 1, "FILE: offset N: reason", no output
#    file, else converted up to the tail with a warning naming it; FXT given where a
#    trace.dat is wanted and the other way round: exit 2, saying so;
#  - 1M events (gen_events) in bounded memory: peak RSS under 64 MiB, every event in the file;
#    size, RSS and speed printed.
#   tracedat_check.sh FXTRACE DEMO TRACEDAT_EVENTS GEN_EVENTS PEAK_RSS WORKDIR
# Exits 77 (skipped) without trace-cmd or python3 (Debian: trace-cmd, python3).
set -eu
fxtrace=$1
demo=$2
events=$3
gen=$4
peak=$5
work=$6
here=$(cd "$(dirname "$0")" && pwd)
command -v trace-cmd >/dev/null 2>&1 || { echo "SKIP: trace-cmd not found"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
TMPDIR=$work # the converter's sort spills here, if at all
export TMPDIR

fail() { echo "FAIL: $*"; exit 1; }

# $1: name of $work/$1.fxt; converted, reported by both, compared. Prints the comparison.
compare() {
  f="$work/$1"
  "$fxtrace" convert "$f.fxt" -o "$f.dat" 2>"$f.convert" || { cat "$f.convert"; fail "convert $1"; }
  "$fxtrace" report "$f.fxt" >"$f.report"
  "$fxtrace" stats "$f.fxt" >"$f.stats"
  trace-cmd report -i "$f.dat" >"$f.tc" 2>"$f.tc.err" ||
    { cat "$f.tc.err"; fail "trace-cmd report $1"; }
  [ ! -s "$f.tc.err" ] || { cat "$f.tc.err"; fail "trace-cmd report $1 warned"; }
  trace-cmd report -R -i "$f.dat" >"$f.raw" 2>/dev/null
  trace-cmd report --stat -i "$f.dat" >"$f.stat"
  ! grep -q "FAILED TO PARSE\|UNKNOWN EVENT" "$f.tc" || fail "$1: trace-cmd could not read events"
  python3 "$here/tracedat_compare.py" "$f.report" "$f.tc" --raw "$f.raw" --stat "$f.stat" \
    --stats "$f.stats" >"$f.compare" || { cat "$f.compare"; fail "$1: the reports differ"; }
  echo "$1: $(cat "$f.compare")"
  # Read back (`convert --to fxt`): the same events, each with its thread, CPU, time and name,
  # and as many lost records: the pages' dropped events plus what CPUSTAT counts beyond them
  # (per CPU there: no thread to show them before, so they are compared by their total).
  "$fxtrace" convert "$f.dat" --to fxt -o "$f.back.fxt" 2>"$f.back.log" ||
    { cat "$f.back.log"; fail "$1: convert --to fxt"; }
  "$fxtrace" check "$f.back.fxt" >/dev/null || fail "$1: the trace.dat read back is not valid"
  key='!/^CPU:/ { print $1, $2, $4, $5 }'
  awk "$key" "$f.report" | sort >"$f.key"
  "$fxtrace" report "$f.back.fxt" | awk "$key" | sort >"$f.back.key"
  cmp -s "$f.key" "$f.back.key" || { diff "$f.key" "$f.back.key" | head -5;
    fail "$1: the trace.dat read back has other events"; }
  lost=$(sed -n 's/^CPU:[0-9]* \[LOST \([0-9]*\) EVENTS\]$/\1/p' "$f.report" |
    awk '{ n += $1 } END { print n + 0 }')
  back=$(sed -n 's/.*; lost: \([0-9]*\) events in .* + \([0-9]*\) from CPU stats;.*/\1 \2/p' \
    "$f.back.log" | awk '{ print $1 + $2 }')
  [ "$back" = "$lost" ] ||
    { cat "$f.back.log"; fail "$1: read back, the trace.dat loses ${back:-?}, not $lost events"; }
}

"$fxtrace" record -e 'demo:*,printk:*' -o "$work/demo.fxt" -- "$demo" --duration 0.5 \
  >"$work/record.log" 2>&1 || { cat "$work/record.log"; fail "record the demo"; }
compare demo
grep -q "^[^ ]* [0-9]* events identical" "$work/demo.compare" || fail "demo: no events"

# The writer as a session's output (FXTRACE output=X.dat) and as fxtrace record -o X.dat: a
# trace.dat trace-cmd reads without a warning, holding every event the session wrote, and
# no X.dat.fxt (the FXT it is converted from) left behind.
for how in session record; do
  f="$work/as-$how.dat"
  if [ $how = session ]; then
    FXTRACE="events=demo:*,printk:*;output=$f" "$demo" --duration 0.2 >/dev/null ||
      fail "the demo with output=X.dat"
  else
    "$fxtrace" record -e 'demo:*,printk:*' -o "$f" -- "$demo" --duration 0.2 \
      >"$work/record.log" 2>&1 || { cat "$work/record.log"; fail "record -o X.dat"; }
  fi
  [ ! -e "$f.fxt" ] || fail "$how: $f.fxt left behind"
  trace-cmd report -i "$f" >"$f.tc" 2>"$f.tc.err" || { cat "$f.tc.err"; fail "$how: report"; }
  [ ! -s "$f.tc.err" ] || { cat "$f.tc.err"; fail "$how: trace-cmd report warned"; }
  "$fxtrace" convert "$f" -o "$f.back.fxt" 2>"$f.back.log" || fail "$how: read back"
  n=$(grep -c '^ *[^ ].*-[0-9]* *\[[0-9]*\] *[0-9.]*: ' "$f.tc")
  grep -q "clock mono: $n events (" "$f.back.log" && grep -q ' start: ' "$f.tc" ||
    { cat "$f.back.log"; fail "$how: trace-cmd shows $n events, the file holds others"; }
  echo "output=X.dat ($how): $n events"
done

"$fxtrace" record -e 'demo:*,printk:*' -o "$work/tree.fxt" -- \
  sh -c "'$demo' --duration 0.3 --workers 1 >/dev/null & '$demo' --duration 0.3 >/dev/null; wait" \
  >"$work/record.log" 2>&1 || { cat "$work/record.log"; fail "record a process tree"; }
compare tree

for mode in discard overwrite; do
  "$fxtrace" record -e 'demo:*,printk:*' -b 4 -m $mode -o "$work/$mode.fxt" -- "$demo" \
    --duration 0.3 >"$work/record.log" 2>&1 ||
    { cat "$work/record.log"; fail "record the demo, 4 KiB buffers, $mode"; }
  compare $mode
done

"$events" 2000 "$work/events.fxt" || fail "tracedat_events"
compare events
grep -q "(4000 plugin-printed" "$work/events.compare" ||
  fail "events: the 4000 sched_switch events were not compared through their raw fields"

"$events" 20000 "$work/lossy.fxt" lossy || fail "tracedat_events lossy"
compare lossy
grep -q "; [1-9][0-9]* lost records shown before their events" "$work/lossy.compare" ||
  fail "lossy: no lost records shown (the recording lost none?)"
grep -q "EVENTS DROPPED\]$" "$work/lossy.tc" || fail "lossy: trace-cmd shows no dropped events"

# A truncated input: no output file, the offset said.
size=$(wc -c <"$work/demo.fxt")
head -c $((size - 3)) "$work/demo.fxt" >"$work/cut.fxt"
rc=0
"$fxtrace" convert --strict "$work/cut.fxt" -o "$work/cut.dat" 2>"$work/cut.err" || rc=$?
[ "$rc" -eq 1 ] || fail "truncated input (--strict) exited $rc"
grep -q "cut.fxt: offset [0-9]*: " "$work/cut.err" || { cat "$work/cut.err"; fail "message"; }
[ ! -e "$work/cut.dat" ] || fail "output written for a bad input"
rc=0 # without --strict: the records before the torn tail, a warning naming its offset
"$fxtrace" convert "$work/cut.fxt" -o "$work/cut.dat" 2>"$work/cut.err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$work/cut.err"; fail "torn tail exited $rc"; }
grep -q "cut.fxt: offset [0-9]*: warning: the file ends inside a record" "$work/cut.err" ||
  { cat "$work/cut.err"; fail "torn tail warning"; }
trace-cmd report -i "$work/cut.dat" >/dev/null 2>&1 || fail "torn tail: trace-cmd cannot read the output"
rc=0
"$fxtrace" convert "$work/demo.fxt" --to fxt -o "$work/x.fxt" 2>"$work/x.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "demo.fxt: not a trace.dat file" "$work/x.err" || fail "FXT to fxt"
rc=0
"$fxtrace" convert "$work/demo.dat" -o "$work/x.json" 2>"$work/x.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "demo.dat: a trace.dat file converts to fxt only" "$work/x.err" ||
  fail "trace.dat to json"
[ ! -e "$work/x.fxt" ] && [ ! -e "$work/x.json" ] || fail "output written for a wrong input"

# 1M events in bounded memory (files on /dev/shm when there is one: the disk is not measured).
dir=/dev/shm
[ -d "$dir" ] && [ -w "$dir" ] || dir=$work
big="$dir/fxtrace-tracedat-check-$$"
trap 'rm -f "$big".fxt "$big".dat' EXIT INT TERM
n=1000000
"$gen" $n "$big.fxt"
t0=$(date +%s.%N)
TMPDIR=$dir "$peak" "$fxtrace" convert "$big.fxt" -o "$big.dat" >"$work/big.log" 2>&1 ||
  { cat "$work/big.log"; fail "convert of $n events"; }
t1=$(date +%s.%N)
grep -q "tracedat): $n events on" "$work/big.log" || { cat "$work/big.log"; fail "not $n events"; }
lines=$(trace-cmd report -i "$big.dat" | grep -c ': \(tick\|group\|level\): ')
[ "$lines" -eq "$n" ] || fail "trace-cmd report shows $lines of $n events"
kb=$(sed -n 's/^peak_rss_kb //p' "$work/big.log")
rate=$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", n / (b - a) / 1e6 }')
fxt_mb=$(($(wc -c <"$big.fxt") / 1048576))
dat_mb=$(($(wc -c <"$big.dat") / 1048576))
echo "$n events: $fxt_mb MiB FXT -> $dat_mb MiB trace.dat, peak RSS $kb KiB, $rate M events/s"
[ "$kb" -lt 65536 ] || fail "peak RSS $kb KiB >= 64 MiB"
rm -rf "$work"
echo "ok"
