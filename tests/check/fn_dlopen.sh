#!/bin/sh
# A library built with the function tracer's flags (fn_dl_lib.c, the patchable-entry engine on
# x86-64) loaded with dlopen by fn_dlopen.c: loaded before function_graph is switched on, its
# 10 calls are slices; loaded while it is on, its calls are not traced until the next write of
# a tracer file (set_ftrace_notrace here: docs/functions.md, Limits), then the next 10 are.
# The sums are the program's own: sum of 3i + 1 for i < 10 is 145.
#   fn_dlopen.sh FXTRACE_BIN FN_DLOPEN FN_DL_LIB WORKDIR
set -eu
fxtrace=$1
prog=$2
lib=$3
work=$4
mkdir -p "$work"

# run MODE SUM SLICES
run() {
  rm -f "$work/$1.fxt"
  "$prog" "$lib" "$1" "$work/$1.fxt" >"$work/$1.out" || { echo "FAIL: $1: exit $?"; exit 1; }
  [ "$(cat "$work/$1.out")" = "$2" ] || { echo "FAIL: $1: printed $(cat "$work/$1.out")"; exit 1; }
  "$fxtrace" stats "$work/$1.fxt" >"$work/$1.stats"
  got=$(awk '$2 == "function:fn_dl_work" { print $1; f = 1 } END { if (!f) print 0 }' "$work/$1.stats")
  [ "$got" -eq "$3" ] || { cat "$work/$1.stats"; echo "FAIL: $1: $got slices of fn_dl_work, not $3"; exit 1; }
}

run before 145 10
run after 290 10
echo "fn_dlopen: ok"
