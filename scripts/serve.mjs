#!/usr/bin/env node
// `npm start`'s entry: the server bundle (.build/main.mjs, made by the prestart build) with source maps for
// its own code only. A stack trace in the logs names src/*.ts lines; the maps of node_modules (typeorm
// ships about a thousand) are not parsed and kept, which `--enable-source-maps` would do: about 12 MB of
// heap for nothing (bench/README.md, issue 23). Support has to be switched on before the bundle loads, so
// it is switched on here and the bundle imported after.
import module from 'node:module';

if (typeof module.setSourceMapsSupport === 'function') {
  module.setSourceMapsSupport(true, { nodeModules: false, generatedCode: false });
} else {
  // Node 22 before 22.14: no per-package choice; every map, as `--enable-source-maps` did
  process.setSourceMapsEnabled(true);
}
await import('../.build/main.mjs');
