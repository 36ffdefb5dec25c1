#!/usr/bin/env node
// The operator command line. Loads the TypeScript entry through tsx, so no build step is needed.
// The Node.js check comes first, from a module with no dependencies: an unsupported Node stops with one line.
// `npx svc` finds node_modules/.bin/node first on PATH (the Node npm install provisioned on an older machine);
// started another way on that old Node (./node_modules/.bin/svc from a shell), it hands over to that Node.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { nodeProblem, provisionedNode } from '../scripts/check-node.mjs';

const problem = nodeProblem();
if (problem) {
  const provisioned = provisionedNode();
  if (!provisioned) {
    process.stderr.write(`${problem}\n`);
    process.exit(1);
  }
  const r = spawnSync(provisioned, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}

const { register } = await import('tsx/esm/api');
register();
await import('../src/cli/main.ts');
