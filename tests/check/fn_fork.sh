#!/bin/sh
# function_graph across fork without exec (fn_fork.c, the patchable-entry engine): each child
# records its own calls, exactly, into a file of its own: its fn_leaf slices are the calls it
# made, none of the parent's, and no frame is cut (the child's shadow stack is the forking
# thread's, whose redirected returns come back in the child); its return from the call that
# forked is its slice too. A filter written in each child works (the tracer's lock, which a
# thread of the parent writing filters in a loop holds at some forks, is the child's own).
# The parent's file has its own calls and one fn_forker slice per fork.
#   fn_fork.sh FXTRACE_BIN FN_FORK WORKDIR
. "$(dirname "$0")/common.sh"
prog=$image
forks=8
"$prog" "$work/fork.%p.fxt" 300 200 $forks >"$work/out" || { cat "$work/out"; echo "FAIL: exit $?"; exit 1; }
[ "$(wc -l <"$work/out")" -eq $((forks + 1)) ] || { cat "$work/out"; echo "FAIL: not $((forks + 1)) processes"; exit 1; }
parent=$(tail -n 1 "$work/out" | cut -d' ' -f1)
# slices FILE NAME
slices() {
  "$fxtrace" stats "$1" | awk -v n="function:$2" '$2 == n { print $1; f = 1 } END { if (!f) print 0 }'
}
while read -r pid calls cut; do
  f="$work/fork.$pid.fxt"
  [ -f "$f" ] || { echo "FAIL: no $f"; exit 1; }
  [ "$cut" -eq 0 ] || { echo "FAIL: $pid: $cut frames cut"; exit 1; }
  got=$(slices "$f" fn_leaf)
  [ "$got" -eq "$calls" ] || { "$fxtrace" stats "$f"; echo "FAIL: $pid: $got slices of fn_leaf, not $calls"; exit 1; }
  want=1
  [ "$pid" = "$parent" ] && want=$forks
  got=$(slices "$f" fn_forker)
  [ "$got" -eq "$want" ] || { "$fxtrace" stats "$f"; echo "FAIL: $pid: $got slices of fn_forker, not $want"; exit 1; }
done <"$work/out"
echo "fn_fork: ok"
