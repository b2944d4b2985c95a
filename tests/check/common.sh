# Sourced first by the check scripts run as `NAME.sh FXTRACE_BIN IMAGE_BIN WORKDIR` (IMAGE_BIN:
# the traced program, test_harvest, or what the script's usage line names in its place, which
# the script may give its own name): strict mode; $fxtrace, $image, and $work made afresh;
# fail MESSAGE; scratch_buffers NAME sets $shm to a buffers directory of the script's own on
# /dev/shm, removed when the script exits.
#   . "$(dirname "$0")/common.sh"
set -eu
fxtrace=$1
image=$2
work=$3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }
scratch_buffers() {
  shm=$(mktemp -d "/dev/shm/fxtrace-test-$1.XXXXXX")
  trap 'rm -rf "$shm"' EXIT
}
