#!/bin/sh
# Every subcommand of fxtrace on the conventions of a Unix tool (issue 16), table-driven over
# the commands `fxtrace --help` lists:
#  - `CMD --help` exits 0 with the usage on stdout, nothing on stderr; `help CMD` prints the
#    same; a bad option exits 2 with "fxtrace CMD: ..." and the usage on stderr, stdout empty;
#  - the readers (report, stats, check, convert, merge) take `-` (stdin: a file, a pipe), a
#    FIFO and /dev/stdin, and print what they print for the file itself;
#  - `-o -` writes to stdout the bytes `-o FILE` writes (convert, merge, recover; record and
#    snapshot, whose two runs differ in time, the same events); binary data is refused on a
#    terminal (exit 2, said);
#  - summaries on stderr: stdout is empty where nothing was asked (record's is the program's);
#  - FXTRACE=output=fd:3 writes the trace there, stdout keeps only what the program prints;
#    output=- (stdout) is refused, saying why;
#  - record's exit status: 125 for nothing traced and an -e glob matching no event (the events
#    listed), 127 for a CMD not found, else the program's own;
#  - a progress line for convert on a terminal, none on stderr that is not one;
#  - --version is the version of include/fxtrace/version.h; an unknown command names the
#    closest one.
#   cli_conventions.sh FXTRACE TEST_HARVEST WORKDIR FLIGHT_EVENTS
. "$(dirname "$0")/common.sh"
flight=$4
scratch_buffers cli
src=$(cd "$(dirname "$0")/../.." && pwd)

# ---- every command: --help, help CMD, a bad option ------------------------------------------
commands=$("$fxtrace" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' |
  grep -v -x -e help -e version)
for c in record report stats check list convert merge recover snapshot; do
  echo "$commands" | grep -q -x "$c" || fail "fxtrace --help does not list $c"
done
for c in $commands; do
  st=0
  "$fxtrace" "$c" --help >"$work/out" 2>"$work/err" || st=$?
  [ $st -eq 0 ] || fail "$c --help exited $st"
  head -n 1 "$work/out" | grep -q "^usage: fxtrace $c " || fail "$c --help: no usage on stdout"
  [ ! -s "$work/err" ] || { cat "$work/err"; fail "$c --help wrote on stderr"; }
  "$fxtrace" help "$c" >"$work/help" || fail "help $c failed"
  cmp -s "$work/out" "$work/help" || fail "help $c is not $c --help"
  st=0
  "$fxtrace" "$c" --no-such-option >"$work/out" 2>"$work/err" || st=$?
  [ $st -eq 2 ] || fail "$c --no-such-option exited $st, not 2"
  [ ! -s "$work/out" ] || fail "$c --no-such-option wrote on stdout"
  grep -q "^fxtrace $c: " "$work/err" && grep -q "^usage: fxtrace $c " "$work/err" ||
    { cat "$work/err"; fail "$c --no-such-option: no message and usage on stderr"; }
done
echo "help and usage errors: $(echo $commands | wc -w) commands"

# ---- version, unknown command ---------------------------------------------------------------
v=$(sed -n 's/^#define FXT_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
  "$src/include/fxtrace/version.h" | paste -s -d .)
[ "$("$fxtrace" --version)" = "fxtrace $v" ] || fail "--version is not fxtrace $v"
[ "$("$fxtrace" version)" = "fxtrace $v" ] || fail "version is not fxtrace $v"
st=0
"$fxtrace" reprot >"$work/out" 2>"$work/err" || st=$?
[ $st -eq 2 ] && [ ! -s "$work/out" ] && grep -q "did you mean 'report'" "$work/err" ||
  { cat "$work/err"; fail "unknown command reprot ($st)"; }

# ---- record: summary on stderr, -o -, exit status -------------------------------------------
"$fxtrace" record -e t:seq -o "$work/r.fxt" -- sh -c "echo hello; '$image' image 7 exit" \
  >"$work/out" 2>"$work/err" || { cat "$work/err"; fail "record -o FILE"; }
[ "$(cat "$work/out")" = hello ] || { cat "$work/out"; fail "record: stdout is not the program's"; }
grep -q "^fxtrace: recorded 7 events from 1 process (1 thread) to $work/r.fxt" "$work/err" ||
  { cat "$work/err"; fail "record: no summary on stderr"; }
"$fxtrace" record -e t:seq -o - -- "$image" image 7 exit >"$work/r-.fxt" 2>"$work/err" ||
  { cat "$work/err"; fail "record -o -"; }
grep -q "recorded 7 events .* to standard output" "$work/err" || fail "record -o -: summary"
"$fxtrace" stats "$work/r.fxt" | grep '^ .*t:seq$' >"$work/s1"
"$fxtrace" stats "$work/r-.fxt" | grep '^ .*t:seq$' >"$work/s2"
[ "$(tr -s ' ' <"$work/s1")" = " 7 t:seq" ] && cmp -s "$work/s1" "$work/s2" ||
  fail "record -o -: not the 7 events of -o FILE"
st=0
"$fxtrace" record -o "$work/none.fxt" -- true 2>"$work/err" || st=$?
[ $st -eq 125 ] && [ ! -e "$work/none.fxt" ] && grep -q "wrote no trace" "$work/err" ||
  { cat "$work/err"; fail "record of a program without libfxtrace exited $st, not 125"; }
st=0
"$fxtrace" record -e 'htp:*' -o "$work/typo.fxt" -- "$image" image 3 exit 2>"$work/err" || st=$?
[ $st -eq 125 ] && grep -q "^fxtrace record: -e 'htp:\*' matches no event" "$work/err" &&
  grep -q "t:seq" "$work/err" || { cat "$work/err"; fail "record -e 'htp:*' exited $st"; }
st=0
"$fxtrace" record -o "$work/nf.fxt" -- "$work/no-such-program" 2>"$work/err" || st=$?
[ $st -eq 127 ] || { cat "$work/err"; fail "record of a missing CMD exited $st, not 127"; }
st=0
"$fxtrace" record -e t:seq -o "$work/three.fxt" -- sh -c "'$image' image 2 exit; exit 3" \
  2>"$work/err" || st=$?
[ $st -eq 3 ] || { cat "$work/err"; fail "record: exited $st, not the program's 3"; }
echo "record: summary on stderr, -o -, exit 125/127/CMD's"

# ---- FXTRACE's output: fd:N, never the program's stdout --------------------------------------
FXTRACE="events=t:seq;buffers=$shm;output=fd:3" sh -c "echo hello; exec '$image' image 6 exit" \
  3>"$work/fd3.fxt" >"$work/out" 2>"$work/err" || { cat "$work/err"; fail "output=fd:3"; }
[ "$(cat "$work/out")" = hello ] || fail "output=fd:3: stdout is not the program's"
[ "$("$fxtrace" stats "$work/fd3.fxt" | tr -s ' ' | grep ' t:seq$')" = " 6 t:seq" ] ||
  fail "output=fd:3: not the 6 events"
FXTRACE="events=t:seq;buffers=$shm;output=-" "$image" image 6 exit >"$work/out" 2>"$work/err" ||
  true
[ ! -s "$work/out" ] && grep -q "output=-: the trace would be mixed with the program's own stdout" \
  "$work/err" || { cat "$work/err"; fail "output=- not refused"; }
echo "FXTRACE output=fd:3 beside the program's stdout; output=- refused"

# ---- readers: -, a pipe, a FIFO, /dev/stdin --------------------------------------------------
f=$work/r.fxt
for r in report stats check; do
  "$fxtrace" $r "$f" >"$work/want" 2>&1 || fail "$r FILE"
  "$fxtrace" $r - <"$f" >"$work/got" 2>&1 || fail "$r - <FILE"
  cmp -s "$work/want" "$work/got" || fail "$r - <FILE differs"
  cat "$f" | "$fxtrace" $r - >"$work/got" 2>&1 || fail "$r - from a pipe"
  cmp -s "$work/want" "$work/got" || fail "$r - from a pipe differs"
  cat "$f" | "$fxtrace" $r /dev/stdin >"$work/got" 2>&1 || fail "$r /dev/stdin from a pipe"
  cmp -s "$work/want" "$work/got" || fail "$r /dev/stdin differs"
  rm -f "$work/fifo" && mkfifo "$work/fifo"
  cat "$f" >"$work/fifo" &
  "$fxtrace" $r "$work/fifo" >"$work/got" 2>&1 || fail "$r FIFO"
  wait
  cmp -s "$work/want" "$work/got" || fail "$r FIFO differs"
done
"$fxtrace" convert "$f" -o "$work/want.json" -q || fail "convert FILE"
cat "$f" | "$fxtrace" convert - -o "$work/got.json" -q || fail "convert - from a pipe"
cmp -s "$work/want.json" "$work/got.json" || fail "convert - differs"
"$fxtrace" merge "$f" -o "$work/want.m.fxt" -q || fail "merge FILE"
cat "$f" | "$fxtrace" merge - -o "$work/got.m.fxt" -q || fail "merge - from a pipe"
cmp -s "$work/want.m.fxt" "$work/got.m.fxt" || fail "merge - differs"
echo "readers: -, pipe, FIFO, /dev/stdin"

# ---- -o -: the bytes of -o FILE, summaries on stderr ----------------------------------------
for to in json tracedat; do
  "$fxtrace" convert "$f" --to $to -o "$work/c.$to" >"$work/out" 2>"$work/err" || fail "convert"
  [ ! -s "$work/out" ] && grep -q "^fxtrace convert: " "$work/err" ||
    fail "convert --to $to: summary not on stderr"
  "$fxtrace" convert "$f" --to $to -o - >"$work/c-.$to" 2>/dev/null || fail "convert -o -"
  cmp -s "$work/c.$to" "$work/c-.$to" || fail "convert --to $to -o - differs from -o FILE"
done
"$fxtrace" merge "$f" -o "$work/m.fxt" >"$work/out" 2>"$work/err" || fail "merge"
[ ! -s "$work/out" ] && grep -q "^fxtrace merge: " "$work/err" || fail "merge: summary"
"$fxtrace" merge "$f" -o - >"$work/m-.fxt" 2>/dev/null || fail "merge -o -"
cmp -s "$work/m.fxt" "$work/m-.fxt" || fail "merge -o - differs from -o FILE"

# A session whose process was killed, recovered twice: the same bytes.
st=0
FXTRACE="events=t:seq;buffers=$shm;buffer_kb=64;output=$work/k.fxt" "$image" image 50 kill 20 \
  >/dev/null 2>&1 || st=$?
[ $st -eq 137 ] || fail "the killed image exited $st"
dir=$(ls -d "$shm"/*.* | head -n 1)
"$fxtrace" recover "$dir" -o "$work/rec.fxt" >"$work/out" 2>"$work/err" ||
  { cat "$work/err"; fail "recover -o FILE"; }
[ ! -s "$work/out" ] && grep -q "^fxtrace recover: .*records recovered" "$work/err" ||
  fail "recover: summary not on stderr"
"$fxtrace" recover "$dir" -o - >"$work/rec-.fxt" 2>/dev/null || fail "recover -o -"
cmp -s "$work/rec.fxt" "$work/rec-.fxt" || fail "recover -o - differs from -o FILE"
[ "$("$fxtrace" stats "$work/rec-.fxt" | tr -s ' ' | grep ' t:seq$')" = " 50 t:seq" ] ||
  fail "recover -o -: not the 50 events"

# A flight recorder whose buffer does not move between two snapshots: the same events.
export FXTRACE_DIR="$work/ctl"
mkfifo "$work/commands"
"$flight" 64 <"$work/commands" >"$work/flight.log" 2>&1 &
flight_pid=$!
exec 3>"$work/commands"
echo "emit 40" >&3
i=0
until grep -q "emitted 40" "$work/flight.log"; do
  i=$((i + 1))
  [ $i -lt 200 ] || fail "flight_events did not emit"
  sleep 0.05
done
"$fxtrace" snapshot "$flight_pid" -o "$work/snap.fxt" >"$work/out" 2>&1 || fail "snapshot"
[ ! -s "$work/out" ] || fail "snapshot -o FILE wrote on stdout or stderr"
"$fxtrace" snapshot "$flight_pid" -o - >"$work/snap-.fxt" || fail "snapshot -o -"
exec 3>&-
wait $flight_pid
# (Each snapshot maps ticks to time with the clock syncs of its moment: the microseconds of
# an event may differ by one; its thread, CPU and fields may not.)
"$fxtrace" report "$work/snap.fxt" | sed 's/ [0-9]*\.[0-9]*: / /' >"$work/want"
"$fxtrace" report "$work/snap-.fxt" | sed 's/ [0-9]*\.[0-9]*: / /' >"$work/got"
[ "$(grep -c 'tick: seq=' "$work/want")" -eq 40 ] && cmp -s "$work/want" "$work/got" ||
  fail "snapshot -o -: not the 40 events of -o FILE"
echo "-o -: convert, merge, recover byte for byte; record, snapshot the same events"

# ---- binary data on a terminal: refused -----------------------------------------------------
for args in "convert $work/c.tracedat --to fxt -o -" "convert $f --to tracedat -o -" "merge $f -o -" \
  "record -o - -- true"; do
  st=0
  script -q -e -c "'$fxtrace' $args" /dev/null >"$work/tty" 2>&1 || st=$?
  [ $st -eq 2 ] && grep -q "binary trace data not written to a terminal" "$work/tty" ||
    { cat "$work/tty"; fail "$args on a terminal: exited $st"; }
done
st=0
script -q -e -c "'$fxtrace' convert $f --to json -o - -q" /dev/null >"$work/tty" 2>&1 || st=$?
[ $st -eq 0 ] && grep -q traceEvents "$work/tty" || fail "convert --to json -o - on a terminal"
echo "binary to a terminal refused (JSON shown)"

# ---- progress: on a terminal only ------------------------------------------------------------
FXTRACE_PROGRESS_MS=0 script -q -e -c "'$fxtrace' convert $f --to json -o $work/p.json" \
  /dev/null >"$work/tty" 2>&1 || fail "convert on a terminal"
grep -q "$(printf '\r')fxtrace convert: 100% of [0-9.]* MiB read" "$work/tty" ||
  { od -c "$work/tty" | head; fail "convert on a terminal: no progress line"; }
FXTRACE_PROGRESS_MS=0 "$fxtrace" convert "$f" --to json -o "$work/p.json" 2>"$work/err" ||
  fail "convert"
! grep -q "$(printf '\r')\|MiB read" "$work/err" || fail "convert: progress in a log"
FXTRACE_PROGRESS_MS=0 script -q -e -c "'$fxtrace' record -e t:seq -o $work/p.fxt -- \
  '$image' image 5000 exit" /dev/null >"$work/tty" 2>&1 || fail "record on a terminal"
grep -q "$(printf '\r')fxtrace record: [ 0-9]*% of [0-9.]* MiB read" "$work/tty" ||
  { od -c "$work/tty" | head; fail "record on a terminal: no progress line"; }
echo "progress on a terminal, not in a log"
