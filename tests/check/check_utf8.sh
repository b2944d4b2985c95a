#!/bin/sh
# Strings that are not UTF-8 in a file (issue 13, item 3): `fxtrace check` names each with the
# offset of its first bad byte and exits 1; `report` shows U+FFFD; `convert --to json` writes
# valid UTF-8 JSON. And a file's bytes in an error message (a terminal escape sequence) are
# escaped, never printed raw (item 8).
#   check_utf8.sh FXTRACE GEN_EVENTS WORKDIR
# Exits 77 (skipped) without python3.
set -eu
fxtrace=$1
gen=$2
work=$3
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

"$gen" 64 "$work/good.fxt"
"$fxtrace" check "$work/good.fxt" >/dev/null || fail "the generated file does not pass check"
# The string record "tick" becomes "t\xffck": one byte, at a known offset.
at=$(python3 - "$work/good.fxt" "$work/bad.fxt" <<'PY'
import sys
data = bytearray(open(sys.argv[1], 'rb').read())
i = data.find(b'tick\x00\x00\x00\x00')  # the string record "tick", not "ticks"
data[i + 1] = 0xff
open(sys.argv[2], 'wb').write(data)
print(i + 1)
PY
)
rc=0
"$fxtrace" check "$work/bad.fxt" >"$work/check.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || { cat "$work/check.out"; fail "check exited $rc"; }
grep -q "^$work/bad.fxt: offset $at: string record \"t\\\\xffck\" is not valid UTF-8 (byte 0xff at 1 of its 4)$" \
  "$work/check.out" || { cat "$work/check.out"; fail "check message (bad byte at $at)"; }
"$fxtrace" report "$work/bad.fxt" | grep -q "$(printf 't\357\277\275ck')" || fail "report: no U+FFFD"
"$fxtrace" convert -q "$work/bad.fxt" -o "$work/bad.json"
python3 -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8", errors="strict"))
assert any(e.get("name") == "t\ufffdck" for e in d["traceEvents"]), "no t\\ufffdck event"
' "$work/bad.json" || fail "json"
echo "ok: check names the bad byte at offset $at; report and json show U+FFFD"

# A trace.dat whose version string is an escape sequence: the message shows it as \x1b.
printf '\027\010\104tracing\033[31mX\000' >"$work/esc.dat"
rc=0
"$fxtrace" convert "$work/esc.dat" -o "$work/esc.fxt" 2>"$work/esc.err" || rc=$?
[ "$rc" -eq 1 ] || fail "escape: convert exited $rc"
grep -qF "version '\\x1b[31mX'" "$work/esc.err" || { cat -A "$work/esc.err"; fail "escape: message"; }
if grep -q "$(printf '\033')" "$work/esc.err"; then fail "escape: raw ESC on stderr"; fi
echo "ok: an escape sequence of a file is shown as \\x1b"
