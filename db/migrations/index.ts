import { Initial1764000000000 } from './1764000000000-Initial.js';
import { RateLimits1764000000500 } from './1764000000500-RateLimits.js';

/** Every migration, in order. Later areas append theirs. */
export const migrations = [Initial1764000000000, RateLimits1764000000500];
