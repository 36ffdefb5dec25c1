import fs from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

// Which Node runs svc: the machine's own where package.json engines.node allows it, else the Node 24 that
// npm install provisions into node_modules (scripts/node-runtime, an optional dependency npm installs only
// where the Node running npm does not satisfy svc's engines), first on PATH for every npm script.
const ROOT = path.resolve(import.meta.dirname, '../..');
const json = (file: string) => JSON.parse(fs.readFileSync(path.join(ROOT, file), 'utf8'));
const pkg = json('package.json');
const runtime = json('scripts/node-runtime/package.json');

interface CheckNode {
  supportedRange: string;
  satisfies(version: string, range: string): boolean;
  nodeProblem(o: {
    version: string;
    provisioned: string | null;
    platform: string;
    afterInstall?: boolean;
  }): string | null;
  pinnedRuntime(): { version: string; platforms: string[] };
}
// (a plain .mjs, so that any Node can run it before dependencies exist; typed here by hand)
const checkNode = () => import(path.join(ROOT, 'scripts/check-node.mjs')) as Promise<CheckNode>;

/** Every x.y.0 and a few x.y.z from Node 16 to 30. */
const grid = Array.from({ length: 15 }, (_, i) => 16 + i)
  .flatMap((major) => Array.from({ length: 26 }, (_, minor) => [`${major}.${minor}.0`, `${major}.${minor}.9`]))
  .flat();

describe('the Node.js that runs svc', () => {
  it('the Node running these tests is one svc supports (>= 22), and the one the CI leg expects', () => {
    expect(semver.satisfies(process.version, pkg.engines.node)).toBe(true);
    expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(22);
    // .ci/run sets it for each leg: the provisioned Node 24 on the main leg, Node 22 itself on the other
    const expected = process.env.SVC_EXPECT_NODE_MAJOR;
    if (expected) expect(`v${process.versions.node}`).toMatch(new RegExp(`^v${expected}\\.`));
  });

  it("npm provisions Node exactly where svc does not support the Node running npm: the runtime package's engines are the complement", () => {
    for (const v of grid)
      expect([v, semver.satisfies(v, runtime.engines.node)]).toEqual([v, !semver.satisfies(v, pkg.engines.node)]);
    // Node 20 and an early 22 get the provisioned Node; 22.19+, 24.11+ and 26 run themselves
    for (const v of ['20.20.2', '22.5.0', '24.0.0']) expect(semver.satisfies(v, runtime.engines.node)).toBe(true);
    for (const v of ['22.19.0', '22.22.0', '24.11.0', '24.21.0', '26.0.0'])
      expect(semver.satisfies(v, runtime.engines.node)).toBe(false);
    // and what it provisions is itself supported, the major .nvmrc and .node-version name
    expect(semver.satisfies(runtime.version, pkg.engines.node)).toBe(true);
    expect(String(semver.major(runtime.version))).toBe(fs.readFileSync(path.join(ROOT, '.nvmrc'), 'utf8').trim());
    expect(String(semver.major(runtime.version))).toBe(
      fs.readFileSync(path.join(ROOT, '.node-version'), 'utf8').trim(),
    );
  });

  it('the provisioned Node is an optional dependency, its platform builds pinned to one version with their integrity in the lockfile', () => {
    expect(pkg.optionalDependencies['svc-node-runtime']).toBe('file:scripts/node-runtime');
    const lock = json('package-lock.json');
    expect(lock.packages['scripts/node-runtime']).toMatchObject({ optional: true, engines: runtime.engines });
    const builds = Object.entries(runtime.optionalDependencies as Record<string, string>);
    expect(builds.length).toBeGreaterThan(0);
    for (const [name, version] of builds) {
      expect(version).toBe(runtime.version);
      expect(lock.packages[`node_modules/${name}`]).toMatchObject({
        version,
        optional: true,
        bin: { node: 'bin/node' },
      });
      expect(lock.packages[`node_modules/${name}`].integrity).toMatch(/^sha512-/);
    }
    // engine-strict would stop npm install on Node 20 before it provisions anything
    expect(fs.readFileSync(path.join(ROOT, '.npmrc'), 'utf8')).not.toMatch(/^\s*engine-strict\s*=\s*true/m);
  });

  it('check-node.mjs reads ranges as npm does', async () => {
    const { satisfies, supportedRange } = await checkNode();
    expect(supportedRange).toBe(pkg.engines.node);
    for (const range of [
      pkg.engines.node,
      runtime.engines.node,
      '>=22',
      '^24.11.0',
      '<22.19.0',
      '>22 <=24.1.2',
      '>22.3 <=24.1',
      '=23',
      '23.1',
      '^22.19',
    ]) {
      for (const v of [...grid, 'v20.20.2'])
        expect([range, v, satisfies(v, range)]).toEqual([range, v, semver.satisfies(v, range)]);
    }
  });

  it('an unsupported Node gets one line naming the version found, the range needed and what to do', async () => {
    const { nodeProblem, pinnedRuntime } = await checkNode();
    const { version, platforms } = pinnedRuntime();
    const platform = platforms[0];
    const cases: [Parameters<CheckNode['nodeProblem']>[0], RegExp][] = [
      // started on the old Node directly although npm install provisioned one: go through npm
      [
        { version: 'v20.20.2', provisioned: '/x/node_modules/.bin/node', platform },
        /Run it through npm \(npm start, npm test, npx svc/,
      ],
      // node_modules from an install on a supported Node, then an older Node: install again on it
      [
        { version: 'v20.20.2', provisioned: null, platform },
        new RegExp(`Run npm install: on this Node it installs Node.js ${version.replace(/\./g, '\\.')}`),
      ],
      // the download failed during npm install (npm skips a failed optional dependency)
      [
        { version: 'v20.20.2', provisioned: null, platform, afterInstall: true },
        /npm install did not install .* run npm install again\.$/,
      ],
      // no build pinned for this platform
      [
        { version: 'v20.20.2', provisioned: null, platform: 'aix-ppc64' },
        /No Node\.js build for aix-ppc64 .* install Node\.js 24 LTS/,
      ],
    ];
    for (const [input, advice] of cases) {
      const line = nodeProblem(input)!;
      expect(line).not.toContain('\n');
      expect(line).toContain('v20.20.2');
      expect(line).toContain(pkg.engines.node);
      expect(line).toMatch(advice);
    }
    for (const v of ['v22.19.0', 'v24.21.0', 'v26.1.0'])
      expect(nodeProblem({ version: v, provisioned: null, platform: 'aix-ppc64' })).toBeNull();
  });
});
