// Mirrors @modelcontextprotocol/sdk@1.32.2: `Server.setRequestHandler`'s override for `tools/call`
// (dist/esm/server/index.js), which the handler registered through this function replaces: it re-parses the
// request, checks a task-augmented call's result, and parses every result with CallToolResultSchema.
// mcp/createMcpServer.ts keeps the task check and mcp/toolResult.ts builds the checked result once. Paired tests:
// test/mcp/toolResultWire.test.ts (our answers equal the SDK's own, byte for byte) and test/fastpaths/mirrors.test.ts
// (pinned version, fingerprint of the override).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';

/**
 * The SDK's `Protocol.setRequestHandler`, beneath `Server`'s override (@modelcontextprotocol/sdk 1.32.2,
 * `server/index.js`). For `tools/call` the override parses the request a second time (the protocol layer
 * has parsed it with the same schema) and parses the handler's result with `CallToolResultSchema`,
 * rebuilding the whole output (a page of messages) to hand back a copy of it. The handler below does that
 * result check itself (`toCheckedToolResult`: the same answer, built once) and keeps the override's
 * task-request check. `test/mcp/toolResultWire.test.ts` fails if the SDK's override changes.
 */
export const protocolSetRequestHandler = (Object.getPrototypeOf(Server.prototype) as Pick<Server, 'setRequestHandler'>).setRequestHandler;
