#!/bin/sh
# warnings.sh SRC WORK - every public header (SRC/include/fxtrace, subdirectories too) in one
# unit, with every macro of fxtrace.h used once (warnings_use.h), compiled with -Werror as C11
# and as C++17 by each of gcc/g++ and clang/clang++ found (at least one of each language):
#
#   -Wall -Wextra -Wpedantic                       every compiler
#   -Weverything, but (clang 14's list):           clang, clang++
#     -Wno-padded                  a struct's padding is its layout, shared with the library
#     -Wno-declaration-after-statement   C99's declarations where they are first needed
#     -Wno-reserved-identifier     __start_fxt_tp / __stop_fxt_tp are the linker's names for
#                                  the bounds of the registration section
#     -Wno-used-but-marked-unused  a tracepoint's functions are marked unused, as a unit may
#                                  declare one (a header's) and never fire it; clang then
#                                  flags each unit that does fire it
#     C++ only:
#     -Wno-c++98-compat -Wno-c++98-compat-pedantic   C++98 is not a target
#     -Wno-old-style-cast          the inline code is one text for C and C++, and C has no
#                                  static_cast
#
# and the same with -DFXT_DISABLE (every macro compiled away). Last, FXT_PRINTK's values are
# checked against its format: a unit that passes an int for "%s" must not compile (-Wall
# -Werror), in either language, with any of the compilers.
set -eu
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cd "$work"

(cd "$src/include" && find fxtrace -name '*.h' | LC_ALL=C sort) | sed 's/.*/#include <&>/' > all.h
[ -s all.h ] || { echo "FAIL: no header under $src/include/fxtrace"; exit 1; }
printf '#include "all.h"\n#include "%s/tests/check/warnings_use.h"\n' "$src" > unit.c
cp unit.c unit.cpp

common="-Wall -Wextra -Wpedantic -Werror"
every="-Weverything -Werror -Wno-padded -Wno-declaration-after-statement
       -Wno-reserved-identifier -Wno-used-but-marked-unused"
every_cxx="-Wno-c++98-compat -Wno-c++98-compat-pedantic -Wno-old-style-cast"
runs=0
# build NAME COMPILER ARGS...: compiles the unit (with and without FXT_DISABLE), or fails.
build() {
  name=$1
  shift
  for d in "" -DFXT_DISABLE; do
    "$@" $d -O2 -I"$src/include" -c -o /dev/null ||
      { echo "FAIL: $name${d:+ $d} (above)"; exit 1; }
  done
  runs=$((runs + 1))
  echo "ok: $name"
}
# shellcheck disable=SC2086
for pair in gcc:g++ clang:clang++; do
  cc=${pair%%:*}
  cxx=${pair#*:}
  if command -v "$cc" >/dev/null 2>&1; then
    build "$cc -std=c11 $common" "$cc" -std=c11 $common unit.c
    [ "$cc" != clang ] || build "$cc -std=c11 -Weverything" "$cc" -std=c11 $every unit.c
  fi
  if command -v "$cxx" >/dev/null 2>&1; then
    build "$cxx -std=c++17 $common" "$cxx" -std=c++17 $common unit.cpp
    [ "$cxx" != clang++ ] ||
      build "$cxx -std=c++17 -Weverything" "$cxx" -std=c++17 $every $every_cxx unit.cpp
  fi
done
[ "$runs" -ge 2 ] || { echo "FAIL: no C or no C++ compiler found"; exit 1; }

printf '#include <fxtrace/fxtrace.h>\nvoid f(void);\nvoid f(void) { FXT_PRINTK("%%s", 42); }\n' \
  > printk_bad.c
cp printk_bad.c printk_bad.cpp
for c in gcc:c g++:cpp clang:c clang++:cpp; do
  command -v "${c%%:*}" >/dev/null 2>&1 || continue
  if "${c%%:*}" -Wall -Werror -I"$src/include" -c "printk_bad.${c#*:}" -o /dev/null 2>/dev/null
  then
    echo "FAIL: ${c%%:*} compiled FXT_PRINTK(\"%s\", 42) without a format warning"
    exit 1
  fi
done
echo "warnings: $(wc -l < all.h) headers and every macro clean in $runs compilations"
