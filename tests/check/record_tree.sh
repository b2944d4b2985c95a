#!/bin/sh
# `fxtrace record` of a process tree: a shell (not traced) starts two traced demos, one in the
# background; each exec'd child starts its own session from FXTRACE, and the files are merged
# into one with both processes, which passes `fxtrace check`.
#   record_tree.sh FXTRACE_BIN DEMO_BIN WORKDIR
set -eu
fxtrace=$1
demo=$2
work=$3
mkdir -p "$work"
out="$work/tree.fxt"
"$fxtrace" record -e 'demo:*' -o "$out" -- \
  sh -c "'$demo' --duration 0.3 --workers 1 >/dev/null & '$demo' --duration 0.3 >/dev/null; wait" \
  >"$work/record.log" 2>&1 || { cat "$work/record.log"; echo "FAIL: record"; exit 1; }
cat "$work/record.log"
grep -q "from 2 processes" "$work/record.log" || { echo "FAIL: expected 2 processes"; exit 1; }
"$fxtrace" check "$out"
"$fxtrace" stats "$out" | grep -q "2 processes" || { echo "FAIL: stats"; exit 1; }
rm -rf "$work"
