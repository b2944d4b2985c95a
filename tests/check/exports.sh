#!/bin/sh
# What the shared libraries export (src/fxtrace.map, src/fxtrace-functions.map,
# docs/architecture.md): libfxtrace.so the fxt_* / FXT_* API and nothing else, nothing of a
# reader among them (the FXT decoder, fxt_decoder_*), which a traced process never runs; the
# function tracer's shim, libfxtrace-functions.so, exactly the names it must define as they
# are - __cyg_profile_func_enter and _exit, _Unwind_RaiseException, _Unwind_ForcedUnwind,
# __cxa_begin_catch, pthread_exit and, on x86-64, dlopen (interposed) - each of them, and no
# other; and libfxtrace.so defines none of those.
# Usage: exports.sh LIBFXTRACE_SO LIBFXTRACE_FUNCTIONS_SO
set -eu
so=$1 shim=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
exported() {
  nm -D --defined-only "$1" | awk 'NF == 3 {print $3}' | sed 's/@.*//' | LC_ALL=C sort -u
}
exported "$so" >"$tmp/lib"
exported "$shim" >"$tmp/shim"
n=$(wc -l <"$tmp/lib")
[ "$n" -gt 50 ] || { echo "FAIL: $so exports only $n symbols"; exit 1; }
status=0
bad=$(grep -Ev '^(fxt_|FXT_)' "$tmp/lib" || true)
if [ -n "$bad" ]; then
  echo "FAIL: $so exports names that are not the API:" $bad
  status=1
fi
reader=$(grep -E '^fxt_decoder_' "$tmp/lib" || true)
if [ -n "$reader" ]; then
  echo "FAIL: the decoder exported:" $reader
  status=1
fi
# The shim's list, from this script, not from the map it checks.
printf '%s\n' __cyg_profile_func_enter __cyg_profile_func_exit _Unwind_RaiseException \
  _Unwind_ForcedUnwind __cxa_begin_catch pthread_exit >"$tmp/want"
case $(uname -m) in x86_64) echo dlopen >>"$tmp/want" ;; esac
LC_ALL=C sort -u "$tmp/want" -o "$tmp/want"
if ! cmp -s "$tmp/want" "$tmp/shim"; then
  echo "FAIL: $shim exports (+) / lacks (-), against the shim's names:"
  diff "$tmp/want" "$tmp/shim" | sed -n 's/^> /  + /p; s/^< /  - /p'
  status=1
fi
# The shim's calls into libfxtrace are the detail entry points, which libfxtrace.so exports.
for f in $(nm -D --undefined-only "$shim" | awk '{print $2}' | sed 's/@.*//' | grep '^fxt_'); do
  grep -qx "$f" "$tmp/lib" || { echo "FAIL: the shim needs $f, not exported by $so"; status=1; }
done
echo "$so exports $n symbols; $shim $(wc -l <"$tmp/shim")"
exit $status
