#!/bin/sh
# The man pages and the bash completion of the fxtrace command, generated from its own help
# texts (one source: the command table of tools/fxtrace/main.c, `fxtrace --help`, and each
# command's usage, `fxtrace CMD --help`), so they cannot say other than the command does.
#   fxtrace_docs.sh FXTRACE OUTDIR VERSION
# writes OUTDIR/man1/fxtrace.1, OUTDIR/man1/fxtrace-CMD.1 for each command, and
# OUTDIR/completions/fxtrace. Run by the build after the command is linked (CMakeLists.txt).
set -eu
fxtrace=$1
out=$2
version=$3
mkdir -p "$out/man1" "$out/completions"

# The commands and their one-line summaries: the "commands:" lines of `fxtrace --help`
# ("  NAME     summary"), help and version aside (they are fxtrace.1's).
commands=$("$fxtrace" --help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' |
  grep -v -x -e help -e version)
summary() {
  "$fxtrace" --help | sed -n "s/^  $1  *//p" | head -n 1
}

# Text for troff: backslashes and hyphens escaped, a leading '.' or "'" made literal.
roff() {
  sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
}

# The options of a command, from its help: the usage lines and the lines that describe an
# option (indented, starting with '-'), so that names quoted in prose (another tool's) are not.
options() {
  "$fxtrace" "$1" --help | sed -n -e '/^usage:/,/^$/p' -e '/^  *-/p' |
    grep -o -E '(^|[][ ,|(])--?[A-Za-z][A-Za-z0-9-]*' | sed 's/^[][ ,|(]//' |
    grep -v -x -e '--' | sort -u
}

date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d 2>/dev/null || date -u +%Y-%m-%d)
page() { # NAME SUMMARY (stdin: the help, whose usage lines are the synopsis)
  printf '.TH %s 1 "%s" "fxtrace %s" "User Commands"\n' "$(echo "$1" | tr a-z A-Z)" "$date" \
    "$version"
  printf '.SH NAME\n%s \\- %s\n' "$(echo "$1" | roff)" "$(echo "$2" | roff)"
  printf '.SH SYNOPSIS\n.nf\n'
  sed -n '/^usage:/,/^$/p' | sed -e 's/^usage: //' -e 's/^       //' -e '/^$/d' | roff
  printf '.fi\n'
}

help=$(mktemp)
trap 'rm -f "$help"' EXIT
"$fxtrace" --help >"$help"
{
  page fxtrace "a tracer of C programs: record, report, convert and control traces" <"$help"
  printf '.SH DESCRIPTION\n.nf\n'
  sed -n '/^commands:/,$p' "$help" | roff
  printf '.fi\n.SH SEE ALSO\n'
  first=1
  for c in $commands; do
    [ $first = 1 ] || printf ',\n'
    printf '.BR fxtrace\\-%s (1)' "$c"
    first=0
  done
  printf '\n'
} >"$out/man1/fxtrace.1"

for c in $commands; do
  "$fxtrace" "$c" --help >"$help"
  {
    page "fxtrace-$c" "$(summary "$c")" <"$help"
    printf '.SH DESCRIPTION\n.nf\n'
    sed '1,/^$/d' "$help" | roff
    printf '.fi\n.SH SEE ALSO\n.BR fxtrace (1)\n'
  } >"$out/man1/fxtrace-$c.1"
done

# bash: the command names first, then each command's options, else file names.
{
  printf '# bash completion of fxtrace %s (generated from its help by cmake/fxtrace_docs.sh)\n' \
    "$version"
  printf '_fxtrace() {\n'
  printf '  local cur=${COMP_WORDS[COMP_CWORD]} opts=\n'
  printf '  if [ "$COMP_CWORD" -eq 1 ]; then\n'
  printf '    COMPREPLY=($(compgen -W "%s help version --help --version" -- "$cur"))\n' \
    "$(echo $commands)"
  printf '    return\n  fi\n'
  printf '  case ${COMP_WORDS[1]} in\n'
  printf '  help) [ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "%s" -- "$cur")); return ;;\n' \
    "$(echo $commands)"
  for c in $commands; do
    printf '  %s) opts="%s" ;;\n' "$c" "$(echo $(options "$c"))"
  done
  printf '  esac\n'
  printf '  if [[ $cur == -* ]]; then\n'
  printf '    COMPREPLY=($(compgen -W "$opts" -- "$cur"))\n'
  printf '  else\n'
  printf '    COMPREPLY=($(compgen -f -- "$cur"))\n'
  printf '  fi\n}\n'
  printf 'complete -o filenames -o bashdefault -F _fxtrace fxtrace\n'
} >"$out/completions/fxtrace"
