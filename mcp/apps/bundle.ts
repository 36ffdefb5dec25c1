import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { CONTENT_SECURITY_POLICY_HEADER } from '../../src/http/headers.js';
import type { ViewEntry } from './catalog.js';

/** The most a view's document may weigh: hosts load it into a frame for every result they show. */
export const VIEW_MAX_BYTES = 512 * 1024;

const here = path.dirname(fileURLToPath(import.meta.url));
/** The views' sources: beside this file, or under the project when this runs from the `npm start` bundle. */
const VIEWS_DIR = [path.join(here, 'views'), path.join(here, '..', 'mcp', 'apps', 'views')].find((d) =>
  fs.existsSync(path.join(d, 'ui.ts')),
);

/**
 * zod (which the Apps SDK validates its messages with) re-exports every locale's error messages; a view shows
 * none of them, so the bundle keeps English alone (the view would otherwise pass the size limit).
 */
const englishOnly: Plugin = {
  name: 'zod-english-only',
  setup(b) {
    b.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${path.sep}zod${path.sep}`)
        ? { path: path.join(path.dirname(args.importer), args.path.replace('index.js', 'en.js')), namespace: 'zod-en' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'zod-en' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: path.dirname(args.path),
    }));
  },
};

const STYLE = `
:root{color-scheme:light dark;font:14px/1.45 system-ui,sans-serif}
body{margin:0;padding:12px;background:var(--color-background-primary,Canvas);color:var(--color-text-primary,CanvasText)}
h1{font-size:18px;margin:0 0 4px}h2{font-size:14px;margin:12px 0 6px}
.muted,.meta{color:GrayText;font-size:12px}
.badge{display:inline-block;padding:0 6px;border-radius:8px;border:1px solid GrayText;font-size:12px}
.state-approved{border-color:green}.state-rejected{border-color:crimson}.state-pending{border-color:orange}
pre.body{white-space:pre-wrap;font:inherit;margin:8px 0;padding:8px;border:1px solid #8884;border-radius:6px}
.row{display:flex;gap:6px;align-items:center;flex-wrap:wrap;margin:6px 0}
textarea{width:100%;box-sizing:border-box;font:inherit}
button{font:inherit;padding:3px 10px;border-radius:6px;border:1px solid GrayText;background:ButtonFace;cursor:pointer}
button.primary{border-color:SelectedItem}button.danger{border-color:crimson}
ul.list,ol.messages,ul.cards{list-style:none;margin:0;padding:0}
ul.list li,ol.messages li{padding:6px 0;border-bottom:1px solid #8883}
q{display:block;margin-top:2px}
.board{display:grid;grid-template-columns:repeat(3,1fr);gap:8px}
.column{border:1px solid #8884;border-radius:6px;padding:6px}
.card{border:1px solid #8884;border-radius:6px;padding:6px;margin:6px 0}.card .title{font-weight:600}
.messages .body{white-space:pre-wrap;overflow-wrap:anywhere}
ul.attachments{list-style:none;margin:4px 0 0;padding:0;font-size:12px}
ul.attachments li{padding:0;border:0}ul.attachments li::before{content:"\\1F4CE  "}
.filename{overflow-wrap:anywhere}
#status{min-height:1.2em;font-size:12px}#status[data-kind=error]{color:crimson}#status[data-kind=ok]{color:green}
`;

/** A CSP source for an inline block: its SHA-256. */
const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/**
 * The document's own policy, on top of the host's: the view's one script and one style (by hash), images only
 * as data, and no connection, frame, form or base of its own; it talks to the host by postMessage alone.
 */
export const viewPolicy = (script: string, style: string): string =>
  [
    "default-src 'none'",
    `script-src ${sha256(script)}`,
    `style-src ${sha256(style)}`,
    'img-src data:',
    "connect-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ');

/** Bundles a view's module (with the Apps SDK) into one self-contained HTML document. */
export async function buildView(view: ViewEntry): Promise<string> {
  if (!VIEWS_DIR) throw new Error('the MCP Apps view sources (mcp/apps/views) are missing');
  const out = await build({
    entryPoints: [path.join(VIEWS_DIR, view.entry)],
    bundle: true,
    write: false,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    legalComments: 'none',
    plugins: [englishOnly],
    logLevel: 'silent',
  });
  // (an inline script ends at the first `</script`, wherever it stands)
  const script = out.outputFiles[0].text.replace(/<\/script/gi, '<\\/script').trim();
  const style = STYLE.trim();
  const html =
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    `<meta http-equiv="${CONTENT_SECURITY_POLICY_HEADER}" content="${viewPolicy(script, style)}">` +
    '<meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<title>${view.title.replace(/[<>&"]/g, '')}</title><style>${style}</style></head>` +
    `<body><main id="app"></main><p id="status" role="status"></p><script>${script}</script></body></html>`;
  const size = Buffer.byteLength(html);
  if (size > VIEW_MAX_BYTES) throw new Error(`the view ${view.uri} weighs ${size} bytes, over ${VIEW_MAX_BYTES}`);
  return html;
}

const built = new Map<string, Promise<string>>();

/** A view's document, bundled on its first request and kept for the life of the process. */
export function viewDocument(view: ViewEntry): Promise<string> {
  let html = built.get(view.uri);
  if (!html) {
    html = buildView(view);
    built.set(view.uri, html);
    // a failed build is tried again on the next request
    html.catch(() => built.delete(view.uri));
  }
  return html;
}
