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
objects=0
for target in x86_64 thumbv7m; do
  for opt in -O0 -O2; do
    set --
    for f in "$src"/src/core/*.c; do
      o="$out/$(basename "$f" .c)-$target$opt.o"
      if [ "$target" = x86_64 ]; then
        gcc $common -isystem "$gcc_inc" $opt -c "$f" -o "$o"
      else
        clang --target=thumbv7m-none-eabi $common -isystem "$clang_inc" $opt -c "$f" -o "$o"
      fi
      set -- "$@" "$o"
      objects=$((objects + 1))
    done
    # Outside symbols: undefined in some object and defined in none.
    "$nm" -u "$@" | awk 'NF && $NF !~ /:$/ {print $NF}' | sort -u >"$out/undef"
    "$nm" --defined-only "$@" | awk 'NF == 3 {print $3}' | sort -u >"$out/def"
    bad=$(comm -23 "$out/undef" "$out/def" | grep -Ev "$allowed" || true)
    if [ -n "$bad" ]; then
      echo "FAIL: $target $opt: src/core references" $bad
      status=1
    fi
  done
done
[ "$objects" -gt 0 ] || { echo "FAIL: no src/core files found"; exit 1; }
echo "compiled $objects objects; outside symbols allowed: $allowed"
exit $status
