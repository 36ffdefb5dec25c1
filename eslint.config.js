// Lint: typescript-eslint's recommended rules, plus import boundaries of ../shared/ARCHITECTURE.md:
// rest/ and mcp/ never import each other, and the domain knows nothing of express, tRPC or MCP.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const transport = ['express', 'express/*', '@trpc/*', '@modelcontextprotocol/*', 'helmet', '@scalar/*'];

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'coverage/', '.build/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', fetch: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'no-restricted-syntax': ['error', { selector: "MemberExpression[object.name='process'][property.name='env']:not(:has(Identifier[name='TEST_DATABASE_URL']))", message: 'Read the environment once, in src/config.ts (loadConfig).' }],
    },
  },
  {
    // A promise the server drops is an unhandled rejection waiting to end the process (issue 16.1): every
    // promise in the server's code is awaited, returned, or given a .catch; `void` does not count.
    files: ['src/**/*.ts', 'rest/**/*.ts', 'mcp/**/*.ts', 'db/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': ['error', { ignoreVoid: false }],
      '@typescript-eslint/no-misused-promises': 'error',
    },
  },
  {
    files: ['src/config.ts', 'src/cli/**', 'src/main.ts', 'test/**', 'bench/**', 'bin/**', 'scripts/**', 'vitest.config.ts', 'examples/**'],
    rules: { 'no-restricted-syntax': 'off' },
  },
  {
    files: ['test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['src/domain/**', 'db/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: transport, message: 'The domain and db know nothing of HTTP, tRPC or MCP.' },
          { group: ['**/rest/**', '**/mcp/**', '**/procedures/**', '**/auth/**', '**/oauth/**', '**/web/**', '**/cli/**'], message: 'Imports point one way: adapters → procedures → domain → db.' },
        ],
      }],
    },
  },
  {
    files: ['rest/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/mcp/**', '@modelcontextprotocol/*'], message: 'rest/ and mcp/ stay apart: what both need is in src/http/.' }] }] },
  },
  {
    files: ['mcp/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/rest/**'], message: 'rest/ and mcp/ stay apart: what both need is in src/http/.' }] }] },
  },
  {
    // the wire module (envelope, request ids, headers, challenges, surfaces) and the spec 5.5 steps belong
    // to neither adapter: both adapters import them, never the other way round
    files: ['src/http/**', 'src/auth/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/rest/**', '**/mcp/**', 'express', 'express/*', '@trpc/*', '@modelcontextprotocol/*'], message: 'src/http and src/auth belong to neither adapter (nor to tRPC).' }] }] },
  },
  {
    files: ['src/procedures/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ group: ['**/rest/**', '**/mcp/**', 'express', '@modelcontextprotocol/*'], message: 'Procedures are transport-free.' }] }] },
  },
);
