// `npx tsx bench/idleCpu.ts [checkout …]`: what `npm start` costs at rest. Starts the product of each checkout (this
// tree by default) exactly as `npm start` does, with its default workers, on a fresh SQLite database, lets it settle,
// then reads its clock ticks (utime + stime of /proc/<pid>/stat, 100 a second) over IDLE_SECONDS (30) with no client
// connected. Several checkouts are measured at the same time, so they share the machine's load. Prints ticks and the
// share of one core, with the load average.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, productArgs, productEnv, startChildServer, type ChildServer } from './childServer.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const seconds = Number(process.env.IDLE_SECONDS ?? 30);
const settleMs = 5000;

async function main(): Promise<void> {
  const checkouts = process.argv.length > 2 ? process.argv.slice(2).map((p) => path.resolve(p)) : [ROOT];
  const dirs: string[] = [];
  const servers: ChildServer[] = [];
  try {
    for (const checkout of checkouts) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-idle-'));
      dirs.push(dir);
      const port = await freePort();
      const env = productEnv(dir, port, { LOG_LEVEL: 'warn' });
      // the workers as `npm start` runs them: its own default, not the bench's
      delete env.SVC_WORKER;
      if (process.env.SVC_WORKER) env.SVC_WORKER = process.env.SVC_WORKER;
      servers.push(await startChildServer({ name: checkout, args: productArgs(checkout), env, port, cwd: checkout }));
    }
    await new Promise((r) => setTimeout(r, settleMs));
    const load0 = os.loadavg()[0];
    const before = servers.map((s) => s.cpuMs());
    await new Promise((r) => setTimeout(r, seconds * 1000));
    const load1 = os.loadavg()[0];
    servers.forEach((s, i) => {
      const ticks = (s.cpuMs() - before[i]) / 10;
      console.log(
        `${s.name}: ${ticks} clock ticks in ${seconds} s with no client = ${(ticks / seconds).toFixed(2)} % of a core ` +
          `(load average ${load0.toFixed(1)} → ${load1.toFixed(1)})`,
      );
    });
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
