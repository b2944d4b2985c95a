#!/bin/sh
# fxtrace on aarch64 Linux: the project cross-built with cmake/aarch64-linux-gnu.cmake (the
# project of tests/aarch64: libfxtrace.a, libfxtrace.so, the demo and test programs of the
# suite, unchanged) into BUILD_DIR, incrementally, and run under qemu-aarch64:
#   - test_ring: the ring's unit tests (its lock-free code, its wraps, overwrite counts);
#   - test_emit: what each instrumentation style writes, on the CPU counter (CNTVCT_EL0) when
#     the session's check takes it, and again on CLOCK_MONOTONIC (FXTRACE_CLOCK);
#   - test_functions: the function tracer on -finstrument-functions, exact counts of fib's
#     calls, filters, longjmp, signals, threads;
#   - test_functions_pe, test_fn_profile_pe, test_fn_selftime_pe: the same and the profiler's
#     tests on the aarch64 patchable-entry engine (its switch FXT_FN_PE_AARCH64 on by default:
#     the sites' instructions patched live under qemu-aarch64);
#   - fn_dlopen.sh: libraries built with fxtrace-functions' flags (the engine's) loaded with
#     dlopen while function_graph is on, traced from their load; one found by the caller's
#     RUNPATH (the aarch64 dlopen wrapper keeps glibc's caller: functions_dl.c);
#   - fn_unwind.py (with the C++ cross compiler, g++-aarch64-linux-gnu; else left out, said):
#     C++ exceptions, pthread_exit, a forced unwind and a cancellation through frames whose
#     returns the engine redirected (functions_unwind_a64.c), against -finstrument-functions;
#     and 5 times built with -mbranch-protection=standard under -cpu max (pointer
#     authentication on: the saved return addresses signed);
#   - pac_kind: a saved return address whose pac-ret signature is 0 (-cpu max);
#   - stress_session (linked with libfxtrace.so): 4 threads' events in block mode, every one
#     in the file, and in discard mode, file + counted drops = emitted, per thread, exactly;
#   - the demo (libfxtrace.so, FXTRACE): its file read by this build's `fxtrace stats` (x86-64
#     reading what aarch64 wrote), which names the clock the session chose.
# Exit 77 (skipped) when the cross compiler, its sysroot or qemu-aarch64 is absent.
#   aarch64.sh FXTRACE_BIN SRC_DIR WORKDIR BUILD_DIR
. "$(dirname "$0")/common.sh"
src=$image
build=$4
sysroot=/usr/aarch64-linux-gnu
if ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || [ ! -e "$sysroot/lib/libc.so.6" ]; then
  echo "SKIP: aarch64-linux-gnu-gcc or its glibc not found (Debian: gcc-aarch64-linux-gnu" \
       "libc6-dev-arm64-cross; scripts/deps installs them)"
  exit 77
fi
if ! command -v qemu-aarch64 >/dev/null 2>&1; then
  echo "SKIP: qemu-aarch64 not found (Debian: qemu-user; scripts/deps installs it)"
  exit 77
fi
start=$(date +%s)
generator=
[ -f "$build/CMakeCache.txt" ] || generator="-G Ninja"
# shellcheck disable=SC2086
cmake -S "$src/tests/aarch64" -B "$build" $generator -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake" \
      >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log"; fail "configuring the aarch64 build"; }
cmake --build "$build" -j 2 --target test_ring test_emit test_functions stress_session demo \
      fxtrace_static fxtrace_shared test_functions_pe test_fn_profile_pe test_fn_selftime_pe \
      fn_dlopen fn_dl_lib fn_dl_lib2 pac_kind \
      >"$work/build.log" 2>&1 ||
  { tail -n 60 "$work/build.log"; fail "building for aarch64"; }
cxx=
if command -v aarch64-linux-gnu-g++ >/dev/null 2>&1; then
  cxx=yes
  cmake --build "$build" -j 2 --target fn_unwind fn_unwind_pe fn_unwind_pe_pac \
        >>"$work/build.log" 2>&1 ||
    { tail -n 60 "$work/build.log"; fail "building fn_unwind for aarch64"; }
fi
# ELF e_machine (bytes 18-19): 183, EM_AARCH64.
[ "$(od -An -tu2 -j18 -N2 "$build/test_ring" | tr -d ' ')" = 183 ] ||
  fail "test_ring is not an aarch64 program"
echo "aarch64 build: $(( $(date +%s) - start )) s"

# run NAME [-E VAR=VALUE]... PROGRAM ARGS...: the program under qemu-aarch64 (-E: its
# environment), its output in $work/NAME.out.
run() {
  name=$1
  shift
  t=$(date +%s)
  if ! timeout 300 qemu-aarch64 -L "$sysroot" "$@" >"$work/$name.out" 2>&1; then
    tail -n 40 "$work/$name.out"
    fail "$name under qemu-aarch64"
  fi
  echo "$name: passed ($(( $(date +%s) - t )) s)"
}
scratch_buffers aarch64
run test_ring "$build/test_ring"
run test_emit "$build/test_emit"
run test_emit_monotonic -E FXTRACE_CLOCK=monotonic "$build/test_emit"
run test_functions "$build/test_functions"
run test_functions_pe "$build/test_functions_pe"
run test_fn_profile_pe "$build/test_fn_profile_pe"
run test_fn_selftime_pe "$build/test_fn_selftime_pe"
rc=0
timeout 300 qemu-aarch64 -L "$sysroot" -cpu max "$build/pac_kind" >"$work/pac_kind.out" 2>&1 || rc=$?
case $rc in
  0) echo "pac_kind: passed" ;;
  77) echo "pac_kind: $(cat "$work/pac_kind.out")" ;;
  *) cat "$work/pac_kind.out"; fail "pac_kind under qemu-aarch64 -cpu max" ;;
esac
# qemu NAME PROGRAM: $work/NAME, a script that runs PROGRAM under qemu-aarch64 with its
# arguments (for the check scripts that run a program themselves).
qemu() {
  printf '#!/bin/sh\nexec timeout 300 qemu-aarch64 -L %s %s "$@"\n' "$sysroot" "$2" >"$work/$1"
  chmod +x "$work/$1"
}
qemu fn_dlopen.qemu "$build/fn_dlopen"
t=$(date +%s)
sh "$src/tests/check/fn_dlopen.sh" "$fxtrace" "$work/fn_dlopen.qemu" "$build/libfn_dl_lib.so" \
   "$build/libfn_dl_lib2.so" "$work/fn_dlopen" >"$work/fn_dlopen.out" 2>&1 ||
  { tail -n 40 "$work/fn_dlopen.out"; fail "fn_dlopen.sh under qemu-aarch64"; }
echo "fn_dlopen: passed ($(( $(date +%s) - t )) s)"
if [ -n "$cxx" ]; then
  qemu fn_unwind_pe.qemu "$build/fn_unwind_pe"
  qemu fn_unwind.qemu "$build/fn_unwind"
  t=$(date +%s)
  python3 "$src/tests/check/fn_unwind.py" "$fxtrace" "$work/fn_unwind_pe.qemu" \
          "$work/fn_unwind.qemu" "$work/fn_unwind" >"$work/fn_unwind.out" 2>&1 ||
    { tail -n 40 "$work/fn_unwind.out"; fail "fn_unwind.py under qemu-aarch64"; }
  echo "fn_unwind: passed ($(( $(date +%s) - t )) s)"
  # pac-ret: 5 runs (a signature of the trampoline's address is 0, so looks unsigned, about
  # once in 128 signings: without fxt_fn_pe_a64_kind about 1 run in 10 failed; pac_kind
  # checks that case itself).
  printf '#!/bin/sh\nexec timeout 300 qemu-aarch64 -cpu max -L %s %s "$@"\n' "$sysroot" \
         "$build/fn_unwind_pe_pac" >"$work/fn_unwind_pe_pac.qemu"
  chmod +x "$work/fn_unwind_pe_pac.qemu"
  t=$(date +%s)
  for i in 1 2 3 4 5; do
    python3 "$src/tests/check/fn_unwind.py" "$fxtrace" "$work/fn_unwind_pe_pac.qemu" \
            "$work/fn_unwind.qemu" "$work/fn_unwind_pac" >"$work/fn_unwind_pac.out" 2>&1 ||
      { tail -n 40 "$work/fn_unwind_pac.out"; fail "fn_unwind.py (pac-ret), run $i"; }
  done
  echo "fn_unwind_pac: passed ($(( $(date +%s) - t )) s)"
else
  echo "fn_unwind: left out (no aarch64-linux-gnu-g++: g++-aarch64-linux-gnu)"
fi
run stress_block "$build/stress_session" --mode block --threads 4 --records 100000 \
    --buffer-kb 64 --out "$work/stress_block.fxt"
run stress_discard "$build/stress_session" --mode discard --threads 4 --records 100000 \
    --buffer-kb 16 --out "$work/stress_discard.fxt"
run demo -E "FXTRACE=output=$work/demo.fxt;buffers=$shm" "$build/fxtrace/demo"
"$fxtrace" stats "$work/demo.fxt" >"$work/demo.stats" 2>&1 ||
  { cat "$work/demo.stats"; fail "fxtrace stats of the demo's aarch64 file"; }
grep -A1 '^clock:' "$work/demo.stats" | tail -n 1
grep -q '^ *[0-9][0-9]*  demo:' "$work/demo.stats" ||
  { cat "$work/demo.stats"; fail "no demo events"; }
echo "aarch64: $(( $(date +%s) - start )) s in all"
