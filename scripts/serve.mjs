#!/usr/bin/env node
// `npm start`'s entry: the server bundle (.build/main.mjs, made by the prestart build) with source maps for
// its own code only. A stack trace in the logs names src/*.ts lines; the maps of node_modules (typeorm
// ships about a thousand) are not parsed and kept, which `--enable-source-maps` would do, holding
// heap for nothing (bench/README.md). Support has to be switched on before the bundle loads, so
// it is switched on here and the bundle imported after.
import module from 'node:module';

// On Linux, glibc's malloc gives each thread that allocates (libuv's pool, V8's helpers) an arena of its own,
// up to 8 per core, and memory freed in one is rarely handed back, so the server's resident memory grows
// under load (bench/README.md). Two arenas are the usual setting for a Node server.
// The variable is read only when a process starts, so this process replaces itself (same pid, arguments and
// standard streams) with one that has it, before anything is loaded. An operator's own MALLOC_ARENA_MAX,
// any value, is kept as it is; where `process.execve` is missing (Node 22 before 22.15) the server simply
// starts without it. musl and other platforms ignore the variable.
if (
  process.platform === 'linux' &&
  process.env.MALLOC_ARENA_MAX === undefined &&
  typeof process.execve === 'function'
) {
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
      ...process.env,
      MALLOC_ARENA_MAX: '2',
    });
  } catch {
    // could not replace the process (a sandbox that forbids execve): start as we are
  }
}

if (typeof module.setSourceMapsSupport === 'function') {
  module.setSourceMapsSupport(true, { nodeModules: false, generatedCode: false });
} else {
  // Node 22 before 22.14: no per-package choice; every map, as `--enable-source-maps` did
  process.setSourceMapsEnabled(true);
}
await import('../.build/main.mjs');
