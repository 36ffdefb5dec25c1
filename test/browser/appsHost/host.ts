// A minimal MCP Apps host for the browser tests, bundled by apps.slow.test.ts: the v2 SDK's client connected
// to svc over Streamable HTTP (declaring the Apps extension), and for each view the ext-apps AppBridge between
// that client and a sandboxed frame, as a host such as Claude or VS Code does it.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';

const APPS = 'io.modelcontextprotocol/ui';
const MIME = 'text/html;profile=mcp-app';

interface OpenOptions {
  mcpUrl: string;
  token: string;
  /** Extra headers of the connection (toolsets, read-only mode). */
  headers?: Record<string, string>;
  tool: string;
  args: Record<string, unknown>;
}

/** The tools/call requests the views sent through this host, and their outcomes (the test reads them). */
const calls: { name: string; error?: string }[] = [];

async function openView(o: OpenOptions): Promise<{ resourceUri: string; csp: unknown; appOnly: string[] }> {
  const client = new Client(
    { name: 'svc-test-host', version: '1.0.0' },
    { capabilities: { extensions: { [APPS]: { mimeTypes: [MIME] } } }, versionNegotiation: { mode: 'auto' } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(o.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${o.token}`, ...o.headers } },
    }),
  );
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === o.tool);
  const resourceUri = (tool?._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri;
  if (!resourceUri) throw new Error(`${o.tool} links no view`);
  // the tools this host would not offer its model (`_meta.ui.visibility: ["app"]`)
  const appOnly = tools
    .filter((t) => {
      const visibility = (t._meta?.ui as { visibility?: string[] } | undefined)?.visibility;
      return visibility !== undefined && !visibility.includes('model');
    })
    .map((t) => t.name);
  const read = await client.readResource({ uri: resourceUri });
  const content = read.contents[0] as { text: string; mimeType: string; _meta?: { ui?: { csp?: unknown } } };
  if (content.mimeType !== MIME) throw new Error(`unexpected view type ${content.mimeType}`);

  const frame = document.createElement('iframe');
  // the host's sandbox: scripts, no same-origin access to the host page
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.setAttribute('data-view', resourceUri);
  document.body.append(frame);

  const bridge = new AppBridge(client, { name: 'svc-test-host', version: '1.0.0' }, { serverTools: {}, logging: {} });
  const initialized = new Promise<void>((resolve) => (bridge.oninitialized = () => resolve()));
  // connected before the view loads: the view says `ui/initialize` as soon as its script runs
  await bridge.connect(new PostMessageTransport(frame.contentWindow!, frame.contentWindow!));
  // the view's tool calls go to svc through this host's client, as the bridge forwards them; recorded here
  bridge.oncalltool = async (params) => {
    const entry: { name: string; error?: string } = { name: params.name };
    calls.push(entry);
    try {
      return await client.callTool(params);
    } catch (err) {
      entry.error = err instanceof Error ? err.message : String(err);
      throw err;
    }
  };
  frame.srcdoc = content.text;
  await initialized;
  await bridge.sendToolInput({ arguments: o.args });
  const result = await client.callTool({ name: o.tool, arguments: o.args });
  await bridge.sendToolResult(result as Parameters<typeof bridge.sendToolResult>[0]);
  return { resourceUri, csp: content._meta?.ui?.csp, appOnly };
}

Object.assign(window, { openView, viewCalls: calls });
