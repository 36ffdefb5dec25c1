#!/usr/bin/env node
// The operator command line, compiled from src/cli by scripts/build-cli.mjs: built on the first start after the
// sources change, never older than them.
// The Node.js check comes first, from a module with no dependencies: an unsupported Node stops with one line.
// `npx svc` finds node_modules/.bin/node first on PATH (the Node npm install provisioned on an older machine);
// started another way on that old Node (./node_modules/.bin/svc from a shell), it hands over to that Node.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { nodeProblem, provisionedNode } from '../scripts/check-node.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
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

// V8's compiled code of every module loaded (the CLI's chunks, typeorm, zod, …) is kept in .build/compile-cache and
// reused by the next start, which then compiles nothing again. Not under node_modules: a change there makes npm
// read the whole tree again on every `npx`.
const { enableCompileCache } = await import('node:module');
enableCompileCache?.(path.join(root, '.build', 'compile-cache'));

const { compiledCli } = await import('../scripts/build-cli.mjs');
await import(await compiledCli());
