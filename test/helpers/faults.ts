import type { DataSource } from 'typeorm';

// Faults injected into the database, as a database lost at one moment would fail.

/** Makes every update that marks an idempotency key done fail, as a database lost at that moment would. */
export async function failKeyCompletion(ds: DataSource): Promise<() => Promise<void>> {
  if (ds.options.type === 'postgres') {
    await ds.query(
      `CREATE FUNCTION svc_fail_done() RETURNS trigger AS $$ BEGIN IF NEW.state = 'done' THEN ` +
        `RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`,
    );
    await ds.query(
      'CREATE TRIGGER svc_fail_done BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION svc_fail_done()',
    );
    return async () => {
      await ds.query('DROP TRIGGER svc_fail_done ON idempotency_keys');
      await ds.query('DROP FUNCTION svc_fail_done()');
    };
  }
  await ds.query(
    `CREATE TRIGGER svc_fail_done BEFORE UPDATE ON idempotency_keys WHEN NEW.state = 'done' ` +
      `BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
  );
  return async () => {
    await ds.query('DROP TRIGGER svc_fail_done');
  };
}
