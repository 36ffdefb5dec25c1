#!/usr/bin/env node
// `npm start` runs this first (prestart): the server's TypeScript, transpiled by esbuild (the compiler tsx
// uses) into one ES module, .build/main.mjs, with every package left as an import of node_modules. The
// server then runs on plain Node: no loader thread and no per-module transform cache in memory
// (bench/README.md). Tests and the CLI still run the sources through tsx.
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
