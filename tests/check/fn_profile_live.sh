#!/bin/sh
# The function profiler live, through the fxtrace tool: fn_prog (-finstrument-functions) runs
# with FXTRACE='function_profile=1' (no tracer, no output file), computes fib(20) and waits;
# meanwhile:
#   - function_profile_enabled reads 1; `fxtrace ls PID trace_stat` lists function0..N-1;
#   - every trace_stat/functionN begins with the kernel's two header lines (function_stat_headers
#     of kernel/trace/ftrace.c, written out below), and over all of them fn_fib has
#     C(20) = 21891 hits (C(n) = 1 + C(n-1) + C(n-2), C(0) = C(1) = 1), fn_run and main one;
#   - a write of 'x' fails (Invalid argument), of 0 stops the profile (reads 0), whose
#     tables stay readable.
#   fn_profile_live.sh FXTRACE_BIN FN_PROG WORKDIR
. "$(dirname "$0")/common.sh"
prog=$image
FXTRACE_DIR=$(mktemp -d /tmp/fxpl.XXXXXX)
rmdir "$FXTRACE_DIR"
export FXTRACE_DIR
pid=
cleanup() {
  exec 3>&- 2>/dev/null || true
  [ -z "$pid" ] || wait "$pid" 2>/dev/null || true
  rm -rf "$FXTRACE_DIR"
}
trap cleanup EXIT

mkfifo "$work/stdin"
FXTRACE='function_profile=1;output=' "$prog" 20 wait <"$work/stdin" >"$work/prog.log" 2>&1 &
pid=$!
exec 3>"$work/stdin"
i=0
until grep -q '^6765$' "$work/prog.log"; do
  kill -0 "$pid" 2>/dev/null || { cat "$work/prog.log"; fail "fn_prog exited"; }
  i=$((i + 1))
  [ $i -lt 600 ] || fail "no result from fn_prog after 30 s"
  sleep 0.05
done
[ -S "$FXTRACE_DIR/$pid.sock" ] || fail "no live-control socket"

[ "$("$fxtrace" cat "$pid" function_profile_enabled)" = 1 ] || fail "function_profile_enabled"
"$fxtrace" ls "$pid" trace_stat >"$work/ls.txt"
n=$(wc -l <"$work/ls.txt")
[ "$n" -ge 1 ] || fail "trace_stat lists nothing"
printf '  Function                               Hit    Time            Avg             s^2\n  --------                               ---    ----            ---             ---\n' >"$work/header.txt"
: >"$work/all.txt"
c=0
while [ $c -lt "$n" ]; do
  grep -qx "function$c" "$work/ls.txt" || fail "trace_stat: no function$c ($(cat "$work/ls.txt"))"
  "$fxtrace" cat "$pid" "trace_stat/function$c" >"$work/f$c.txt"
  head -n 2 "$work/f$c.txt" | cmp -s - "$work/header.txt" ||
    { cat "$work/f$c.txt"; fail "function$c: not the kernel's header"; }
  tail -n +3 "$work/f$c.txt" >>"$work/all.txt"
  c=$((c + 1))
done
hits() { awk -v f="$1" '$1 == f { h += $2 } END { print h + 0 }' "$work/all.txt"; }
[ "$(hits fn_fib)" -eq 21891 ] || { cat "$work/all.txt"; fail "fn_fib: $(hits fn_fib) hits"; }
[ "$(hits fn_run)" -eq 1 ] && [ "$(hits main)" -eq 1 ] || { cat "$work/all.txt"; fail "main, fn_run"; }

if "$fxtrace" write "$pid" function_profile_enabled x >"$work/w.txt" 2>&1; then
  fail "a write of 'x' succeeded"
fi
grep -q "Invalid argument" "$work/w.txt" || fail "write x: $(cat "$work/w.txt")"
"$fxtrace" write "$pid" function_profile_enabled 0
[ "$("$fxtrace" cat "$pid" function_profile_enabled)" = 0 ] || fail "still enabled"
"$fxtrace" cat "$pid" trace_stat/function0 | head -n 2 | cmp -s - "$work/header.txt" ||
  fail "function0 after 0"
exec 3>&-
wait "$pid" || fail "fn_prog exited non-zero"
pid=
echo "ok: fn_fib 21891 hits over $n CPUs"
