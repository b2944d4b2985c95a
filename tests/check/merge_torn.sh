#!/bin/sh
# `fxtrace merge` and `fxtrace record`'s merge of its processes' files read an input with a torn
# tail (it ends inside a record: a write cut short) as report and stats do: up to the last
# whole record, with a warning naming the offset, exit 0; `merge --strict` refuses it (exit 1,
# no output). The merged file holds exactly the events before the cut.
#   merge_torn.sh FXTRACE_BIN TEST_HARVEST_BIN WORKDIR
. "$(dirname "$0")/common.sh"
events() { "$fxtrace" stats "$1" 2>/dev/null | sed -n 's/^total: \([0-9]*\) events.*/\1/p'; }

FXTRACE="events=t:seq;buffers=;output=$work/a.fxt" "$image" image 1000 exit ||
  fail "the traced image"
size=$(stat -c %s "$work/a.fxt")
whole=$(events "$work/a.fxt")
[ "$whole" = 1000 ] || fail "a.fxt holds $whole events"

# Cuts inside a record: 3 bytes short of the end, and in the middle (2 and 29 bytes into a
# record's words, whatever the record there).
for cut in $((size - 3)) $((size / 2 / 8 * 8 + 2)) $((size / 2 / 8 * 8 + 29)); do
  head -c $cut "$work/a.fxt" >"$work/torn.fxt"
  # What stats says of it: the offset of the torn record, and the events before it.
  "$fxtrace" stats "$work/torn.fxt" >"$work/stats.out" 2>"$work/stats.err" || fail "stats"
  off=$(sed -n 's/.*torn\.fxt: offset \([0-9]*\): warning: the file ends inside a record.*/\1/p' \
    "$work/stats.err")
  [ -n "$off" ] || { cat "$work/stats.err"; fail "cut $cut: stats saw no torn tail"; }
  before=$(events "$work/torn.fxt")

  "$fxtrace" merge "$work/a.fxt" "$work/torn.fxt" -o "$work/m.fxt" 2>"$work/merge.err" ||
    { cat "$work/merge.err"; fail "cut $cut: merge exited non-zero"; }
  grep -q "^fxtrace merge: $work/torn.fxt: offset $off: warning: the file ends inside a record" \
    "$work/merge.err" || { cat "$work/merge.err"; fail "cut $cut: merge did not name offset $off"; }
  got=$(events "$work/m.fxt")
  echo "cut $cut: torn at $off, $before events before it; merged $got"
  [ "$got" -eq $((1000 + before)) ] || fail "cut $cut: merged $got events, not $((1000 + before))"

  rm -f "$work/s.fxt"
  if "$fxtrace" merge --strict "$work/a.fxt" "$work/torn.fxt" -o "$work/s.fxt" 2>"$work/strict.err"; then
    fail "cut $cut: merge --strict accepted a torn input"
  fi
  grep -q "torn.fxt: offset $off: the file ends inside a record.*(--strict)" "$work/strict.err" ||
    { cat "$work/strict.err"; fail "cut $cut: --strict did not say why"; }
  [ ! -e "$work/s.fxt" ] || fail "cut $cut: merge --strict wrote its output"
done
"$fxtrace" merge --strict "$work/a.fxt" -o "$work/s.fxt" 2>/dev/null || fail "--strict, whole input"

# `fxtrace record`: the command cuts its own trace file 3 bytes short after the image wrote it
# (the directory is in FXTRACE's output=) and keeps a copy; record merges what is whole, warns,
# and exits 0.
"$fxtrace" record -e 't:seq' -o "$work/rec.fxt" -- sh -c '
  "$1" image 1000 exit || exit 1
  d=${FXTRACE##*output=}; d=${d%/*}
  for f in "$d"/*.fxt; do truncate -s -3 "$f"; cp "$f" "$2/part.fxt"; done' sh "$image" "$work" \
  >"$work/rec.log" 2>"$work/rec.err" || { cat "$work/rec.log" "$work/rec.err"; fail "record"; }
"$fxtrace" stats "$work/part.fxt" >/dev/null 2>"$work/stats.err"
off=$(sed -n 's/.*part\.fxt: offset \([0-9]*\): warning: the file ends inside a record.*/\1/p' \
  "$work/stats.err")
[ -n "$off" ] || { cat "$work/stats.err"; fail "record: the part is not torn"; }
grep -q "^fxtrace record: .*\.fxt: offset $off: warning: the file ends inside a record" \
  "$work/rec.err" || { cat "$work/rec.err"; fail "record did not warn of the torn tail at $off"; }
want=$(events "$work/part.fxt")
echo "record: a file cut 3 bytes short (torn at $off, $want events before it)"
grep -q "recorded $want events from 1 process" "$work/rec.err" ||
  { cat "$work/rec.err"; fail "record: not $want events"; }
rm -rf "$work"
