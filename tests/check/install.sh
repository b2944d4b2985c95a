#!/bin/sh
# install.sh SRC WORK GENERATOR CC - what a user gets from `cmake -S . -B build && cmake --build
# build && cmake --install build`. A build tree of SRC configured with no option (the defaults:
# no tests, benchmarks or fuzzers) and with cmocka and Google Benchmark out of reach:
# find_package of either disabled (a REQUIRED one then fails to configure) and cmocka's library
# and header (tests/CMakeLists.txt finds them by path) set to paths that do not exist, so a
# target that used them would fail to link. The tree must register no test. It is built and
# installed into a prefix, the prefix is moved elsewhere, and a small consumer is built and run
# from the moved prefix twice: through pkg-config and through CMake's find_package(fxtrace); and
# a program built with the function tracer's flags and shim (fxtrace-functions,
# fxtrace-functions-instrument; fxtrace::functions and fxtrace::functions_instrument), traced.
# Every header under SRC/include/fxtrace must be installed, and no installed text file may name
# the prefix it was installed to.
# The build tree (WORK/user-build) is kept between runs, so the suite's second pass in the
# same build (scripts/test) only re-configures it; its options are reset (-U) each time, so
# the defaults are what is checked. Remove it to start afresh.
set -eu
src=$1
work=$2
generator=$3
cc=$4
tree=$work/user-build
run=$work/run
rm -rf "$run"
mkdir -p "$run/consumer"
log=$run/log
quiet() {
  "$@" >"$log" 2>&1 || { cat "$log"; echo "FAIL: $*"; exit 1; }
}

hidden=$run/hidden # never created
quiet cmake -S "$src" -B "$tree" -G "$generator" -DCMAKE_C_COMPILER="$cc" \
  -U 'FXT_*' -U BUILD_TESTING \
  -DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON -DCMAKE_DISABLE_FIND_PACKAGE_cmocka=ON \
  -DCMOCKA_LIBRARY="$hidden/libcmocka.so" -DCMOCKA_INCLUDE_DIR="$hidden"
tests=$(ctest --test-dir "$tree" -N | tail -n 1)
case $tests in
  *"Total Tests: 0"*) ;;
  *) echo "FAIL: a plain configure registers tests ($tests; remove $tree if it is stale)"; exit 1 ;;
esac
quiet cmake --build "$tree"
quiet cmake --install "$tree" --prefix "$run/prefix"
moved=$run/elsewhere/deeper/fxtrace
mkdir -p "$(dirname "$moved")"
mv "$run/prefix" "$moved"
if grep -rIl "$run/prefix" "$moved"; then
  echo "FAIL: installed files above name the install prefix"
  exit 1
fi
(cd "$src/include" && find fxtrace -name '*.h' | LC_ALL=C sort) > "$run/headers.src"
(cd "$moved/include" && find fxtrace -name '*.h' | LC_ALL=C sort) > "$run/headers.installed"
diff "$run/headers.src" "$run/headers.installed" || { echo "FAIL: headers not installed"; exit 1; }

cp "$src/tests/check/install_consumer.c" "$run/consumer/main.c"
for pcdir in "$moved"/lib*/pkgconfig; do break; done
# shellcheck disable=SC2046
"$cc" -std=c11 "$run/consumer/main.c" \
  $(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs --static fxtrace) -o "$run/pc-consumer" \
  -static-libgcc
# Shared library from the prefix: point the loader at it.
LD_LIBRARY_PATH=$(dirname "$pcdir") "$run/pc-consumer"
# The function tracer's flags: fxtrace's and the patchable-entry engine's on x86-64
# (-finstrument-functions elsewhere); fxtrace-functions-instrument: -finstrument-functions.
case $(uname -m) in
x86_64) fnwant=-fpatchable-function-entry=11,9 ;;
*) fnwant=-finstrument-functions ;;
esac
# Both link the shim, libfxtrace-functions (the hooks, the interposers), before libfxtrace.
# A program built with each, from the moved prefix, traced with FXTRACE: its function is in
# the file the installed command reads (the hooks or the engine reach libfxtrace).
cat >"$run/consumer/fn.c" <<'C'
#include <stdio.h>
__attribute__((noinline)) int fn_installed(int x)
{
  __asm__ volatile("");
  return x + 1;
}
int main(int argc, char **argv)
{
  (void)argv;
  printf("%d\n", fn_installed(argc));
  return 0;
}
C
for pc in fxtrace-functions:$fnwant fxtrace-functions-instrument:-finstrument-functions; do
  fnflags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs "${pc%%:*}")
  case " $fnflags " in
  *" ${pc#*:} "*"-lfxtrace-functions "*"-lfxtrace "*) ;;
  *) echo "FAIL: pkg-config ${pc%%:*} gives '$fnflags'"; exit 1 ;;
  esac
  # shellcheck disable=SC2086
  "$cc" -O2 "$run/consumer/fn.c" $fnflags -o "$run/fn-${pc%%:*}"
  rm -f "$run/fn.fxt"
  LD_LIBRARY_PATH=$(dirname "$pcdir") FXTRACE="tracer=function;output=$run/fn.fxt" \
    "$run/fn-${pc%%:*}" >/dev/null
  "$moved/bin/fxtrace" report "$run/fn.fxt" >"$run/fn.txt"
  grep -q ': fn_installed <-main' "$run/fn.txt" ||
    { cat "$run/fn.txt"; echo "FAIL: ${pc%%:*}: fn_installed not traced"; exit 1; }
done
cat > "$run/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(fxtrace REQUIRED)
add_executable(consumer main.c)
target_link_libraries(consumer PRIVATE fxtrace::fxtrace_static)
get_target_property(fnflags fxtrace::functions INTERFACE_COMPILE_OPTIONS)
if(NOT fnflags STREQUAL "FNWANT")
  message(FATAL_ERROR "fxtrace::functions: '${fnflags}'")
endif()
get_target_property(fnflags fxtrace::functions_instrument INTERFACE_COMPILE_OPTIONS)
if(NOT fnflags STREQUAL "-finstrument-functions")
  message(FATAL_ERROR "fxtrace::functions_instrument: '${fnflags}'")
endif()
add_executable(fn_pe fn.c)
target_link_libraries(fn_pe PRIVATE fxtrace::functions)
add_executable(fn_instrument fn.c)
target_link_libraries(fn_instrument PRIVATE fxtrace::functions_instrument)
CM
sed -i "s/FNWANT/$fnwant/" "$run/consumer/CMakeLists.txt"
quiet cmake -S "$run/consumer" -B "$run/consumer-build" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$moved"
quiet cmake --build "$run/consumer-build"
"$run/consumer-build/consumer"
# The function tracer's targets link the shim: traced as through pkg-config (the build tree's
# RUNPATH names the moved prefix's library directory).
for t in fn_pe fn_instrument; do
  rm -f "$run/fn.fxt"
  FXTRACE="tracer=function;output=$run/fn.fxt" "$run/consumer-build/$t" >/dev/null
  "$moved/bin/fxtrace" report "$run/fn.fxt" >"$run/fn.txt"
  grep -q ': fn_installed <-main' "$run/fn.txt" ||
    { cat "$run/fn.txt"; echo "FAIL: fxtrace::$t: fn_installed not traced"; exit 1; }
done
