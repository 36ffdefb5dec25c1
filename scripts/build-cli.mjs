// The operator CLI, compiled: src/cli/main.ts bundled by esbuild (the compiler tsx uses) into ES modules under
// .build/cli-<hash>/, split so that each command's modules are a chunk of their own, loaded (import()) only by the
// command that runs. Every package stays an import of node_modules.
//
// bin/svc.mjs asks `compiledCli()` for the entry on every start. The manifest, .build/cli.json, names the build and
// every source file that went into it with its size, modification time and SHA-256: a file whose size and time
// are unchanged is taken as is (one stat each), one that changed is hashed, and a changed hash builds again. So
// the CLI never runs code older than the sources, and builds only on the first start after a change (or at
// `npm start`, whose prestart builds it too). Concurrent builds each write their own folder and rename it into
// place; the manifest is replaced in one rename.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const buildDir = path.join(root, '.build');
const manifestFile = path.join(buildDir, 'cli.json');
/** What else decides the output: this script (the build options) and the compiler settings. */
const SETTINGS = ['scripts/build-cli.mjs', 'tsconfig.json'];

/** An earlier build (or an abandoned one) is removed once it is this old. */
const STALE_AFTER_MS = 10 * 60_000;

const sha256 = (file) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** The manifest's build, when every file it was built from is unchanged; else null. */
function currentBuild() {
  let manifest;
  try {
    manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  } catch {
    return null;
  }
  const entry = path.join(buildDir, manifest.dir, 'main.mjs');
  if (!fs.existsSync(entry)) return null;
  for (const [rel, was] of Object.entries(manifest.inputs)) {
    let st;
    try {
      st = fs.statSync(path.join(root, rel));
    } catch {
      return null;
    }
    if (st.size === was.size && st.mtimeMs === was.mtimeMs) continue;
    // touched (a checkout, an editor's save without change): the same bytes are the same build
    if (st.size !== was.size || sha256(path.join(root, rel)) !== was.sha256) return null;
  }
  return entry;
}

/** Builds the CLI into a new folder and points the manifest at it; resolves with the entry's path. */
export async function buildCli() {
  const { build } = await import('esbuild');
  fs.mkdirSync(buildDir, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(buildDir, 'cli-tmp-'));
  try {
    const result = await build({
      entryPoints: { main: path.join(root, 'src/cli/main.ts') },
      absWorkingDir: root,
      outdir: tmp,
      bundle: true,
      splitting: true,
      chunkNames: 'chunk-[hash]',
      outExtension: { '.js': '.mjs' },
      packages: 'external',
      platform: 'node',
      format: 'esm',
      target: 'node22',
      sourcemap: true,
      metafile: true,
      tsconfig: path.join(root, 'tsconfig.json'),
      logLevel: 'warning',
    });
    const inputs = {};
    const files = [...Object.keys(result.metafile.inputs).filter((f) => !f.includes('node_modules/')), ...SETTINGS];
    const all = createHash('sha256');
    for (const file of files.sort()) {
      const abs = path.resolve(root, file);
      const rel = path.relative(root, abs).split(path.sep).join('/');
      const st = fs.statSync(abs);
      inputs[rel] = { size: st.size, mtimeMs: st.mtimeMs, sha256: sha256(abs) };
      all.update(`${rel}\0${inputs[rel].sha256}\0`);
    }
    const dir = `cli-${all.digest('hex').slice(0, 16)}`;
    try {
      fs.renameSync(tmp, path.join(buildDir, dir));
    } catch {
      // the same build is already in place (another start built it at the same time)
      fs.rmSync(tmp, { recursive: true, force: true });
    }
    const manifestTmp = `${manifestFile}.${process.pid}`;
    fs.writeFileSync(manifestTmp, JSON.stringify({ dir, inputs }));
    fs.renameSync(manifestTmp, manifestFile);
    // earlier builds go once no CLI started from them can still be loading their chunks
    for (const old of fs.readdirSync(buildDir)) {
      const at = path.join(buildDir, old);
      if (
        old.startsWith('cli-') &&
        old !== dir &&
        old !== 'cli.json' &&
        Date.now() - fs.statSync(at).mtimeMs > STALE_AFTER_MS
      )
        fs.rmSync(at, { recursive: true, force: true });
    }
    return path.join(buildDir, dir, 'main.mjs');
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/** The compiled CLI's entry as a file: URL, built first when the sources changed since the last build. */
export async function compiledCli() {
  return pathToFileURL(currentBuild() ?? (await buildCli())).href;
}

// `node scripts/build-cli.mjs`: build now unless up to date
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await compiledCli();
