#!/bin/sh
# The real kernel and an fxtrace-traced program on one timeline: `trace-cmd record -C mono`
# of sched_switch/sched_wakeup while tdr_sleeper (a traced thread that naps 2 ms, 50 times)
# runs; the trace.dat converted to FXT (`fxtrace convert --to fxt`) and merged with the
# program's trace (`fxtrace merge`); then `fxtrace check` accepts both files, and tdr_align.py finds
# each nap's switch-out right after its nap_begin and its switch-in right before its nap_end,
# the clocks' offset bounded within a millisecond (it prints the bound it measured). Also:
# merging the trace.dat directly gives the same bytes; a v7 uncompressed copy converts to
# the same events; a zstd-compressed copy is refused with a clear message; a trace on the
# `local` clock is refused with the advice to record with -C mono, and with --date it merges
# and aligns too.
# Skipped (77) without trace-cmd or python3, or where tracefs is not there and cannot be
# mounted, or its events cannot be enabled (not root, or a kernel without sched events).
#   tdr_merge.sh FXTRACE_BIN SLEEPER_BIN ALIGN_PY WORKDIR
set -u
fxtrace=$1
sleeper=$2
align=$3
work=$4
tracefs=/sys/kernel/tracing

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; [ -f "$work/rec.log" ] && tail -5 "$work/rec.log"; exit 1; }
command -v trace-cmd >/dev/null 2>&1 || skip "trace-cmd is not installed (Debian package trace-cmd)"
command -v python3 >/dev/null 2>&1 || skip "python3 is not installed"
if [ ! -e "$tracefs/events/sched/sched_switch/enable" ]; then
  mount -t tracefs nodev "$tracefs" 2>/dev/null || skip "tracefs cannot be mounted on $tracefs"
fi
[ -w "$tracefs/events/sched/sched_switch/enable" ] || skip "cannot enable sched events here"
# The kernel's tracing is one for the whole machine: two test suites running at once (two
# checkouts on one machine) would record into each other's trace-cmd sessions. One at a time.
if command -v flock >/dev/null 2>&1; then
  exec 9>/tmp/fxtrace-kernel-tracing.lock
  flock 9
fi
# trace-cmd leaves tracing_on at 0 and the clock at what it recorded with: both put back.
clock_before=$(sed -n 's/.*\[\(.*\)\].*/\1/p' "$tracefs/trace_clock")
on_before=$(cat "$tracefs/tracing_on")
restore() {
  [ -n "$clock_before" ] && echo "$clock_before" >"$tracefs/trace_clock" 2>/dev/null
  [ -n "$on_before" ] && echo "$on_before" >"$tracefs/tracing_on" 2>/dev/null
  true
}
trap restore EXIT

rm -rf "$work"
mkdir -p "$work"
# -d and --no-filter: where the function tracer's files (set_ftrace_pid, ftrace_enabled) are
# not writable (containers), trace-cmd 3.1.6 otherwise aborts or crashes; it then also exits 1
# after writing a complete file (it cannot reset set_ftrace_filter), so the file is judged,
# not the exit code.
record() { # OUT CLOCK-OPTIONS... -- COMMAND...
  out=$1
  shift
  trace-cmd record -d --no-filter "$@" >"$work/rec.log" 2>&1
  grep -q "CPU0 data recorded" "$work/rec.log" && [ -s "$out" ] && return 0
  # Some kernels refuse (ftrace_enabled read-only: "Can't enable ftrace"): not fxtrace's doing.
  if grep -qi "can't enable ftrace\|ftrace_enabled" "$work/rec.log"; then
    skip "trace-cmd record cannot trace this kernel: $(grep -i "can't enable ftrace\|ftrace_enabled" "$work/rec.log" | head -1)"
  fi
  fail "trace-cmd record ($out)"
}
record "$work/k.dat" -o "$work/k.dat" -C mono -e sched:sched_switch -e sched:sched_wakeup \
  --file-version 6 "$sleeper" 50 "$work/u.fxt"
[ -s "$work/u.fxt" ] || fail "the traced program wrote no trace"

"$fxtrace" convert "$work/k.dat" --to fxt -o "$work/k.fxt" || fail "convert --to fxt"
"$fxtrace" check "$work/k.fxt" || fail "check of the converted kernel trace"
"$fxtrace" merge "$work/k.fxt" "$work/u.fxt" -o "$work/m.fxt" || fail "merge"
"$fxtrace" check "$work/m.fxt" || fail "check of the merged trace"
"$fxtrace" report "$work/m.fxt" >"$work/m.txt" || fail "report"
python3 "$align" "$work/m.txt" || fail "alignment"
"$fxtrace" merge -q "$work/k.dat" "$work/u.fxt" -o "$work/m2.fxt" || fail "merge of the .dat"
cmp -s "$work/m.fxt" "$work/m2.fxt" || fail "merging the .dat differs from merging its FXT"

# v7: uncompressed reads as v6 did; compressed is refused, saying what to do.
trace-cmd convert -i "$work/k.dat" -o "$work/k7.dat" --file-version 7 --compression none \
  >/dev/null 2>&1 || fail "trace-cmd convert to v7"
"$fxtrace" convert -q "$work/k7.dat" --to fxt -o "$work/k7.fxt" || fail "convert --to fxt of v7"
"$fxtrace" report "$work/k.fxt" >"$work/k.txt" && "$fxtrace" report "$work/k7.fxt" >"$work/k7.txt"
cmp -s "$work/k.txt" "$work/k7.txt" || fail "v7 reads other events than v6"
if trace-cmd convert -i "$work/k.dat" -o "$work/kz.dat" --file-version 7 --compression zstd \
     >/dev/null 2>&1; then
  "$fxtrace" convert "$work/kz.dat" --to fxt -o "$work/kz.fxt" 2>"$work/kz.err" && fail "zstd read"
  grep -q "compressed trace.dat (zstd" "$work/kz.err" || fail "no clear zstd message"
  [ ! -e "$work/kz.fxt" ] || fail "a refused input left an output file"
fi

# Not CLOCK_MONOTONIC: refused without an offset; placed by trace-cmd's --date offset.
record "$work/l.dat" -o "$work/l.dat" -C local -e sched:sched_switch --file-version 6 \
  "$sleeper" 5 "$work/ul.fxt"
"$fxtrace" merge "$work/l.dat" "$work/ul.fxt" -o "$work/ml.fxt" 2>"$work/ml.err" &&
  fail "a local-clock trace merged"
grep -q "record it with \`trace-cmd record -C mono" "$work/ml.err" || fail "no -C mono advice"
record "$work/d.dat" -o "$work/d.dat" -C local --date -e sched:sched_switch \
  -e sched:sched_wakeup --file-version 6 "$sleeper" 50 "$work/ud.fxt"
"$fxtrace" merge "$work/d.dat" "$work/ud.fxt" -o "$work/md.fxt" || fail "merge via --date"
"$fxtrace" check "$work/md.fxt" || fail "check of the --date merge"
"$fxtrace" report "$work/md.fxt" >"$work/md.txt"
python3 "$align" "$work/md.txt" || fail "alignment via --date"

rm -rf "$work"
echo "ok: kernel and user traces merged on CLOCK_MONOTONIC"
