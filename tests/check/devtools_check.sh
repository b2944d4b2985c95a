#!/bin/sh
# The JSON a user opens shows what the FXT file holds: the demo recorded, converted with
# `fxtrace convert --to json`, and loaded in Chromium's DevTools Performance panel (headless
# Chromium driven by playwright-core, tests/browser/devtools_load.mjs); the threads, tracks,
# slices (count, start, duration) and flows the panel built are checked against
# `fxtrace stats` and `fxtrace report` of the FXT file (devtools_compare.py).
#   devtools_check.sh FXTRACE_BIN DEMO_BIN WORKDIR
# Exits 77 (skipped) without Chromium (FXT_CHROMIUM, else /usr/bin/chromium; Debian
# chromium), node, python3 or playwright-core in tests/browser/node_modules (scripts/deps
# installs them when it can: chromium as root, playwright-core with npm ci).
set -eu
fxtrace=$1
demo=$2
work=$3
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

# The demo as scripts/demo records it, shorter; 64 MiB buffers so that nothing is lost on a
# loaded machine (the report's pairs are then the whole truth).
"$fxtrace" record -e 'demo:*,printk:*' -b 65536 -o "$work/demo.fxt" -- "$demo" --duration 1 \
  >"$work/record.log" 2>&1 || { cat "$work/record.log"; echo "FAIL: record"; exit 1; }
"$fxtrace" convert "$work/demo.fxt" --to json -o "$work/demo.json"
"$fxtrace" stats "$work/demo.fxt" >"$work/stats.txt"
"$fxtrace" report "$work/demo.fxt" >"$work/report.txt"

FXT_CHROMIUM=$chromium timeout 240 \
  node "$browser/devtools_load.mjs" "$work/demo.json" "$work/model.json" ||
  { echo "FAIL: DevTools did not load $work/demo.json"; exit 1; }
python3 "$here/devtools_compare.py" "$work/model.json" "$work/stats.txt" "$work/report.txt"
rm -rf "$work"
echo "ok"
