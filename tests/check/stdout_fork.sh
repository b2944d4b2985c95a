#!/bin/sh
# A parent and its child of fork tracing to one stdout (a regular file) write to it in turns,
# so that their writes interleave: the child's head, then the parent's events from before the
# fork, the child's, the parent's, the child's last, the parent's last (test_harvest image N
# interleave). Each write begins with a provider section record naming its process, and the
# readers keep string and thread tables per provider: `fxtrace stats` counts exactly 4 N
# events for the parent and 2 N for the child, and `fxtrace report` and `fxtrace convert`
# (JSON) give every event its own process's pid and tid (seq 100..., 1000..., 3000..., 5000...:
# the parent's; 2000..., 4000...: the child's). Appended to a file opened O_APPEND too.
#   stdout_fork.sh FXTRACE_BIN TEST_HARVEST_BIN WORKDIR
. "$(dirname "$0")/common.sh"
scratch_buffers stdout-fork
N=50

for how in truncate append; do
  out="$work/$how.fxt"
  if [ $how = truncate ]; then
    FXTRACE="events=t:seq;buffers=$shm;output=fd:1" "$image" image $N interleave >"$out" \
      2>"$work/err" || { cat "$work/err"; fail "$how: the image failed"; }
  else
    : >"$out"
    FXTRACE="events=t:seq;buffers=$shm;output=fd:1" "$image" image $N interleave >>"$out" \
      2>"$work/err" || { cat "$work/err"; fail "$how: the image failed"; }
  fi
  child=$(sed -n 's/^child \([0-9]*\)$/\1/p' "$work/err")
  [ -n "$child" ] || { cat "$work/err"; fail "$how: no child said"; }
  # fxtrace check: the provider section records are no violation (the child's head has a
  # magic record inside the file, as it had before them: its only one).
  "$fxtrace" check "$out" >"$work/check" 2>&1 || true
  ! grep -v -e "magic record inside the file" -e " violations* (" -e ": ok" "$work/check" ||
    fail "$how: fxtrace check"

  "$fxtrace" stats "$out" >"$work/stats" || fail "$how: fxtrace stats"
  got_child=$(awk -v p="$child" '$1 == p && NF == 7 { s += $4 } END { print s + 0 }' "$work/stats")
  got_other=$(awk -v p="$child" '$1 ~ /^[0-9]+$/ && $1 != p && NF == 7 { s += $4; n++ }
                                 END { print s + 0, n + 0 }' "$work/stats")
  echo "$how: child $child: $got_child events; parent: $got_other (events, threads)"
  [ "$got_child" -eq $((2 * N)) ] || { cat "$work/stats"; fail "$how: child $got_child events, not $((2 * N))"; }
  [ "$got_other" = "$((4 * N)) 1" ] || { cat "$work/stats"; fail "$how: parent $got_other, not $((4 * N)) 1"; }

  # Every event line: comm-TID ... seq=S; S's thousands say whose it is.
  "$fxtrace" report "$out" >"$work/report" || fail "$how: fxtrace report"
  bad=$(awk -v c="$child" '/ seq: seq=/ {
          tid = $1; sub(/.*-/, "", tid); s = $NF; sub(/seq=/, "", s); k = int(s / 1000)
          mine = (k == 2 || k == 4)
          if ((tid == c) != mine) { print; n++ }
          total++ }
        END { if (total != 6 * '$N') print "events: " total }' "$work/report")
  [ -z "$bad" ] || { echo "$bad" | head; fail "$how: events of the wrong process in the report"; }

  # The same in Chrome JSON.
  "$fxtrace" convert "$out" -o "$work/$how.json" 2>/dev/null || fail "$how: fxtrace convert"
  bad=$(grep -o '"name":"seq","pid":[0-9]*,"tid":[0-9]*,[^}]*"seq":[0-9]*' "$work/$how.json" |
        awk -F'[:,]' -v c="$child" '{ k = int($NF / 1000); mine = (k == 2 || k == 4)
                                      if (($4 == c) != mine || ($6 == c) != mine) { print; n++ }
                                      total++ }
                                    END { if (total != 6 * '$N') print "events: " total }')
  [ -z "$bad" ] || { echo "$bad" | head; fail "$how: events of the wrong process in the JSON"; }
done
echo "stdout_fork: ok"
