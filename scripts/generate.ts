// `npm run generate`: writes everything derived from the code (scripts/derived.ts): the event catalog, the
// migrations index, the typed client, the guides' tables and figures. A file another one is derived from (the
// event catalog) is read when this process starts, so it runs again in a fresh process until nothing changes.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, staleFiles } from './derived.js';

const round = Number(process.env.GENERATE_ROUND ?? '0');
const stale = await staleFiles();
for (const { file, expected } of stale) {
  fs.writeFileSync(path.join(ROOT, file), expected);
  console.log(`wrote ${file}`);
}
if (stale.length > 0 && round < 3) {
  const again = spawnSync(process.execPath, process.execArgv.concat(process.argv.slice(1)), {
    stdio: 'inherit',
    env: { ...process.env, GENERATE_ROUND: String(round + 1) },
  });
  process.exit(again.status ?? 1);
}
if (stale.length > 0) {
  console.error('npm run generate: the derived files did not settle after 4 rounds');
  process.exit(1);
}
if (round === 0) console.log('everything derived is up to date');
