#!/bin/sh
# Libraries built with the function tracer's flags (fn_dl_lib.c, the patchable-entry engine on
# x86-64) loaded with dlopen by fn_dlopen.c, before function_graph is switched on or while it
# is on: either way their calls are slices from the load (docs/functions.md: libfxtrace
# interposes dlopen). Filters written before the load apply as the kernel's to a module
# loaded later: set_ftrace_filter (main) leaves the library out, set_ftrace_notrace (main)
# does not. A library found by the caller's RUNPATH (the wrapper keeps the caller glibc sees).
# A library unloaded with a frame of it left open on the shadow stack (a longjmp),
# loaded again: its calls traced, no crash. One thread calling a library while another loads
# and unloads a second one 50 times: every call of both is a slice. The sums are the
# program's own: sum of 3i + 1 for i < 10 is 145.
#   fn_dlopen.sh FXTRACE_BIN FN_DLOPEN FN_DL_LIB FN_DL_LIB2 WORKDIR
set -eu
fxtrace=$1
prog=$2
lib=$3
lib2=$4
work=$5
mkdir -p "$work"

# slices MODE NAME: the slices of function NAME in MODE's trace
slices() {
  awk -v n="function:$2" '$2 == n { print $1; f = 1 } END { if (!f) print 0 }' "$work/$1.stats"
}

# run MODE SUM SLICES [SLICES2]: SLICES of fn_dl_work, SLICES2 of fn_dl_work2 (default 0)
run() {
  rm -f "$work/$1.fxt"
  "$prog" "$lib" "$lib2" "$1" "$work/$1.fxt" >"$work/$1.out" || { echo "FAIL: $1: exit $?"; exit 1; }
  [ "$(cat "$work/$1.out")" = "$2" ] || { echo "FAIL: $1: printed $(cat "$work/$1.out")"; exit 1; }
  "$fxtrace" stats "$work/$1.fxt" >"$work/$1.stats"
  got=$(slices "$1" fn_dl_work)
  [ "$got" -eq "$3" ] || { cat "$work/$1.stats"; echo "FAIL: $1: $got slices of fn_dl_work, not $3"; exit 1; }
  got=$(slices "$1" fn_dl_work2)
  [ "$got" -eq "${4:-0}" ] || { cat "$work/$1.stats"; echo "FAIL: $1: $got slices of fn_dl_work2, not ${4:-0}"; exit 1; }
  if grep -q 'drop' "$work/$1.stats" && ! grep -Eq 'drop[^0-9]*0$' "$work/$1.stats"; then
    echo "note: $1: drops reported"
  fi
}

run before 145 10
run after 145 10
run filter 145 0
run notrace 145 10
run runpath 145 10
run close 290 20
[ "$(slices close fn_dl_call)" -eq 0 ] || { echo "FAIL: close: a slice of fn_dl_call, which never returned"; exit 1; }
run loop 29725 2000 50
echo "fn_dlopen: ok"
