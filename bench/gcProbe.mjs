// Preloaded into the product by bench/gcCost.ts (`node --import ./bench/gcProbe.mjs …`): counts the garbage
// collector's pauses by kind and the growth of the old generation seen after each scavenge (what scavenges
// promoted, plus anything allocated there directly), and writes the running totals to GC_PROBE_OUT every
// 100 ms (a temporary file renamed over it). Nothing else in the process changes.
import fs from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { setInterval } from 'node:timers';
import v8 from 'node:v8';

const out = process.env.GC_PROBE_OUT;
if (out) {
  // the two kinds gcCost.ts reads; incremental marking and weak callbacks are left out
  const KINDS = {
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'markCompact',
  };
  const oldUsed = () =>
    v8.getHeapSpaceStatistics().reduce((sum, s) => (s.space_name.startsWith('new') ? sum : sum + s.space_used_size), 0);
  const totals = { scavenge: { n: 0, ms: 0 }, markCompact: { n: 0, ms: 0 }, oldGrowth: 0 };
  let lastOld = oldUsed();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = KINDS[e.detail?.kind];
      if (kind) {
        totals[kind].n++;
        totals[kind].ms += e.duration;
      }
      const now = oldUsed();
      if (kind === 'scavenge' && now > lastOld) totals.oldGrowth += now - lastOld;
      lastOld = now;
    }
  }).observe({ entryTypes: ['gc'] });
  // written whole, then renamed over the last: a reader never sees a file half written
  setInterval(() => {
    fs.writeFileSync(`${out}.tmp`, JSON.stringify(totals));
    fs.renameSync(`${out}.tmp`, out);
  }, 100).unref();
}
