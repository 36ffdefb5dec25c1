import { defineConfig } from 'vitest/config';

// Two tiers (docs/contributing.md#tests):
//   - `fast` and `fast-isolated` (`npm test`): what a developer runs before a commit, on SQLite: procedures and
//     domain rules in-process, and the surfaces end to end over HTTP against an in-process server on a temporary
//     SQLite file;
//   - `sqlite` and `postgres` (`npm run test:all`, what .ci/run calls): everything, the slow tier included, on
//     SQLite and, when a PostgreSQL is reachable through TEST_PG_URL (.ci/run starts a throwaway cluster and sets
//     it), again on PostgreSQL: each test server then gets its own database.
// (`vitest run` with no --project runs every project, the fast tier twice: use the npm scripts.)
// Every test makes its own temporary directory, free port (0) and database, so two copies of the suite can run
// side by side on one machine.
// (generous: subprocess tests (the CLI, server processes, Chromium) take several times longer on a busy machine)
const shared = { testTimeout: 90_000, hookTimeout: 120_000, pool: 'forks' as const };
const sqliteOnly = ['test/server/**', 'test/cli/**', 'test/browser/**', 'test/robustness/sqlite/**'];
const postgresOnly = ['test/multiprocess/**'];

/**
 * The slow tier: tests that start processes (the server, the CLI, `svc worker`, Chromium, the conformance suite,
 * linters), kill or soak them, or fuzz a surface with thousands of generated requests. Named by folder or by the
 * file-name conventions the suite uses (`cli`, `crash`, `Cli`), so a new test of that kind lands here by its name.
 */
export const slowTier = [
  ...sqliteOnly,
  ...postgresOnly,
  // Chromium
  'test/security/docsPage.test.ts',
  // processes: the operator CLI, the server as a child process, crash and kill
  'test/**/cli.test.ts',
  'test/**/*Cli.test.ts',
  'test/**/crash.test.ts',
  'test/webhooks/keyFile.test.ts',
  'test/webhooks/exampleReceiver.test.ts',
  'test/security/sessionRevocation.test.ts',
  'test/security/abortedBodies.test.ts',
  'test/security/secrets.test.ts',
  'test/robustness/killMidRequest.test.ts',
  'test/robustness/shutdown.test.ts',
  'test/multiprocess/databaseFaults.slow.test.ts',
  'test/multiprocess/databaseRestart.slow.test.ts',
  'test/multiprocess/workerKilled.slow.test.ts',
  'test/mcp/subscriptionProcesses.test.ts',
  // soak, fuzzing, the official MCP conformance suite, the OpenAPI linters (subprocesses)
  'test/robustness/soak.test.ts',
  'test/robustness/*Fuzz.test.ts',
  'test/oauth/*Fuzz.test.ts',
  'test/mcp/conformance.test.ts',
  'test/rest/openapiLint.test.ts',
];

/** Test files that replace a module with vi.mock: never in a worker whose modules other files share. */
const replacesModules = ['test/security/timingSafe.test.ts'];

export default defineConfig({
  test: {
    projects: [
      // the fast tier shares each worker's modules between its files (isolate: false: the app's module graph is
      // loaded once per worker, not once per file, a third of the CPU); files that replace a module (vi.mock) run
      // isolated beside it
      {
        test: {
          ...shared,
          name: 'fast',
          include: ['test/**/*.test.ts'],
          exclude: [...slowTier, ...replacesModules],
          isolate: false,
        },
      },
      { test: { ...shared, name: 'fast-isolated', include: replacesModules } },
      { test: { ...shared, name: 'sqlite', include: ['test/**/*.test.ts'], exclude: postgresOnly } },
      ...(process.env.TEST_PG_URL
        ? [
            {
              test: {
                ...shared,
                name: 'postgres',
                include: ['test/**/*.test.ts'],
                exclude: sqliteOnly,
                env: { TEST_DATABASE_URL: process.env.TEST_PG_URL },
              },
            },
          ]
        : []),
    ],
  },
});
