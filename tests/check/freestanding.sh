#!/bin/sh
# Every file of src/core, with the public headers it includes, compiles as freestanding C11
# with gcc for x86-64 and with clang for a 32-bit target (thumbv7m), at -O0 and -O2, and the
# objects reference no outside symbol but memcpy, memset, memmove, memcmp and the embedder hook
# fxt_platform_ticks (the time source, DESIGN.md: "time and CPU come from the embedder").
set -eu
src=$1
out=$2
mkdir -p "$out"
allowed='^(memcpy|memset|memmove|memcmp|fxt_platform_ticks)$'
gcc_inc=$(gcc -print-file-name=include)
clang_inc=$(clang -print-resource-dir)/include
nm=$(command -v llvm-nm || command -v llvm-nm-14 || command -v nm)
common="-std=c11 -pedantic -ffreestanding -nostdinc -Wall -Wextra -Werror -I$src/include"
status=0
checked=0
for f in "$src"/src/core/*.c; do
  base=$(basename "$f" .c)
  for opt in -O0 -O2; do
    gcc $common -isystem "$gcc_inc" $opt -c "$f" -o "$out/$base-x86_64$opt.o"
    clang --target=thumbv7m-none-eabi $common -isystem "$clang_inc" $opt -c "$f" \
      -o "$out/$base-thumbv7m$opt.o"
    for o in "$out/$base-x86_64$opt.o" "$out/$base-thumbv7m$opt.o"; do
      bad=$("$nm" -u "$o" | awk '{print $NF}' | grep -Ev "$allowed" || true)
      if [ -n "$bad" ]; then
        echo "FAIL: $o references: $bad"
        status=1
      fi
      checked=$((checked + 1))
    done
  done
done
[ "$checked" -gt 0 ] || { echo "FAIL: no src/core files found"; exit 1; }
echo "checked $checked objects"
exit $status
