#!/bin/sh
# A kernel trace's losses, from trace.dat to `fxtrace report` and back: the seed files of
# fuzz_tracedat (fuzz/gen_tracedat_seeds.py; v6 and v7 hold the same pages) lose events on
# CPU 0 before its page at 5.8 s (3, the count stored), on CPU 1 before its page at 5.85 s
# (RB_MISSED_EVENTS alone: how many, unknown) and, by CPU 0's CPUSTAT (overrun 5 + dropped 1),
# 3 more than its pages say. Converted (`convert --to fxt`: `lost` records of thread 0 with
# their `cpu`), `fxtrace report` shows each as the kernel's trace file does, before the first
# event after the gap on that CPU: "CPU:0 [LOST 3 EVENTS]", "CPU:1 [LOST EVENTS]", and the
# CPUSTAT excess, which no event follows, at the end. Then:
#  - `convert --to tracedat` of that FXT file and back: the same LOST lines in the same places,
#    and the same counts (3 in pages, 1 page without a count, 3 from CPU stats);
#  - `trace-cmd report` of that trace.dat (when trace-cmd is installed): "CPU:0 [3 EVENTS
#    DROPPED]" and "CPU:1 [EVENTS DROPPED]" before the same events;
#  - `convert --to json` and `fxtrace stats` count the 6 lost records.
#   tdr_losses.sh FXTRACE SEED_DIR WORKDIR
. "$(dirname "$0")/common.sh"
seeds=$image

# Each loss line of a report with the key (comm-pid, CPU, time, event) of the event line
# before it and after it ("end" when none), on three lines.
losses() {
  awk '/^CPU:/ { lost = $0; next }
       { key = $1 " " $2 " " $4 " " $5 }
       lost != "" { print lost; print "  after " prev; print "  before " key; lost = "" }
       { prev = key }
       END { if (lost != "") { print lost; print "  after " prev; print "  before end" } }' "$1"
}

cat >"$work/want.losses" <<'EOF'
CPU:0 [LOST 3 EVENTS]
  after app-100 [000] 5.750004: tracing_mark_write:
  before app-100 [000] 5.800000: blob:
CPU:1 [LOST EVENTS]
  after app-100 [000] 5.800000: blob:
  before worker-101 [001] 5.850000: tracing_mark_write:
CPU:0 [LOST 3 EVENTS]
  after app-100 [000] 5.900000: sched_switch:
  before end
EOF

for v in v6 v7; do
  f="$work/$v"
  "$fxtrace" convert "$seeds/${v}_all_records.dat" --to fxt -o "$f.fxt" 2>"$f.log" ||
    { cat "$f.log"; fail "$v: convert --to fxt"; }
  grep -q "; lost: 3 events in 2 pages (1 pages without a count) + 3 from CPU stats;" "$f.log" ||
    { cat "$f.log"; fail "$v: the pages' losses are not what the seed holds"; }
  "$fxtrace" report "$f.fxt" >"$f.report"
  losses "$f.report" >"$f.losses"
  diff "$work/want.losses" "$f.losses" || fail "$v: report shows the losses elsewhere"
  [ "$(grep -c '' "$f.report")" = 12 ] || fail "$v: report has not 9 events and 3 LOST lines"
  "$fxtrace" stats "$f.fxt" | grep -q "; 0 dropped, 0 overrun, 6 lost$" ||
    fail "$v: stats does not count 6 lost"
  "$fxtrace" convert "$f.fxt" --to json -o "$f.json" 2>"$f.json.log" ||
    { cat "$f.json.log"; fail "$v: convert --to json"; }
  grep -q " lost counters (6 records lost)" "$f.json.log" ||
    { cat "$f.json.log"; fail "$v: the JSON does not count 6 lost"; }

  # There and back again: trace.dat pages keep the gaps where they were.
  "$fxtrace" convert "$f.fxt" --to tracedat -o "$f.back.dat" 2>"$f.back.log" ||
    { cat "$f.back.log"; fail "$v: convert --to tracedat"; }
  "$fxtrace" convert "$f.back.dat" --to fxt -o "$f.back.fxt" 2>"$f.back2.log" ||
    { cat "$f.back2.log"; fail "$v: convert the written trace.dat --to fxt"; }
  grep -q "; lost: 3 events in 2 pages (1 pages without a count) + 3 from CPU stats;" \
    "$f.back2.log" ||
    { cat "$f.back.log" "$f.back2.log"; fail "$v: the round trip changed the losses"; }
  "$fxtrace" report "$f.back.fxt" >"$f.back.report"
  losses "$f.back.report" >"$f.back.losses"
  diff "$work/want.losses" "$f.back.losses" || fail "$v: read back, the losses moved"
  if command -v trace-cmd >/dev/null 2>&1; then
    trace-cmd report -i "$f.back.dat" >"$f.tc" 2>"$f.tc.err" ||
      { cat "$f.tc.err"; fail "$v: trace-cmd report"; }
    awk '/^CPU:/ { print; lost = 1; next }
         lost { print $1, $2, $3, $4; lost = 0 }' "$f.tc" >"$f.tc.losses"
    printf '%s\n' 'CPU:0 [3 EVENTS DROPPED]' 'app-100 [000] 5.800000: blob:' \
      'CPU:1 [EVENTS DROPPED]' 'worker-101 [001] 5.850000: print:' >"$work/want.tc"
    diff "$work/want.tc" "$f.tc.losses" || fail "$v: trace-cmd shows other drops"
  fi
done
echo "ok: losses before their events (v6, v7), round trip kept them$(command -v trace-cmd \
  >/dev/null 2>&1 && echo ', trace-cmd agrees')"
