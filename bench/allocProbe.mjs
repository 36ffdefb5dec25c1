// Preloaded into the product by bench/allocProfile.ts (`node --import ./bench/allocProbe.mjs …`): V8's sampling
// heap profiler, keeping the objects later collected by scavenges and mark-compacts too (so it shows what is
// allocated, not only what survives). SIGUSR2 stops it and writes the profile to ALLOC_PROBE_OUT (a temporary
// file renamed over it). Nothing else in the process changes.
import fs from 'node:fs';
import { Session } from 'node:inspector';

const out = process.env.ALLOC_PROBE_OUT;
if (out) {
  const session = new Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) => session.post(method, params, (err, r) => (err ? reject(err) : resolve(r))));
  const started = post('HeapProfiler.enable').then(() =>
    post('HeapProfiler.startSampling', {
      samplingInterval: Number(process.env.ALLOC_PROBE_INTERVAL ?? 4096),
      includeObjectsCollectedByMajorGC: true,
      // ALLOC_PROBE_OLD=1: leave out what scavenges collect, so only what reached the old generation is counted
      includeObjectsCollectedByMinorGC: process.env.ALLOC_PROBE_OLD !== '1',
    }),
  );
  process.on('SIGUSR2', () => {
    started
      .then(() => post('HeapProfiler.stopSampling'))
      .then(
        ({ profile }) => {
          fs.writeFileSync(`${out}.tmp`, JSON.stringify(profile));
          fs.renameSync(`${out}.tmp`, out);
        },
        (err) => process.stderr.write(`allocProbe: ${err}\n`),
      );
  });
}
