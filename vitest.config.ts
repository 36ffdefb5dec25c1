import { defineConfig } from 'vitest/config';

// `npm test` runs the whole suite on SQLite and, when a PostgreSQL is reachable through TEST_PG_URL (.ci/run
// starts a throwaway cluster and sets it), again on PostgreSQL: each test server then gets its own database.
// (generous: subprocess tests (the CLI, server processes, Chromium) take several times longer on a busy machine)
const shared = { testTimeout: 90_000, hookTimeout: 120_000, pool: 'forks' as const };
const sqliteOnly = ['test/server/**', 'test/cli/**', 'test/browser/**', 'test/robustness/sqlite/**'];
const postgresOnly = ['test/multiprocess/**'];

export default defineConfig({
  test: {
    projects: [
      { test: { ...shared, name: 'sqlite', include: ['test/**/*.test.ts'], exclude: postgresOnly } },
      ...(process.env.TEST_PG_URL
        ? [{
            test: {
              ...shared, name: 'postgres', include: ['test/**/*.test.ts'], exclude: sqliteOnly,
              env: { TEST_DATABASE_URL: process.env.TEST_PG_URL },
            },
          }]
        : []),
    ],
  },
});
