#!/bin/sh
# `fxtrace convert --to json` of real recordings: the demo alone (0.5 s) and a process tree
# of two demos; each JSON is checked by json_validate.py against `fxtrace stats` of its file
# (valid JSON, in time order, every event accounted for per thread, begin/end pairs as X,
# async and flows matched, every flow at the start of its slice, names).
# Also: a bad input is rejected with file/offset/reason and leaves no output file; a torn
# tail is converted up to it with a warning.
#   json_check.sh FXTRACE_BIN DEMO_BIN WORKDIR
# Exits 77 (skipped) when python3 is missing.
set -eu
fxtrace=$1
demo=$2
work=$3
here=$(cd "$(dirname "$0")" && pwd)
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
rm -rf "$work"
mkdir -p "$work"

check() { # name: $work/$name.fxt -> .json, validated; every demo flow is inside a slice
  "$fxtrace" convert "$work/$1.fxt" --to json -o "$work/$1.json"
  "$fxtrace" stats "$work/$1.fxt" >"$work/$1.stats"
  python3 "$here/json_validate.py" "$work/$1.json" "$work/$1.stats" --all-flows-bound
}

"$fxtrace" record -e 'demo:*,printk:*' -o "$work/demo.fxt" -- "$demo" --duration 0.5 \
  >"$work/record.log" 2>&1 || { cat "$work/record.log"; echo "FAIL: record"; exit 1; }
check demo

"$fxtrace" record -e 'demo:*,printk:*' -o "$work/tree.fxt" -- \
  sh -c "'$demo' --duration 0.3 --workers 1 >/dev/null & '$demo' --duration 0.3 >/dev/null; wait" \
  >"$work/record.log" 2>&1 || { cat "$work/record.log"; echo "FAIL: record tree"; exit 1; }
check tree
grep -q '"providers":2}' "$work/tree.json" || { echo "FAIL: expected 2 providers"; exit 1; }

# Output to stdout is the same bytes.
"$fxtrace" convert -q "$work/demo.fxt" --to json -o - >"$work/stdout.json"
cmp "$work/demo.json" "$work/stdout.json" || { echo "FAIL: -o - differs"; exit 1; }

# A truncated file (a torn tail): with --strict exit 1, "FILE: offset N: reason", no output
# file; without, the records before the tail, a warning naming its offset, exit 0.
size=$(wc -c <"$work/demo.fxt")
head -c $((size - 3)) "$work/demo.fxt" >"$work/cut.fxt"
rc=0
"$fxtrace" convert --strict "$work/cut.fxt" --to json -o "$work/cut.json" 2>"$work/cut.err" || rc=$?
[ "$rc" -eq 1 ] || { echo "FAIL: truncated input (--strict) exited $rc"; exit 1; }
grep -q "cut.fxt: offset [0-9]*: " "$work/cut.err" || { cat "$work/cut.err"; echo "FAIL: message"; exit 1; }
[ ! -e "$work/cut.json" ] || { echo "FAIL: output written for a bad input"; exit 1; }
rc=0
"$fxtrace" convert "$work/cut.fxt" --to json -o "$work/cut.json" 2>"$work/cut.err" || rc=$?
[ "$rc" -eq 0 ] || { cat "$work/cut.err"; echo "FAIL: torn tail exited $rc"; exit 1; }
grep -q "cut.fxt: offset [0-9]*: warning: the file ends inside a record" "$work/cut.err" ||
  { cat "$work/cut.err"; echo "FAIL: torn tail warning"; exit 1; }
"$fxtrace" stats "$work/cut.fxt" >"$work/cut.stats" 2>/dev/null
python3 "$here/json_validate.py" "$work/cut.json" "$work/cut.stats" >/dev/null ||
  { echo "FAIL: torn tail JSON"; exit 1; }

# A failed write to a device reports it and leaves the device alone (only an incomplete
# regular file is removed): a private /dev/full node where mknod is allowed (root).
if mknod "$work/full" c 1 7 2>/dev/null; then
  rc=0
  "$fxtrace" convert -q "$work/demo.fxt" --to json -o "$work/full" 2>"$work/full.err" || rc=$?
  [ "$rc" -eq 1 ] && grep -q "No space left" "$work/full.err" ||
    { cat "$work/full.err"; echo "FAIL: writing to a full device (exit $rc)"; exit 1; }
  [ -c "$work/full" ] || { echo "FAIL: the device was removed"; exit 1; }
fi

# Usage errors exit 2; unsupported formats are named.
rc=0
"$fxtrace" convert "$work/demo.fxt" --to nosuch -o "$work/x.dat" 2>"$work/usage.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "supported: json" "$work/usage.err" ||
  { cat "$work/usage.err"; echo "FAIL: unknown format (exit $rc)"; exit 1; }

rm -rf "$work"
echo "ok"
