#!/usr/bin/env node
// The operator command line (CONTRACT §2). Loads the TypeScript entry through tsx, so no build step is needed.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
