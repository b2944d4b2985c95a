#!/bin/sh
# What libfxtrace.so exports (src/fxtrace.map, docs/architecture.md): the fxt_* / FXT_* API and
# the names the function tracer must define as they are (__cyg_profile_func_enter and _exit;
# _Unwind_RaiseException, _Unwind_ForcedUnwind, __cxa_begin_catch, pthread_exit, dlopen: interposed); nothing of a reader (the FXT decoder, fxt_decoder_*), which
# a traced process never runs. Usage: exports.sh LIBFXTRACE_SO
set -eu
so=$1
exports=$(mktemp)
trap 'rm -f "$exports"' EXIT
nm -D --defined-only "$so" | awk 'NF == 3 {print $3}' | sed 's/@.*//' | sort -u >"$exports"
n=$(wc -l <"$exports")
[ "$n" -gt 50 ] || { echo "FAIL: $so exports only $n symbols"; exit 1; }
status=0
bad=$(grep -Ev '^(fxt_|FXT_)' "$exports" |
      grep -Evx '__cyg_profile_func_enter|__cyg_profile_func_exit|_Unwind_RaiseException|_Unwind_ForcedUnwind|__cxa_begin_catch|pthread_exit|dlopen' || true)
if [ -n "$bad" ]; then
  echo "FAIL: exported, not the API:" $bad
  status=1
fi
reader=$(grep -E '^fxt_decoder_' "$exports" || true)
if [ -n "$reader" ]; then
  echo "FAIL: the decoder exported:" $reader
  status=1
fi
echo "$so exports $n symbols"
exit $status
