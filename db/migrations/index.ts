import { Initial1764000000000 } from './1764000000000-Initial.js';

/** Every migration, in order. Later areas append theirs. */
export const migrations = [Initial1764000000000];
