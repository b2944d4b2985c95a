#!/bin/sh
# `fxtrace convert --to json` in bounded memory: files of 1 million and 10 million events
# (gen_events, block mode, nothing lost) convert with a peak RSS under 64 MiB, every event
# in the output (otherData), no duration left open. Prints size, RSS and speed; removes the
# files. Files go to /dev/shm (tmpfs: the disk is not what is measured) when it exists.
#   json_rss.sh FXTRACE_BIN GEN_EVENTS_BIN PEAK_RSS_BIN [COUNTS...]
set -eu
fxtrace=$1
gen=$2
peak=$3
shift 3
[ $# -gt 0 ] || set -- 1000000 10000000
limit_kb=65536
dir=/dev/shm
[ -d "$dir" ] && [ -w "$dir" ] || dir=${TMPDIR:-/tmp}
base="$dir/fxtrace-json-rss-$$"
trap 'rm -f "$base".fxt "$base".json "$base".log' EXIT INT TERM

now() { date +%s.%N; }

for n in "$@"; do
  "$gen" "$n" "$base.fxt"
  t0=$(now)
  "$peak" "$fxtrace" convert "$base.fxt" --to json -o "$base.json" >"$base.log" 2>&1 ||
    { cat "$base.log"; echo "FAIL: convert of $n events"; exit 1; }
  t1=$(now)
  kb=$(sed -n 's/^peak_rss_kb //p' "$base.log")
  tail=$(tail -c 400 "$base.json")
  case $tail in
    *"\"events\":$n,\"lost_counters\":0,"*"\"unmatched_begin\":0,\"unmatched_end\":0,"*"}}") ;;
    *) cat "$base.log"; echo "$tail"; echo "FAIL: $n events: otherData does not say so"; exit 1 ;;
  esac
  fxt_mb=$(( $(wc -c <"$base.fxt") / 1048576 ))
  json_mb=$(( $(wc -c <"$base.json") / 1048576 ))
  rate=$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", n / (b - a) / 1e6 }')
  echo "$n events: $fxt_mb MiB FXT -> $json_mb MiB JSON, peak RSS $kb KiB," \
       "$rate M events/s"
  [ "$kb" -lt "$limit_kb" ] || { echo "FAIL: peak RSS $kb KiB >= $limit_kb KiB"; exit 1; }
  rm -f "$base.fxt" "$base.json"
done
echo "ok"
