#!/bin/sh
# `fxtrace record` of a process tree: a shell (not traced) starts two traced demos, one in the
# background; each exec'd child starts its own session from FXTRACE, and the files are merged
# into one with both processes, which passes `fxtrace check`. Then a bad -o: refused before
# the command runs; and an output directory that goes away during the run: exit 1, and the
# recorded traces are kept (named on stderr) and merge to the same events.
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

# -o in a directory that is not there: an error naming it, and the command does not run.
if "$fxtrace" record -o "$work/none/x.dat" -- sh -c "touch '$work/ran'" 2>"$work/bad.log"; then
  echo "FAIL: record -o into a missing directory exited 0"; exit 1
fi
grep -q -- "-o $work/none/x.dat: cannot create a file in $work/none" "$work/bad.log" ||
  { cat "$work/bad.log"; echo "FAIL: message"; exit 1; }
[ ! -e "$work/ran" ] || { echo "FAIL: the command ran"; exit 1; }

# The output's directory removed while the command runs: nothing recorded is lost.
mkdir "$work/gone"
if "$fxtrace" record -e 'demo:*' -o "$work/gone/t.fxt" -- \
  sh -c "'$demo' --duration 0.1 >/dev/null; rmdir '$work/gone'" 2>"$work/gone.log"; then
  echo "FAIL: record into a removed directory exited 0"; exit 1
fi
cat "$work/gone.log"
kept=$(sed -n 's/.*the recorded traces are kept in \(.*\) (`fxtrace merge`)$/\1/p' "$work/gone.log")
[ -n "$kept" ] && [ -d "$kept" ] || { echo "FAIL: no kept directory named"; exit 1; }
"$fxtrace" merge "$kept"/*.fxt -o "$work/kept.fxt"
"$fxtrace" check "$work/kept.fxt"
"$fxtrace" stats "$work/kept.fxt" | grep -q "1 process" || { echo "FAIL: kept stats"; exit 1; }
rm -rf "$kept" "$work"
