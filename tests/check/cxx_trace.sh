#!/bin/sh
# cxx_trace.sh SRC CXX LIBFXTRACE_A WORK - tests/cxx/cxx_trace built with the C++ compiler the
# build does not use (clang++ beside a g++ build, or the reverse), as C++17, C++20, C++17
# with -fno-exceptions -fno-rtti, C++20 at -O0 -fPIC (-O2 else) and, where ld.lld is, C++17
# linked by lld with --gc-sections, each linked with the build's libfxtrace.a and run: every
# macro of fxtrace.h recorded and read back (the program's own checks); and
# tests/cxx/cxx_fn_throw the same way.
set -eu
src=$1 cxx=$2 lib=$3 work=$4
rm -rf "$work" && mkdir -p "$work"
variants="17
20
17 -fno-exceptions -fno-rtti
20 -O0 -fPIC"
# lld's --gc-sections drops a section only __start_fxt_tp refers to unless it is retained
if command -v ld.lld >/dev/null; then
  variants="$variants
17 -ffunction-sections -fdata-sections -fuse-ld=lld -Wl,--gc-sections"
fi
printf '%s\n' "$variants" | while read -r std extra; do
  out="$work/cxx_trace_$std$(echo "$extra" | tr -d ' ,=')"
  # shellcheck disable=SC2086
  "$cxx" -std=c++"$std" -O2 $extra -Wall -Wextra -Wpedantic -Werror -I"$src/include" \
    "$src/tests/cxx/cxx_trace.cpp" "$src/tests/cxx/cxx_other.cpp" "$lib" -lpthread -ldl \
    -o "$out"
  "$out" || { echo "FAIL: $cxx -std=c++$std $extra"; exit 1; }
done
# The function tracer through exceptions and pthread_exit (tests/cxx/cxx_fn_throw.cpp): g++
# calls the exit hook as a frame unwinds, clang++ does not (the frames are counted as cut).
"$cxx" -std=c++17 -O2 -Wall -Wextra -Wpedantic -Werror -I"$src/include" -finstrument-functions \
  -c "$src/tests/cxx/cxx_fn_traced.cpp" -o "$work/cxx_fn_traced.o"
"$cxx" -std=c++17 -O2 -Wall -Wextra -Wpedantic -Werror -I"$src/include" \
  "$src/tests/cxx/cxx_fn_throw.cpp" "$work/cxx_fn_traced.o" "$lib" -lpthread -ldl \
  -o "$work/cxx_fn_throw"
"$work/cxx_fn_throw" || { echo "FAIL: cxx_fn_throw, $cxx"; exit 1; }
echo "cxx_trace: $cxx, C++17, C++20, C++17 without exceptions, C++20 -O0: every check held"
