// The baseline of `npm run bench`: a bare Express 5 server answering a fixed JSON body shaped like /v1/me,
// with nothing else (no auth, no database, no middleware). Run as its own process, like the product. At
// POST /mcp, the v2 MCP SDK's own stateless server (createMcpHandler, both revisions) answers the same JSON
// as the one tool `get_me`: what the SDK costs alone, without a credential or a pipeline.
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import express from 'express';

const ME = {
  id: 'usr_01JZ0000000000000000000000',
  email: 'bench@example.com',
  name: 'Bench User',
  locale: 'en',
  organizationId: 'org_01JZ0000000000000000000000',
  billingContext: 'organization',
  createdAt: '2026-01-01T00:00:00.000Z',
};

const app = express();
app.disable('x-powered-by');
app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
app.get('/v1/me', (_req, res) => {
  res.json(ME);
});

const mcp = toNodeHandler(
  createMcpHandler(() => {
    const server = new McpServer({ name: 'bare', version: '1.0.0' });
    server.registerTool('get_me', { description: 'The caller' }, async () => ({
      content: [{ type: 'text', text: JSON.stringify(ME) }],
      structuredContent: ME,
    }));
    return server;
  }),
);
app.post('/mcp', express.json(), (req, res) => void mcp(req, res, req.body));

const port = Number(process.env.PORT ?? 3100);
const server = app.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
