#!/bin/sh
# cxx_headers.sh SRC CC LIBFXTRACE_A WORK - the public headers as a C++ program sees them.
# Every header under SRC/include/fxtrace (subdirectories too) is included in one C++17
# translation unit, compiled with g++ and with clang++ (each one present; at least one must
# be) -std=c++17 -Wall -Wextra -pedantic -Werror, with static assertions that each struct and
# union C++ shares with the C library has C's layout: sizeof, alignof and the offset of every
# member but bit-fields. The C values come from a C11 program built here with CC (the
# library's compiler; linked with LIBFXTRACE_A, as fxtrace.h registers each unit that
# includes it) that prints those assertions. Which records and members there are comes from
# the debug information of the same headers compiled as C and as C++ (every type, used or
# not), so a header, a record or a member added later is checked without a list to keep.
# Records only C sees would be named in the output (none: the inline emit path's and the
# macros' records are C++'s too, detail/atomic.h).
set -eu
src=$1
cc=$2
lib=$3
work=$4
rm -rf "$work"
mkdir -p "$work"
cd "$work"

cxx=""
for c in g++ clang++; do
  command -v "$c" >/dev/null 2>&1 && cxx="${cxx:+$cxx }$c"
done
[ -n "$cxx" ] || { echo "FAIL: neither g++ nor clang++"; exit 1; }

(cd "$src/include" && find fxtrace -name '*.h' | LC_ALL=C sort) |
  sed 's/.*/#include <&>/' > all.h
[ -s all.h ] || { echo "FAIL: no header under $src/include/fxtrace"; exit 1; }
printf '#include "all.h"\n' > all.c
cp all.c all.cpp
dbg="-g -fno-eliminate-unused-debug-types"
# shellcheck disable=SC2086
"$cc" -std=c11 $dbg -I"$src/include" -c all.c -o all-c.o
# shellcheck disable=SC2086
set -- $cxx
# shellcheck disable=SC2086
"$1" -std=c++17 $dbg -I"$src/include" -c all.cpp -o all-cpp.o

# records OBJECT: "struct NAME" / "union NAME" for each complete fxt_* record, then
# "member struct NAME FIELD" for each named member that is not a bit-field. readelf prints one
# DIE per "<depth><offset>: Abbrev Number" line, its attributes below it, children after it.
records() {
  readelf --debug-dump=info "$1" | awk '
    function flush() {
      if (tag == "member" && rec[depth - 1] != "" && name != "" && !bits)
        print "member", rec[depth - 1], name
      rec[depth] = ""
      if ((tag == "struct" || tag == "union") && name ~ /^fxt_/ && !decl) {
        rec[depth] = tag " " name
        print rec[depth]
      }
    }
    /^ *<[0-9]+><[0-9a-f]+>: Abbrev Number/ {
      flush()
      depth = $1
      sub(/^ *</, "", depth)
      sub(/>.*/, "", depth)
      tag = /DW_TAG_structure_type/ ? "struct" : /DW_TAG_union_type/ ? "union" : \
            /DW_TAG_member/ ? "member" : "other"
      name = ""
      bits = 0
      decl = 0
      next
    }
    /DW_AT_name/ { name = $NF }
    /DW_AT_bit_size|DW_AT_data_bit_offset/ { bits = 1 }
    /DW_AT_declaration/ { decl = 1 }
    END { flush() }'
}
records all-c.o > c.records
records all-cpp.o | grep -v '^member' | sort -u > cpp.names
grep -v '^member' c.records | sort -u > c.names
[ -s c.names ] || { echo "FAIL: no fxt_* record in the C debug information"; exit 1; }
only_c=$(comm -23 c.names cpp.names | tr '\n' ' ')
[ -z "$only_c" ] || echo "C only (not compared): $only_c"

# The C program that prints the assertions, for the records both languages see.
# assertion EXPR MESSAGE: its line that prints static_assert(EXPR == C's value, MESSAGE).
assertion() {
  printf '  printf("static_assert(%s == %%zu, \\"%s\\");\\n", %s);\n' "$1" "$2" "$1"
}
{
  printf '#include "all.h"\n#include <stdalign.h>\n#include <stdio.h>\n\nint main(void)\n{\n'
  comm -12 c.names cpp.names | while read -r kind name; do
    t="$kind $name"
    assertion "sizeof($t)" "sizeof($t)"
    assertion "alignof($t)" "alignof($t)"
    grep "^member $t " c.records | while read -r _ _ _ field; do
      assertion "offsetof($t, $field)" "$name.$field"
    done
  done
  printf '  return 0;\n}\n'
} > layout_gen.c
"$cc" -std=c11 -Wall -Wextra -pedantic -Werror -I"$src/include" layout_gen.c "$lib" \
  -lpthread -ldl -o layout_gen
./layout_gen > layout.h
printf '#include "all.h"\n#include <cstddef>\n#include "layout.h"\n' > layout.cpp
for c in $cxx; do
  "$c" -std=c++17 -Wall -Wextra -pedantic -Werror -I"$src/include" -fsyntax-only layout.cpp
done
echo "cxx_headers: $(wc -l < all.h) headers, $(grep -c sizeof layout.h) records," \
  "$(grep -c offsetof layout.h) members: the same in C and C++ ($cxx)"
