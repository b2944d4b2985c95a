#!/bin/sh
# The function tracer through `fxtrace record -p/-l/-n/-g` (trace-cmd's letters) on fn_prog
# (-finstrument-functions, or the engine's flags without sibling calls): fn_fib(10) makes
# C(10) = 177 calls (C(n) = 1 + C(n-1) + C(n-2), C(0) = C(1) = 1); main -> fn_run -> fn_fib.
# Counts are read with `fxtrace stats`.
# FN_PROG_CXX (fn_prog_cxx.cpp): ns::K::f(5) makes 6 calls, named demangled, chosen by a
# glob with "::"; an exception thrown through traced functions is caught. Run twice by CTest:
# built with -finstrument-functions (functions_record), and for the patchable-entry engine
# (functions_record_pe).
#   functions_record.sh FXTRACE_BIN FN_PROG WORKDIR FN_PROG_CXX
set -eu
fxtrace=$1
prog=$2
work=$3
prog_cxx=$4
mkdir -p "$work"
out="$work/fn.fxt"

# count EVENT: the events of that name in the last stats
count() {
  awk -v e="function:$1" '$2 == e { print $1; f = 1 } END { if (!f) print 0 }' "$work/stats.txt"
}

# run EXPECTED_TOTAL RECORD_OPTIONS...: records fn_prog 10 and checks the total
run() {
  want=$1
  shift
  rm -f "$out"
  "$fxtrace" record "$@" -o "$out" -- "$prog" 10 >"$work/record.log" 2>&1 ||
    { cat "$work/record.log"; echo "FAIL: fxtrace record $* exited non-zero"; exit 1; }
  grep -q "^55$" "$work/record.log" || { echo "FAIL: fn_prog's output"; exit 1; }
  grep -q "recorded $want events .*; 0 dropped, 0 overrun, 0 lost" "$work/record.log" ||
    { cat "$work/record.log"; echo "FAIL: $* : not $want events, or losses"; exit 1; }
  "$fxtrace" check "$out" >/dev/null
  "$fxtrace" stats "$out" >"$work/stats.txt"
}

run 179 -p function_graph            # main, fn_run, 177 x fn_fib
[ "$(count fn_fib)" -eq 177 ] && [ "$(count fn_run)" -eq 1 ] && [ "$(count main)" -eq 1 ] ||
  { cat "$work/stats.txt"; echo "FAIL: function_graph counts"; exit 1; }
run 179 -p function
[ "$(count fn_fib)" -eq 177 ] || { echo "FAIL: function counts"; exit 1; }
run 177 -p function_graph -l 'fn_f*'
run 2 -p function_graph -n fn_fib
[ "$(count fn_fib)" -eq 0 ] || { echo "FAIL: -n fn_fib"; exit 1; }
run 178 -p function_graph -g fn_run
[ "$(count main)" -eq 0 ] || { echo "FAIL: -g fn_run traced main"; exit 1; }
run 2 -p function_graph -l main -l fn_run   # repeated -l: both
# FXTRACE's keys, without the command
rm -f "$out"
FXTRACE="tracer=function_graph;ftrace_filter=fn_run,main;output=$out" "$prog" 10 >/dev/null
"$fxtrace" stats "$out" >"$work/stats.txt"
[ "$(count fn_run)" -eq 1 ] && [ "$(count main)" -eq 1 ] && [ "$(count fn_fib)" -eq 0 ] ||
  { cat "$work/stats.txt"; echo "FAIL: FXTRACE ftrace_filter"; exit 1; }
# C++: demangled names, a glob with "::" (not the kernel's command syntax)
rm -f "$out"
"$fxtrace" record -p function_graph -l 'ns::K::f*' -o "$out" -- "$prog_cxx" 5 >"$work/record.log" 2>&1 ||
  { cat "$work/record.log"; echo "FAIL: the C++ program"; exit 1; }
grep -q "recorded 6 events .*; 0 dropped, 0 overrun, 0 lost" "$work/record.log" ||
  { cat "$work/record.log"; echo "FAIL: ns::K::f* : not 6 events"; exit 1; }
"$fxtrace" stats "$out" >"$work/stats.txt"
[ "$(count 'ns::K::f(int)')" -eq 6 ] || { cat "$work/stats.txt"; echo "FAIL: C++ names"; exit 1; }
FXTRACE="tracer=function_graph;ftrace_filter=twice*;output=$out" "$prog_cxx" 2 >/dev/null
# An exception thrown through traced functions is caught where it should be (every function
# traced: with the patchable-entry engine their returns are redirected)
FXTRACE="tracer=function_graph;output=$out" "$prog_cxx" 2 >"$work/cxx.out" ||
  { echo "FAIL: the C++ program under function_graph exited non-zero"; exit 1; }
grep -q "^caught 3$" "$work/cxx.out" || { cat "$work/cxx.out"; echo "FAIL: the exception"; exit 1; }
"$fxtrace" stats "$out" >"$work/stats.txt"
grep -q "function:double twice<double>(double)" "$work/stats.txt" ||
  { cat "$work/stats.txt"; echo "FAIL: template name"; exit 1; }
# usage errors
if "$fxtrace" record -l fn_fib -o "$out" -- "$prog" 1 >/dev/null 2>&1; then
  echo "FAIL: -l without -p accepted"; exit 1
fi
if "$fxtrace" record -p graph -o "$out" -- "$prog" 1 >/dev/null 2>&1; then
  echo "FAIL: -p graph accepted"; exit 1
fi
echo "functions_record: ok"
