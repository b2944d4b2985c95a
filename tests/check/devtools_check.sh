#!/bin/sh
# The JSON a user opens shows what the FXT file holds: the demo and devtools_events (flows in
# nested slices across threads) recorded, converted with `fxtrace convert --to json` and
# loaded in Chromium's DevTools Performance panel (headless Chromium driven by playwright-core,
# tests/browser/devtools_load.mjs); the threads, tracks, slices (count, start, duration) and
# flows the panel built are checked against `fxtrace stats` and `fxtrace report` of the FXT
# file (devtools_compare.py).
#   devtools_check.sh FXTRACE_BIN DEMO_BIN DEVTOOLS_EVENTS_BIN WORKDIR
# Exits 77 (skipped) without Chromium (FXT_CHROMIUM, else /usr/bin/chromium; Debian
# chromium), node, python3 or playwright-core in tests/browser/node_modules (scripts/deps
# installs them when it can: chromium as root, playwright-core with npm ci).
set -eu
fxtrace=$1
demo=$2
nested=$3
work=$4
here=$(cd "$(dirname "$0")" && pwd)
browser=$(cd "$here/../browser" && pwd)
chromium=${FXT_CHROMIUM:-/usr/bin/chromium}
skip() { echo "SKIP: $1"; exit 77; }
[ -x "$chromium" ] || skip "no Chromium at $chromium (Debian: apt-get install chromium)"
command -v node >/dev/null 2>&1 || skip "node not found (Debian: apt-get install nodejs)"
command -v python3 >/dev/null 2>&1 || skip "python3 not found"
[ -f "$browser/node_modules/playwright-core/package.json" ] ||
  skip "playwright-core not installed (scripts/deps, or: cd tests/browser && npm ci)"
rm -rf "$work"
mkdir -p "$work"

# The demo as scripts/demo records it, shorter; and devtools_events, flows in slices nested
# three deep. 64 MiB buffers so that nothing is lost on a loaded machine (the report's pairs
# are then the whole truth).
record() { # name events command...
  name=$1
  events=$2
  shift 2
  "$fxtrace" record -e "$events" -b 65536 -o "$work/$name.fxt" -- "$@" >"$work/record.log" 2>&1 ||
    { cat "$work/record.log"; echo "FAIL: record $name"; exit 1; }
  "$fxtrace" convert -q "$work/$name.fxt" --to json -o "$work/$name.json"
  "$fxtrace" stats "$work/$name.fxt" >"$work/$name.stats"
  "$fxtrace" report "$work/$name.fxt" >"$work/$name.report"
}
record demo 'demo:*,printk:*' "$demo" --duration 1
record nested 'nest:*' "$nested" 300

FXT_CHROMIUM=$chromium timeout 240 node "$browser/devtools_load.mjs" \
  "$work/demo.json" "$work/demo.model" "$work/nested.json" "$work/nested.model" ||
  { echo "FAIL: DevTools did not load the JSON"; exit 1; }
for name in demo nested; do
  python3 "$here/devtools_compare.py" "$work/$name.model" "$work/$name.stats" "$work/$name.report"
done
rm -rf "$work"
echo "ok"
