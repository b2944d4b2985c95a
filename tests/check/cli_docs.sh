#!/bin/sh
# The man pages and the bash completion `cmake --install` installs (generated from the
# command's help by cmake/fxtrace_docs.sh): installed into a prefix of the test's own, there is
# a page for fxtrace and for every command `fxtrace --help` lists, each renders without a
# warning and names its command and every option of its usage line; the completion, sourced in
# bash, offers every command at the first word and each command's options after it.
#   cli_docs.sh FXTRACE BUILD_DIR WORKDIR
. "$(dirname "$0")/common.sh"
build=$2
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install"; }
man1=$prefix/share/man/man1
completion=$prefix/share/bash-completion/completions/fxtrace
[ -f "$man1/fxtrace.1" ] || fail "no $man1/fxtrace.1"
[ -f "$completion" ] || fail "no $completion"

commands=$("$fxtrace" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' |
  grep -v -x -e help -e version)
[ -n "$commands" ] || fail "fxtrace --help lists no command"

# The words the completion offers for the command line "$@" (the last word being completed).
offered() {
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _fxtrace
           printf "%s\n" "${COMPREPLY[@]}"' sh "$completion" "$@"
}
first=$(offered fxtrace "")
for c in $commands help version; do
  echo "$first" | grep -q -x "$c" || fail "the completion does not offer $c"
done

for c in $commands; do
  page=$man1/fxtrace-$c.1
  [ -f "$page" ] || fail "no man page fxtrace-$c.1"
  groff -man -Tutf8 -ww -z "$page" 2>"$work/groff" || fail "groff $page"
  [ ! -s "$work/groff" ] || { cat "$work/groff"; fail "$page: groff warns"; }
  MANWIDTH=200 man -l "$page" 2>/dev/null | col -b >"$work/page" || fail "man -l $page"
  grep -q "^ *fxtrace-$c - " "$work/page" || fail "$page: no NAME line for fxtrace-$c"
  # Every option of the usage line: -x, --long, as [-x], [-x|--long], [--long VALUE].
  opts=$("$fxtrace" "$c" --help | head -n 1 | tr '[]|' '   ' | tr ' ' '\n' |
    grep -E '^--?[A-Za-z][A-Za-z0-9-]*$' || true)
  words=$(offered fxtrace "$c" -)
  for o in $opts; do
    grep -q -e "[ [|]$o[] |,=]" -e "[ [|]$o\$" "$work/page" || fail "$page does not name $o"
    echo "$words" | grep -q -x -- "$o" || fail "the completion of $c does not offer $o"
  done
  echo "fxtrace-$c.1: $(echo $opts)"
done
