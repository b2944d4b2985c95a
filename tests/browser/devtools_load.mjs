// Opens Chrome trace-event JSON files the way a user does in Chromium's DevTools Performance
// panel ("Load profile...", TimelinePanel.loadFromFile) and writes what the panel built from
// each as JSON, for tests/check/devtools_compare.py to check.
//
//   node devtools_load.mjs TRACE.json MODEL.json [TRACE2.json MODEL2.json ...]
//
// Chromium (FXT_CHROMIUM, else /usr/bin/chromium) runs headless, driven by playwright-core
// (npm, installed in this folder by scripts/deps). The page is the DevTools front end bundled
// in Chromium, devtools://devtools/bundled/trace_app.html (the standalone trace viewer); its
// Performance panel is shown, each file is handed to it in turn (as "Load profile..." again),
// and once it has loaded the trace the panel's parsed trace is read back (the data its tracks
// and arrows are drawn from):
//   threads  Renderer.processes: per (pid, tid) the thread name and every slice (name, ts,
//            dur, and fxt_be, the converter's mark of a begin/end pair)
//   flows    Flows.flows: each flow as the slices it binds to, in order (pid, tid, ts)
//   tracks   the flame chart's track groups (what the panel shows on the left): name and
//            nesting level (a process, then its threads one level down)
//   entries  the number of entries in the flame chart's timeline data
//   untreed  the slices the panel left out of its thread trees (Renderer.entryToNode; the
//            flame chart draws no such slice): per slice [tid, name, ts, dur], for the message
//   shown    the trace events of the file the parsed trace holds, per phase
// Exits 1 with a message when the panel fails to load a file within 120 s.
import { chromium } from 'playwright-core';
import fs from 'node:fs';

const args = process.argv.slice(2);
if (args.length === 0 || args.length % 2) {
  console.error('usage: node devtools_load.mjs TRACE.json MODEL.json [TRACE.json MODEL.json]...');
  process.exit(2);
}

// The panel's model of one file, or { error }; the page shows the Performance panel.
async function load(page, input) {
  const text = fs.readFileSync(input, 'utf8');
  const model = await page.evaluate(async ({ text, name }) => {
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const Timeline = await import('./panels/timeline/timeline.js');
    const UI = await import('./ui/legacy/legacy.js');
    // The app opens on another panel: show Performance, which creates the TimelinePanel.
    let panel = null;
    for (let i = 0; i < 1200 && !panel; i++) {
      try {
        panel = Timeline.TimelinePanel.TimelinePanel.instance();
      } catch {
        if (i % 20 === 0) UI.ViewManager.ViewManager.instance().showView('timeline');
        await sleep(100);
      }
    }
    if (!panel) return { error: 'the Performance panel did not open' };
    const t0 = performance.now();
    await panel.loadFromFile(new File([text], name, { type: 'application/json' }));
    let data = null;
    for (let i = 0; i < 1200 && !data; i++) {
      await sleep(100);
      if (panel.state !== 'Idle') continue;
      try {
        data = panel.getParsedTraceForLayoutTests();
      } catch {
        /* not loaded yet */
      }
      if (data === globalThis.fxtLastTrace) data = null; // still the file before
    }
    if (!data) return { error: 'the panel did not load the trace (state ' + panel.state + ')' };
    const loadMs = performance.now() - t0;
    globalThis.fxtLastTrace = data;

    const threads = [];
    const shown = {};
    const untreed = [];
    const treed = data.Renderer.entryToNode;
    for (const [pid, proc] of data.Renderer.processes) {
      for (const [tid, th] of proc.threads) {
        const slices = th.entries.map(
          (e) => [e.name, e.ts, e.dur ?? null, e.fxt_be === 1, e.ph]);
        for (const e of th.entries) {
          shown[e.ph] = (shown[e.ph] || 0) + 1;
          if (treed && !treed.has(e)) untreed.push([tid, e.name, e.ts, e.dur ?? null]);
        }
        threads.push({ pid, tid, name: th.name ?? null, slices });
      }
    }
    const flows = data.Flows.flows.map((f) => f.map((e) => [e.pid, e.tid, e.name, e.ts]));
    const timeline = panel.getFlameChart().getMainDataProvider().timelineData();
    const tracks = (timeline.groups || []).map((g) => [g.name, g.style?.nestingLevel ?? null]);
    return { loadMs, threads, flows, tracks, entries: timeline.entryLevels.length, shown,
             untreed };
  }, { text, name: input.split('/').pop() });
  return model;
}

const t0 = Date.now();
const browser = await chromium.launch({
  executablePath: process.env.FXT_CHROMIUM || '/usr/bin/chromium',
  // No sandbox: the suite may run as root (in a container), where Chromium refuses one.
  args: ['--no-sandbox'],
  timeout: 120000,
});
try {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto('devtools://devtools/bundled/trace_app.html', { timeout: 120000 });
  console.log(`devtools: Chromium and DevTools up in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  for (let i = 0; i < args.length; i += 2) {
    const started = Date.now();
    const model = await load(page, args[i]);
    if (model.error) {
      console.error(`FAIL: ${args[i]}: ${model.error}`);
      process.exitCode = 1;
      break;
    }
    fs.writeFileSync(args[i + 1], JSON.stringify(model));
    const slices = model.threads.reduce((n, t) => n + t.slices.length, 0);
    console.log(`devtools: ${args[i]}: ${model.threads.length} threads, ${slices} slices, ` +
      `${model.flows.length} flows, ${model.tracks.length} tracks; loaded in ` +
      `${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  if (errors.length) console.error('page errors:\n  ' + errors.join('\n  '));
} finally {
  await browser.close();
}
