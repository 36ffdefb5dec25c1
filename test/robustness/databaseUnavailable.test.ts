import { describe, expect, it } from 'vitest';
import { domainErrorOf } from '../../src/contract.js';

// The shapes node-postgres and TypeORM throw while the database is gone (TypeORM wraps them, keeping driverError).
const refused = Object.assign(new AggregateError([Object.assign(new Error('x'), { code: 'ECONNREFUSED' })], ''), {
  code: 'ECONNREFUSED',
});
const wrapped = (driverError: object) => Object.assign(new Error('QueryFailedError'), { driverError });

describe('an error meaning "the database is not there right now" is a 503, anything else a 500', () => {
  it.each([
    ['connection refused', refused],
    ['connection reset', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['admin shutdown', wrapped({ code: '57P01' })],
    ['crash shutdown', wrapped({ code: '57P02' })],
    ['starting up', wrapped({ code: '57P03' })],
    ['connection failure', wrapped({ code: '08006' })],
    ['connection ended', wrapped(new Error('Connection terminated unexpectedly'))],
    ['pool timeout', new Error('timeout exceeded when trying to connect')],
    ['transaction connection gone', new Error('Query runner already released. Cannot run queries anymore.')],
    ['SQLite busy', wrapped({ code: 'SQLITE_BUSY' })],
  ])('%s', (_name, err) => {
    const e = domainErrorOf(err);
    expect(e.code).toBe('service_unavailable');
    expect(e.status).toBe(503);
    expect(e.details?.retryAfterSeconds).toBe(1);
  });

  it('a failed statement stays a 500', () => {
    expect(domainErrorOf(wrapped({ code: '23505' })).code).toBe('internal_error');
    expect(domainErrorOf(new Error('boom')).code).toBe('internal_error');
  });
});
