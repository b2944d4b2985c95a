#!/bin/sh
# What a traced process maps of libfxtrace.so (issue 14, docs/architecture.md "Builds"): its
# text - `size`'s, every read-only part: code, constants, unwind tables, symbol tables - at most
# LIMIT bytes, and no code of the file tools in it (no definition of src/formats' objects, no
# FXT decoder: a traced process converts, reads, imports and recovers nothing itself).
# Usage: text_size.sh LIBFXTRACE_SO LIMIT WHY_NOT FORMATS_OBJECTS (colon-separated)
# WHY_NOT is empty where the limit applies (gcc, RelWithDebInfo, no sanitizer), else what the
# build is: the size is then only printed (another compiler, -O3, -O0 or a sanitizer's code
# make another number) and the test skips (77) once the symbols are checked.
set -eu
so=$1 limit=$2 why_not=$3 objects=$4
defs=$(mktemp)
trap 'rm -f "$defs"' EXIT
status=0
# Global definitions of the formats library (a static function may share a name).
echo "$objects" | tr ':' '\n' | while read -r o; do [ -z "$o" ] || nm --defined-only "$o"; done |
  awk 'NF == 3 && $2 ~ /^[TDRB]$/ {print $3}' | sort -u >"$defs"
[ -s "$defs" ] || { echo "FAIL: no definition found in the formats objects"; exit 1; }
found=$(nm --defined-only "$so" | awk 'NF == 3 {print $3}' | sort -u | comm -12 - "$defs")
found="$found $(nm --defined-only "$so" | awk '$3 ~ /^fxt_decoder_/ {print $3}')"
if [ -n "$(echo $found)" ]; then
  echo "FAIL: file tools' code in $so:" $found
  status=1
fi
text=$(size --format=berkeley "$so" | awk 'NR == 2 {print $1}')
case $text in '' | *[!0-9]*) echo "FAIL: no text size for $so"; exit 1 ;; esac
if [ -n "$why_not" ]; then
  echo "$so: text $text bytes; the limit ($limit) is not checked: $why_not"
  [ $status -ne 0 ] || exit 77
  exit $status
fi
if [ "$text" -gt "$limit" ]; then
  echo "FAIL: $so has $text bytes of text, more than $limit"
  status=1
else
  echo "$so: text $text bytes (limit $limit, $((limit - text)) to spare)"
fi
exit $status
