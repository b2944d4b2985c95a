#!/bin/sh
# Runs the MCU test programs of one cross build under QEMU: run.sh CPU BOARD BUILD_DIR TEST...
# Each runs with semihosting (its output here, its exit status QEMU's) and a timeout, and
# passes on status 0. Exit 77 (skipped) when arm-none-eabi-gcc or qemu-system-arm is absent.
set -eu
cpu=$1
board=$2
dir=$3
shift 3
if [ ! -f "$dir/build.ninja" ] && [ ! -f "$dir/Makefile" ]; then
  echo "SKIP: no MCU build in $dir: arm-none-eabi-gcc was not found when CMake ran" \
       "(Debian: gcc-arm-none-eabi libnewlib-arm-none-eabi; scripts/deps installs them)"
  exit 77
fi
qemu=$(command -v qemu-system-arm || true)
if [ -z "$qemu" ]; then
  echo "SKIP: qemu-system-arm not found (Debian: qemu-system-arm; scripts/deps installs it)"
  exit 77
fi
size=$(command -v arm-none-eabi-size || true)
if [ -n "$size" ] && [ -f "$dir/libfxtrace_core.a" ]; then
  "$size" -t "$dir/libfxtrace_core.a" | awk '{print "core " $0}'
fi
status=0
for t in "$@"; do
  set -- -M "$board" -cpu "$cpu"
  if [ "$board" = microbit ]; then
    # RAM as large as the program's linker script made it (its stack starts at the top):
    # 16 KiB, the nRF51822's, unless the program needs more.
    top=$(arm-none-eabi-nm "$dir/$t.elf" | awk '$3 == "__stack_top" {print $1}')
    ram=$(( 0x$top - 0x20000000 ))
    [ "$ram" -le 16384 ] || set -- "$@" -global nrf51-soc.sram-size=$ram
  fi
  echo "== $t: qemu-system-arm $*"
  if ! timeout 120 "$qemu" "$@" -nographic -monitor none \
         -semihosting-config enable=on,target=native -kernel "$dir/$t.elf"; then
    echo "FAIL: $t on $board ($cpu)"
    status=1
  fi
done
exit $status
