#!/usr/bin/env node
// Which Node.js runs svc, and one line when it cannot (package.json engines.node is the supported range).
// On a machine whose own Node is older, `npm install` provisions Node 24 into node_modules
// (scripts/node-runtime, an optional dependency npm installs only there) and every npm script and `npx svc`
// runs on it, as node_modules/.bin/node is first on their PATH. Kept free of dependencies and of syntax newer
// than Node 20, so an old Node gets this message rather than a syntax error or a native crash.
//
//   node scripts/check-node.mjs              exit 1 with one line on stderr if this Node cannot run svc
//   node scripts/check-node.mjs --installed  the same, after `npm install` (postinstall), naming the Node provisioned
//   node scripts/check-node.mjs --supported  exit 0 if this Node is in the supported range, 1 if not; prints nothing
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const readJson = (file) => JSON.parse(readFileSync(path.join(root, file), 'utf8'));

/** package.json engines.node: the Node versions svc runs on. */
export const supportedRange = readJson('package.json').engines.node;

const parse = (v) => {
  const parts = String(v).replace(/^v/, '').split('-')[0].split('.').map(Number);
  return [parts[0] || 0, parts[1] || 0, parts[2] || 0];
};
const compare = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/**
 * Whether a version satisfies an npm range, for the forms engines fields here use: `||` alternatives of
 * space-separated `>=`, `>`, `<=`, `<`, `=` and `^` comparators (semver itself is a dependency,
 * absent before `npm install`; test/runtime/provisioning.test.ts holds this to it).
 */
export function satisfies(version, range) {
  const v = parse(version);
  return range.split('||').some((alternative) =>
    alternative
      .trim()
      .split(/\s+/)
      .every((term) => {
        const m = /^(\^|>=|<=|>|<|=)?v?(\d+\.\d+\.\d+|\d+\.\d+|\d+)$/.exec(term);
        if (!m)
          throw new Error(
            `check-node.mjs cannot read the range term ${JSON.stringify(term)} of ${JSON.stringify(range)}`,
          );
        // a partial version is a range, as in npm: `>22` is `>=23.0.0`, `<=24.1` is `<24.2.0`, `=22` any 22.x.y
        const given = m[2].split('.').length;
        const low = parse(m[2]);
        const high = low.map((n, i) => (i < given - 1 ? n : i === given - 1 ? n + 1 : 0));
        const full = given === 3;
        switch (m[1] || '=') {
          case '^':
            return compare(v, low) >= 0 && v[0] === low[0];
          case '>=':
            return compare(v, low) >= 0;
          case '>':
            return full ? compare(v, low) > 0 : compare(v, high) >= 0;
          case '<=':
            return full ? compare(v, low) <= 0 : compare(v, high) < 0;
          case '<':
            return compare(v, low) < 0;
          default:
            return full ? compare(v, low) === 0 : compare(v, low) >= 0 && compare(v, high) < 0;
        }
      }),
  );
}

/** The Node the runtime package pins, and the platforms it has a build for (`linux-x64`, …). */
export function pinnedRuntime() {
  const pkg = readJson('scripts/node-runtime/package.json');
  const platforms = Object.keys(pkg.optionalDependencies).map((name) => name.replace(/^node-(bin-)?/, ''));
  return { version: pkg.version, platforms, engines: pkg.engines.node };
}

/** node_modules/.bin/node when npm installed the provisioned Node, else null. */
export function provisionedNode() {
  const bin = path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'node.exe' : 'node');
  return existsSync(bin) ? bin : null;
}

const samePath = (a, b) => {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return false;
  }
};

/**
 * What is wrong with running svc on this Node, as one line, or null. `provisioned` is the Node npm installed
 * into node_modules (or null), `platform` like `linux-x64`; `afterInstall` when npm install has just run.
 */
export function nodeProblem({
  version = process.version,
  provisioned = provisionedNode(),
  platform = `${process.platform}-${process.arch}`,
  afterInstall = false,
} = {}) {
  if (satisfies(version, supportedRange)) return null;
  const head = `svc needs Node.js ${supportedRange}; this is Node.js ${version}.`;
  const pinned = pinnedRuntime();
  if (provisioned) {
    return `${head} Run it through npm (npm start, npm test, npx svc ...): npm scripts use the Node.js ${pinned.version} installed in node_modules.`;
  }
  if (!pinned.platforms.includes(platform)) {
    return `${head} No Node.js build for ${platform} is pinned in scripts/node-runtime: install Node.js 24 LTS, then run npm install again.`;
  }
  // an optional dependency that fails to download is skipped by npm without failing the install
  if (afterInstall) {
    return (
      `${head} npm install did not install Node.js ${pinned.version} into node_modules (node-${platform}, an optional dependency: ` +
      'a download error, or optional dependencies omitted): run npm install again.'
    );
  }
  return `${head} Run npm install: on this Node it installs Node.js ${pinned.version} into node_modules for every npm script.`;
}

/** The major version of the Node that runs npm itself (the machine's own), when this runs under npm. */
function npmNodeVersion() {
  const exe = process.env.npm_node_execpath;
  if (!exe || samePath(exe, process.execPath)) return process.version;
  const r = spawnSync(exe, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/**
 * One line about a provisioned Node that is no longer needed: node_modules came from an install on an older
 * Node, and npm now runs on a supported one (the machine's Node was upgraded, or another was put on PATH).
 */
function staleProvisionNote() {
  const provisioned = provisionedNode();
  if (!provisioned || !samePath(provisioned, process.execPath)) return null;
  const machine = npmNodeVersion();
  if (!machine || !satisfies(machine, supportedRange)) return null;
  return (
    `svc: running on the Node.js ${process.version} installed in node_modules by an install on an older Node; ` +
    `run npm install to run on this machine's Node.js ${machine} instead.`
  );
}

if (process.argv[1] && samePath(process.argv[1], fileURLToPath(import.meta.url))) {
  const mode = process.argv[2];
  if (mode === '--supported') process.exit(satisfies(process.version, supportedRange) ? 0 : 1);
  const problem = nodeProblem({ afterInstall: mode === '--installed' });
  if (problem) {
    process.stderr.write(`${problem}\n`);
    process.exit(1);
  }
  const stale = staleProvisionNote();
  if (stale) process.stderr.write(`${stale}\n`);
  if (mode === '--installed' && !stale && samePath(provisionedNode() || '', process.execPath)) {
    process.stderr.write(
      `svc: npm scripts and npx svc run on Node.js ${process.version}, installed in node_modules ` +
        `(this machine's Node.js ${npmNodeVersion() || ''} is older than svc supports, ${supportedRange}).\n`,
    );
  }
}
