#!/bin/sh
# The program built from tests/check/disabled.c with -DFXT_DISABLE references no fxt_ symbol
# and evaluated no instrumentation argument (it exits non-zero otherwise).
set -eu
"$1" || { echo "FAIL: with FXT_DISABLE, instrumentation arguments were evaluated"; exit 1; }
nm=$(command -v llvm-nm || command -v nm)
bad=$("$nm" -u "$1" | grep -E 'fxt_' || true)
if [ -n "$bad" ]; then
  echo "FAIL: with FXT_DISABLE the object still references: $bad"
  exit 1
fi
echo "ok: no fxtrace symbol referenced, no argument evaluated"
