# live_flight.sh - live_control.sh's flight mode, sourced by it (its head says what is checked;
# rd, ls_, fail, eventually, check_layout and check_trace are its). flight_events ($demo_pid)
# is a flight recorder with a 64 KiB buffer that fires flight:tick seq=0, 1, ... when told to
# on fd 3, and nothing else: between two commands its buffer does not move.

emitted=0
emit() { # N: flight_events fires the next N ticks; returns once it says it did
  emitted=$((emitted + $1))
  echo "emit $1" >&3
  eventually 'grep -qx "emitted $emitted" "$work/demo.log"' ||
    fail "flight_events did not fire $1 ticks: $(cat "$work/demo.log")"
}

seqs() { sed -n 's/.* tick: seq=\([0-9]*\)$/\1/p' "$1"; } # the ticks of text file $1

check_seqs() { # FILE FIRST LAST: FILE's ticks are FIRST..LAST, each once, in order
  bad=$(seqs "$1" | awk -v a="$2" -v b="$3" '
    bad == "" && $1 != a + NR - 1 { bad = "line " NR " is seq " $1 ", not " a + NR - 1 }
    END { if (bad == "" && NR != b - a + 1) bad = NR " ticks, not " b - a + 1; print bad }')
  [ -z "$bad" ] || fail "$1: ticks $2..$3 expected: $bad"
}

snapshot() { # FILE: a snapshot of flight_events, and its report in FILE.txt
  "$fxtrace" snapshot "$demo_pid" -o "$1" >/dev/null || fail "fxtrace snapshot failed"
  "$fxtrace" report "$1" >"$1.txt" || fail "fxtrace report $1 failed"
}

ls_ "" >"$work/root.txt"
for f in per_cpu trace trace_pipe; do
  grep -qx "$f" "$work/root.txt" || fail "no $f in the root"
done

# ---- trace shows what the buffer holds, and consumes nothing ----------------------------------
emit 1000 # 0..999, 32 bytes each: the buffer holds them all
rd trace >"$work/trace1.txt"
check_trace "$work/trace1.txt" tick
check_seqs "$work/trace1.txt.lines" 0 999
[ "$written" -eq 1000 ] || fail "entries-written $written, not the 1000 ticks fired"
rd trace >"$work/trace2.txt"
cmp -s "$work/trace1.txt" "$work/trace2.txt" || fail "reading trace again gave another text"
snapshot "$work/snap1.fxt"
check_seqs "$work/snap1.fxt.txt" 0 999
emit 10 # 1000..1009
rd trace >"$work/trace3.txt"
check_trace "$work/trace3.txt" tick
check_seqs "$work/trace3.txt.lines" 0 1009
head -n 1000 "$work/trace3.txt.lines" | cmp -s - "$work/trace1.txt.lines" ||
  fail "the lines trace showed before changed"

# ---- trace_pipe consumes: what it returned is in the buffer no more ---------------------------
"$fxtrace" cat -n "$demo_pid" trace_pipe >"$work/pipe1.txt"
check_layout "$work/pipe1.txt" tick
check_seqs "$work/pipe1.txt" 0 1009
! grep -q '^CPU:' "$work/pipe1.txt" || fail "trace_pipe lost ticks: $(grep '^CPU:' "$work/pipe1.txt")"
rd trace >"$work/trace4.txt"
check_trace "$work/trace4.txt" tick
[ "$entries" -eq 0 ] || fail "trace shows $entries ticks after trace_pipe consumed them"
snapshot "$work/snap2.fxt"
[ -z "$(seqs "$work/snap2.fxt.txt")" ] || fail "a snapshot holds ticks trace_pipe consumed"

# ---- the buffer overwrites: trace shows the newest, the rest is overrun -------------------------
emit 5000 # 1010..6009: the 64 KiB buffer keeps the newest 2600 or so
rd trace >"$work/trace5.txt"
check_trace "$work/trace5.txt" tick
kept=$entries
first=$((emitted - kept))
# a tick is 24 bytes (header, timestamp, its seq as a uint32 argument: it fits in 32 bits)
[ "$kept" -gt 2000 ] && [ "$kept" -le 2730 ] || fail "trace shows $kept ticks of a 64 KiB buffer"
check_seqs "$work/trace5.txt.lines" "$first" $((emitted - 1))
[ "$written" -eq 5000 ] ||
  fail "entries-written $written ($kept in the buffer, $sum_o overrun), not the 5000 fired"
rd trace >"$work/trace6.txt"
cmp -s "$work/trace5.txt" "$work/trace6.txt" || fail "reading trace again gave another text"
snapshot "$work/snap3.fxt"
check_seqs "$work/snap3.fxt.txt" "$first" $((emitted - 1))

# ---- trace_pipe returns them after a LOST line for the overwritten ------------------------------
"$fxtrace" cat -n "$demo_pid" trace_pipe >"$work/pipe2.txt"
check_layout "$work/pipe2.txt" tick
check_seqs "$work/pipe2.txt" "$first" $((emitted - 1))
lost=$(sed -n 's/^CPU:[0-9]* \[LOST \([0-9]*\) EVENTS\]$/\1/p' "$work/pipe2.txt" |
  awk '{ n += $1 } END { print n + 0 }')
returned=$(cat "$work/pipe1.txt" "$work/pipe2.txt" | grep -c ' tick: seq=')
[ $((returned + lost)) -eq "$emitted" ] ||
  fail "trace_pipe returned $returned ticks and lost $lost, of the $emitted fired"
snapshot "$work/snap4.fxt"
[ -z "$(seqs "$work/snap4.fxt.txt")" ] || fail "a snapshot holds ticks trace_pipe consumed"
rd trace >"$work/trace7.txt"
check_trace "$work/trace7.txt" tick
[ "$entries" -eq 0 ] || fail "trace shows $entries ticks after trace_pipe consumed them"

# ---- truncating trace hides what came before from it; the buffer keeps it --------------------
emit 10 # 6010..6019
wr trace ""
rd trace >"$work/trace8.txt"
check_trace "$work/trace8.txt" tick
[ "$entries" -eq 0 ] && [ "$written" -eq 0 ] || fail "after truncation: $header"
snapshot "$work/snap5.fxt"
check_seqs "$work/snap5.fxt.txt" $((emitted - 10)) $((emitted - 1))
emit 5 # 6020..6024
rd trace >"$work/trace9.txt"
check_trace "$work/trace9.txt" tick
check_seqs "$work/trace9.txt.lines" $((emitted - 5)) $((emitted - 1))
[ "$written" -eq 5 ] || fail "entries-written $written after truncation and 5 ticks"

# ---- an open trace_pipe streams what is fired meanwhile -----------------------------------------
"$fxtrace" cat "$demo_pid" trace_pipe >"$work/pipe3.txt" &
cat_pid=$!
emit 100 # 6025..6124, after the 5 since the truncation
eventually '[ "$(seqs "$work/pipe3.txt" | wc -l)" -ge 105 ]' ||
  fail "trace_pipe streamed $(seqs "$work/pipe3.txt" | wc -l) of 105 ticks"
kill -TERM "$cat_pid"
wait "$cat_pid" 2>/dev/null || true
check_layout "$work/pipe3.txt" tick
check_seqs "$work/pipe3.txt" $((emitted - 105)) $((emitted - 1))

exec 3>&- # the end of the commands: flight_events stops its session and exits
wait "$demo_pid" || fail "flight_events failed: $(cat "$work/demo.log")"
demo_pid=
