// Lint: typescript-eslint's recommended rules, plus the import boundaries of
// docs/architecture.md#imports-point-one-way:
// rest/ and mcp/ never import each other, the domain knows nothing of express, tRPC or MCP, and imports point
// one way: the adapters (rest/, mcp/, web/ pages, cli/) → procedures, oauth → webhooks,
// agents, domain → db. web/ renders the consent page over oauth/'s rules; oauth/ renders no page.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';

const transport = ['express', 'express/*', '@trpc/*', '@modelcontextprotocol/*', 'helmet', '@scalar/*'];

/** What the domain and db/ may not import: no transport, no layer above them. */
const belowProcedures = [
  { group: transport, message: 'The domain and db know nothing of HTTP, tRPC or MCP.' },
  {
    group: [
      '**/rest/**',
      '**/mcp/**',
      '**/procedures/**',
      '**/auth/**',
      '**/oauth/**',
      '**/web/**',
      '**/cli/**',
      '**/webhooks/**',
      '**/agents/**',
    ],
    message: 'Imports point one way: adapters → procedures → domain → db.',
  },
];

/** Rules every module keeps (test/, bench/ and the scripts aside). */
const everywhere = [
  {
    selector:
      "MemberExpression[object.name='process'][property.name='env']:not(:has(Identifier[name='TEST_DATABASE_URL']))",
    message: 'Read the environment once, in src/config.ts (loadConfig).',
  },
  // db/sql.ts LIMIT_PARAM: SQLite compiles a kept statement again on every run when its LIMIT is a bare parameter
  ...['Literal[value=/LIMIT \\?/]', 'TemplateElement[value.raw=/LIMIT \\?/]'].map((selector) => ({
    selector,
    message: 'Write LIMIT_PARAM (db/sql.ts) for a LIMIT given as a parameter.',
  })),
  {
    selector: "CallExpression[callee.property.name='setRequestHandler']",
    message:
      'Register MCP handlers with serveMethods (mcp/server/connectionRights.ts): it decides what a connection may call.',
  },
];

/**
 * The start of an SQL statement, any case: the keyword and what can follow it in SQL but not in a sentence
 * ("Update a task", "delete old rows" are text), or a template's keyword just before an interpolation.
 */
const SQL_START =
  '^\\s*(?:select\\s+(?:["*(?$\\d]|distinct\\s|\\w+\\s*[,.(]|\\w+\\s+as\\s|$)' +
  '|insert\\s+(?:or\\s+\\w+\\s+)?into\\s|delete\\s+from\\s|update\\s+(?:"|\\w+\\s+set\\s)' +
  '|with\\s+(?:recursive\\s|"|\\w+\\s+as\\s*\\(|$))';
/** Names a transaction or data source goes by: `m`, `manager`, `s.ds`, `s.ds.manager`, `m.queryRunner!`. */
const MANAGER = '/^(?:m|em|manager|entityManager|tx|trx|ds|dataSource|queryRunner)$/';
const TYPEORM_DATA_CALL =
  '/^(?:find\\w*|save|insert|update|upsert|delete|remove|softDelete|restore|count\\w*|exist\\w*|sum|average|' +
  'minimum|maximum|increment|decrement|clear|query)$/';
const dataOutsideDb = 'Data access lives in db/stores/ (docs/architecture.md): call a store from the domain.';
/** No SQL and no TypeORM data call outside db/ and src/fastpaths/ (docs/architecture.md#data-access). */
const dataAccess = [
  ...[`Literal[value=/${SQL_START}/i]`, `TemplateElement[value.raw=/${SQL_START}/i]`].map((selector) => ({
    selector,
    message: `SQL outside db/. ${dataOutsideDb}`,
  })),
  {
    selector: 'CallExpression[callee.property.name=/^(?:getRepository|createQueryBuilder)$/]',
    message: `A TypeORM data call outside db/. ${dataOutsideDb}`,
  },
  ...[
    `[callee.object.name=${MANAGER}]`,
    `[callee.object.property.name=${MANAGER}]`,
    `[callee.object.expression.property.name=${MANAGER}]`,
  ].map((receiver) => ({
    selector: `CallExpression[callee.property.name=${TYPEORM_DATA_CALL}]${receiver}`,
    message: `A TypeORM data call outside db/. ${dataOutsideDb}`,
  })),
];
/** The adapters reach data through the domain: no import of db/, dynamic ones included. */
const adapterImports = [
  {
    selector: 'ImportExpression[source.value=/\\/db\\//]',
    message: 'Adapters import nothing of db/: call the domain (or a service), which exports the types.',
  },
];
const noDbImport = {
  regex: '(?:^|/)db/',
  message: 'Adapters import nothing of db/, not even types: call the domain (or a service), which exports the types.',
};
/** TypeORM's values (operators, entities' classes, data sources) belong to db/; its types may be named anywhere. */
const typeormValues = {
  name: 'typeorm',
  allowTypeImports: true,
  message: 'TypeORM belongs to db/ (and src/fastpaths/, the composition): `import type` its types elsewhere.',
};
const ADAPTERS = ['rest/**/*.ts', 'mcp/**/*.ts', 'src/web/**/*.ts', 'src/cli/**/*.ts'];

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', '.build/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-restricted-syntax': ['error', ...everywhere],
    },
  },
  {
    // Prettier wraps code at 120 columns but leaves comments alone: this keeps them as narrow. Strings, template
    // literals, regular expressions and URLs may run longer (an error message reads better whole).
    rules: {
      'max-len': [
        'error',
        {
          code: 120,
          comments: 120,
          ignoreStrings: true,
          ignoreTemplateLiterals: true,
          ignoreRegExpLiterals: true,
          ignoreUrls: true,
        },
      ],
    },
  },
  {
    // A function a reader can hold: a longer one becomes named functions over an explicit state object (as
    // src/outbox/workerLoop.ts's WorkerLoop). Blank lines and comments count, as ESLint counts them by default.
    files: ['src/**/*.ts', 'rest/**/*.ts', 'mcp/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 120 }] },
  },
  // generated from the OpenAPI document (its descriptions become comments)
  { files: ['clients/typescript/src/schema.ts'], rules: { 'max-len': 'off' } },
  {
    // A promise the server drops is an unhandled rejection waiting to end the process: every
    // promise in the server's code is awaited, returned, or given a .catch; `void` does not count.
    files: ['src/**/*.ts', 'rest/**/*.ts', 'mcp/**/*.ts', 'db/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    // No import cycles among the server's modules: a cycle is two layers that each need the other, which the
    // boundaries below then cannot order. import-x skips type-only imports; test/architecture/imports.test.ts
    // checks those too.
    files: ['src/**/*.ts', 'rest/**/*.ts', 'mcp/**/*.ts', 'db/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      ...importX.flatConfigs.typescript.settings,
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: 'tsconfig.json' })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    files: [
      'src/config.ts',
      'src/cli/**',
      'src/main.ts',
      'test/**',
      'bench/**',
      'bin/**',
      'scripts/**',
      'vitest.config.ts',
      'examples/**',
    ],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    // one way to reach the data: stores in db/ own the SQL and the TypeORM calls; src/fastpaths/ keeps its
    // measured mirrors; the command line reads the environment (it is above the rule on process.env)
    files: ['src/**/*.ts', 'rest/**/*.ts', 'mcp/**/*.ts'],
    ignores: ['src/fastpaths/**', 'src/config.ts', 'src/main.ts', 'src/cli/**'],
    rules: { 'no-restricted-syntax': ['error', ...everywhere, ...dataAccess] },
  },
  {
    files: ['rest/**/*.ts', 'mcp/**/*.ts', 'src/web/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...everywhere, ...dataAccess, ...adapterImports] },
  },
  {
    files: ['src/cli/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...dataAccess, ...adapterImports] },
  },
  { files: ['src/main.ts'], rules: { 'no-restricted-syntax': ['error', ...dataAccess] } },
  {
    files: ['src/**/*.ts', 'rest/**/*.ts', 'mcp/**/*.ts'],
    ignores: ['src/fastpaths/**', 'src/main.ts', 'src/app.ts', 'src/runtime.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: [typeormValues] }] },
  },
  {
    files: ADAPTERS,
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [typeormValues], patterns: [noDbImport] }],
    },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/domain/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: belowProcedures }] },
  },
  {
    // db/ is the bottom layer: what it needs from above (the driver's internals, tracing) is handed to it
    // through db/hooks.ts when the database is opened
    files: ['db/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            ...belowProcedures,
            {
              group: ['**/src/**'],
              message: 'db/ imports nothing of src/: take what it needs as a hook (db/hooks.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['rest/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/mcp/**', '@modelcontextprotocol/*'],
              message: 'rest/ and mcp/ stay apart: what both need is in src/http/.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['mcp/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [{ group: ['**/rest/**'], message: 'rest/ and mcp/ stay apart: what both need is in src/http/.' }],
        },
      ],
    },
  },
  {
    // the wire module (envelope, request ids, headers, challenges, surfaces) and the pipeline's steps
    // (docs/architecture.md#the-request-pipeline) belong to neither adapter: both adapters import them, never the
    // other way round
    files: ['src/http/**', 'src/auth/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/rest/**',
                '**/mcp/**',
                '**/procedures/**',
                'express',
                'express/*',
                '@trpc/*',
                '@modelcontextprotocol/*',
              ],
              message:
                'src/http and src/auth belong to neither adapter (nor to tRPC): procedures import the pipeline, never the reverse; what both need is in src/contract.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    // the call contract is the bottom of the call: the pipeline, the procedures and the adapters import it
    files: ['src/contract.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                ...transport,
                '**/auth/**',
                '**/procedures/**',
                '**/rest/**',
                '**/mcp/**',
                '**/web/**',
                '**/oauth/**',
                '**/cli/**',
                '**/webhooks/**',
                '**/agents/**',
                '**/fastpaths/**',
              ],
              message: "src/contract.ts imports the domain, db and the wire's plain facts, nothing above them.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/fastpaths/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/rest/**',
                '**/mcp/**',
                '**/procedures/**',
                '**/domain/**',
                '**/web/**',
                '**/oauth/**',
                '**/webhooks/**',
                '**/agents/**',
                '**/cli/**',
              ],
              message:
                'src/fastpaths mirrors libraries: it imports those libraries (and db/sql, the RateLimiter interface), never the layers that use it.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/oauth/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/web/**', '**/rest/**', '**/mcp/**', '**/cli/**', '@modelcontextprotocol/*'],
              message: "oauth/ is the protocol: pages are web/'s, adapters import oauth/, never the reverse.",
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/webhooks/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: transport,
              message: "Webhooks deliver over their own HTTP client; they know nothing of the server's surfaces.",
            },
            {
              group: ['**/web/**', '**/rest/**', '**/mcp/**', '**/oauth/**', '**/procedures/**', '**/cli/**'],
              message: 'Imports point one way: surfaces and procedures → webhooks → domain → db.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/outbound/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                ...transport,
                '**/webhooks/**',
                '**/agents/**',
                '**/oauth/**',
                '**/procedures/**',
                '**/domain/**',
                '**/web/**',
                '**/rest/**',
                '**/mcp/**',
                '**/cli/**',
              ],
              message: 'The SSRF guard serves webhooks, agents and OAuth alike: it imports none of them.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/agents/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '**/web/**',
                '**/rest/**',
                '**/mcp/**',
                '**/procedures/**',
                '**/cli/**',
                'express',
                '@modelcontextprotocol/*',
              ],
              message: 'Imports point one way: surfaces and procedures → agents → domain → db.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/web/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/rest/**', '**/mcp/**', '**/cli/**', '@modelcontextprotocol/*'],
              message: 'The pages are one adapter: they use procedures, oauth and the domain, never another adapter.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/rest/**', '**/mcp/**', '**/web/**'],
              message: 'The command line is one adapter: it uses the domain and services, never another adapter.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/procedures/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/rest/**', '**/mcp/**', '**/web/**', '**/cli/**', 'express', '@modelcontextprotocol/*'],
              message: 'Procedures are transport-free.',
            },
          ],
        },
      ],
    },
  },
);
