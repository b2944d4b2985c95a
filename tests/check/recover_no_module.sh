#!/bin/sh
# A traced program that cannot load the recovery module (linked with libfxtrace.a and run from
# a directory without fxtrace-recover.so, none installed: src/host/harvest.h) finds dead
# sessions at its start: their buffers stay where they are, stderr says so once (why, and
# `fxtrace recover DIR`), and `fxtrace recover DIR` completes each output later: events +
# counted losses == N, exactly. The image is test_harvest, copied away from the module.
#   recover_no_module.sh FXTRACE_BIN TEST_HARVEST_BIN WORKDIR MODULE_DIR
. "$(dirname "$0")/common.sh"
[ ! -e "$4/fxtrace-recover.so" ] || { echo "SKIP: a recovery module is installed in $4"; exit 77; }
scratch_buffers nomodule
mkdir "$work/bin"
cp "$image" "$work/bin/image"

# Two processes emit 2000 events each and kill themselves: two dead sessions (the second one
# finds the first and leaves it too).
pids=
for k in 1 2; do
  FXTRACE="events=t:seq;buffers=$shm;output=$work/dead$k.fxt" "$work/bin/image" image 2000 kill 0 \
    >/dev/null 2>"$work/killed.err" &
  pid=$!
  st=0
  wait $pid || st=$?
  [ $st -eq 137 ] || { cat "$work/killed.err"; fail "the image exited $st, not by SIGKILL"; }
  pids="$pids $pid"
done

# A later traced process without the module: both left, said once.
FXTRACE="events=t:seq;buffers=$shm;output=$work/later.fxt" "$work/bin/image" image 0 exit \
  2>"$work/later.err" || { cat "$work/later.err"; fail "the later process"; }
n=$(grep -c "^fxtrace: the recovery module fxtrace-recover.so could not be loaded: .*; the buffers of processes that died stay in $shm (\`fxtrace recover $shm\` completes their traces)$" "$work/later.err") || true
[ "$n" = 1 ] || { cat "$work/later.err"; fail "said $n times, not once"; }
! grep -q "ended without stopping" "$work/later.err" || { cat "$work/later.err"; fail "harvested"; }
for pid in $pids; do
  [ -e "$shm/$pid.1/buffers" ] || { ls -laR "$shm"; fail "the buffers of pid $pid are gone"; }
done

# `fxtrace recover DIR` completes them.
"$fxtrace" recover "$shm" 2>"$work/recover.err" || { cat "$work/recover.err"; fail "recover"; }
for k in 1 2; do
  line=$("$fxtrace" stats "$work/dead$k.fxt" | grep '^total:') || fail "fxtrace stats dead$k"
  got=$(echo "$line" | sed -n 's/^total: \([0-9]*\) events.*; \([0-9]*\) dropped, \([0-9]*\) overrun, \([0-9]*\) lost$/\1 + \2 + \3 + \4/p')
  [ -n "$got" ] || fail "cannot read: $line"
  [ $(($got)) -eq 2000 ] || fail "dead$k: $(($got)) events and losses, 2000 emitted"
done
echo "left in place without the module, said once; fxtrace recover completed both (2000 each)"
