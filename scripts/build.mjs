#!/usr/bin/env node
// `npm start` runs this first (prestart): the server's TypeScript, transpiled by esbuild (the compiler tsx
// uses) into one ES module, .build/main.mjs, with every package left as an import of node_modules. The
// server then runs on plain Node: no loader thread and no per-module transform cache in memory
// (bench/README.md). Tests still run the sources through tsx. The operator CLI (bin/svc.mjs) is compiled too, by
// build-cli.mjs: here, and on its own first start after a change of the sources.
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

await build({
  entryPoints: [path.join(root, 'src/main.ts')],
  outfile: path.join(root, '.build/main.mjs'),
  bundle: true,
  packages: 'external',
  platform: 'node',
  format: 'esm',
  target: 'node22',
  sourcemap: true,
  tsconfig: path.join(root, 'tsconfig.json'),
  logLevel: 'warning',
});

const { compiledCli } = await import('./build-cli.mjs');
await compiledCli();
