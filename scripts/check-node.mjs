#!/usr/bin/env node
// Refuses an unsupported Node.js with one line before anything else runs (npm start, npm test, npx svc).
// Kept to syntax every Node can parse, so an old Node gets this message rather than a syntax error or a
// native crash. The supported range is package.json's engines.node (">=22").
import { readFileSync } from 'node:fs';

const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const needed = Number(/\d+/.exec(engines.node)[0]);
const found = Number(process.versions.node.split('.')[0]);

if (found < needed) {
  process.stderr.write(`svc needs Node.js ${engines.node} (24 LTS recommended); this is Node.js ${process.version}. `
    + 'Install Node 24, or run: source scripts/node.sh 24\n');
  process.exit(1);
}
