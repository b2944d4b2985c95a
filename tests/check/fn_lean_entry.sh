#!/bin/sh
# The x86-64 engine's lean entry (FXT_FN_PE_LEAN, src/host/functions_int.h): the entry
# trampoline saves no xmm register before fxt_fn_pe_enter, so its code may touch none, nor
# reach other code that could (a call, or a jump out of it: a tail call), whatever path it
# takes. Checked on the library's instructions (objdump), as the compiler left them.
# Usage: fn_lean_entry.sh LIBFXTRACE_SO
set -eu
so=$1
code=$(objdump -d --no-show-raw-insn "$so" | sed -n '/<fxt_fn_pe_enter>:$/,/^$/p')
[ -n "$code" ] || { echo "FAIL: no fxt_fn_pe_enter in $so"; exit 1; }
bad=$(echo "$code" | awk 'NR > 1 && NF > 1 {
  out = $2 ~ /^j/ && $0 !~ /<fxt_fn_pe_enter(\+0x[0-9a-f]+)?>/ # a jump out of it
  if ($0 ~ /%[xyz]mm[0-9]/ || $2 ~ /^call/ || out)
    print }')
if [ -n "$bad" ]; then
  echo "FAIL: fxt_fn_pe_enter (lean entry) touches other registers or code:"
  echo "$bad"
  exit 1
fi
n=$(echo "$code" | awk 'NR > 1 && NF > 1' | wc -l)
echo "fxt_fn_pe_enter: $n instructions, no call, no jump out, no xmm register"
