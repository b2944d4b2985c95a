#!/bin/sh
# Calls and includes point down only (docs/architecture.md, "Layers"): the core (src/core)
# uses nothing above it, the base (src/base) only the core, the tracer (src/host) and the
# formats library (src/formats) the base and the core but not each other, the command (tools)
# the formats library, the base and the tracer's public API; the function tracer's shim
# (src/fnshim, libfxtrace-functions) only the public headers (it calls the tracer through
# fxtrace/detail/fn_shim.h); the public headers (include) include only each other.
#   Includes: every `#include "..."` of src, tools and include, resolved as the compiler does
#   (the including file's directory, then include/, then src/ for the command), and its layer
#   compared with the includer's. An include that resolves nowhere fails too.
#   Calls: the objects of each layer (colon-separated lists) reference no symbol an object of
#   a layer above or beside it defines, but the command the tracer's exported API (the core's
#   and the host's functions with default visibility, FXT_API) and the core the embedder's
#   hook fxt_platform_ticks, which the tracer defines (as freestanding.sh allows it).
# Usage: layers.sh SRC_DIR CORE_OBJS BASE_OBJS HOST_OBJS FORMATS_OBJS TOOL_OBJS
set -eu
src=$1
status=0

# (Functions set variables rather than print: no subshell per include.)
layer_of() { # a path relative to SRC_DIR -> $layer
  case $1 in
    include/*) layer=public ;;
    src/core/*) layer=core ;;
    src/base/*) layer=base ;;
    src/host/*) layer=host ;;
    src/formats/*) layer=formats ;;
    src/fnshim/*) layer=fnshim ;;
    tools/*) layer=tools ;;
    *) layer=other ;;
  esac
}
normalize() { # a relative path with . and .. in it -> $path without them
  path=
  set -f
  old_ifs=$IFS
  IFS=/
  for c in $1; do
    case $c in
      '' | .) ;;
      ..) path=${path%/*} ;;
      *) path=$path/$c ;;
    esac
  done
  IFS=$old_ifs
  set +f
  path=${path#/}
}
allowed() { # layer of the includer or caller, layer of what it uses -> 0 when it may
  case "$1:$2" in
    public:public) return 0 ;;
    core:core | core:public) return 0 ;;
    base:base | base:core | base:public) return 0 ;;
    host:host | host:base | host:core | host:public) return 0 ;;
    formats:formats | formats:base | formats:core | formats:public) return 0 ;;
    tools:tools | tools:formats | tools:base | tools:public) return 0 ;;
    fnshim:fnshim | fnshim:public) return 0 ;;
  esac
  return 1
}

cd "$src"
files=0
for f in $(find src tools include -name '*.[ch]' | sort); do
  files=$((files + 1))
  layer_of "$f"
  from=$layer
  dir=${f%/*}
  for inc in $(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f"); do
    target=
    for cand in "$dir/$inc" "include/$inc" "src/$inc"; do
      # only the command has src/ on its include path
      if [ -f "$cand" ] && { [ "$cand" != "src/$inc" ] || [ "$from" = tools ]; }; then
        normalize "$cand"
        target=$path
        break
      fi
    done
    layer_of "$target"
    if [ -z "$target" ]; then
      echo "FAIL: $f includes \"$inc\", which resolves to no file"
      status=1
    elif ! allowed "$from" "$layer"; then
      echo "FAIL: $f ($from) includes $target ($layer)"
      status=1
    fi
  done
done
[ "$files" -gt 100 ] || { echo "FAIL: only $files files found under $src"; exit 1; }

# Calls, by the symbols the objects define and reference.
nm=$(command -v nm)
shift
objs() { echo "$1" | tr ':' ' '; }
defined() { "$nm" --defined-only $(objs "$1") | awk 'NF == 3 && $2 ~ /[TDBRVWtdbr]/ {print $3}' | sort -u; }
undefined() { "$nm" -u $(objs "$1") | awk 'NF && $NF !~ /:$/ {print $NF}' | sort -u; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
for l in core base host formats tools; do
  i=$((i + 1))
  eval "o=\${$i}"
  [ -n "$o" ] || { echo "FAIL: no objects for $l"; exit 1; }
  defined "$o" >"$tmp/$l.def"
  undefined "$o" >"$tmp/$l.undef"
done
# The tracer's API: what the core's and its objects define with default visibility (FXT_API).
for o in $(objs "$1") $(objs "$3"); do
  readelf -sW "$o" | awk '$5 == "GLOBAL" && $6 == "DEFAULT" && $7 != "UND" {print $8}'
done | sort -u >"$tmp/api"
for from in core base host formats tools; do
  for to in core base host formats tools; do
    allowed "$from" "$to" && continue
    comm -12 "$tmp/$from.undef" "$tmp/$to.def" >"$tmp/bad"
    if [ "$from" = core ]; then # the embedder's time source (fxtrace/writer.h), the tracer's
      grep -vx fxt_platform_ticks "$tmp/bad" >"$tmp/bad2" || true
      mv "$tmp/bad2" "$tmp/bad"
    fi
    if [ "$from" = tools ] && { [ "$to" = host ] || [ "$to" = core ]; }; then
      comm -23 "$tmp/bad" "$tmp/api" >"$tmp/bad2" && mv "$tmp/bad2" "$tmp/bad"
    fi
    if [ -s "$tmp/bad" ]; then
      echo "FAIL: $from calls into $to:" $(cat "$tmp/bad")
      status=1
    fi
  done
done
echo "checked the includes of $files files and the calls between the layers' objects"
exit $status
