#!/usr/bin/env node
// The operator command line (CONTRACT §2). Loads the TypeScript entry through tsx, so no build step is needed.
// The Node.js check comes first, as a static import with no dependencies: an unsupported Node stops with one line.
import '../scripts/check-node.mjs';

const { register } = await import('tsx/esm/api');
register();
await import('../src/cli/main.ts');
