import { SUPPORTED_PROTOCOL_VERSIONS, type Tool } from '@modelcontextprotocol/server';
import type { Request, Response } from 'express';
import { AUTHORIZATION_HEADER, CACHE_CONTROL_HEADER, CONTENT_TYPE_HEADER } from '../src/http/headers.js';
import { audienceOf } from '../src/http/surfaces.js';
import { withViews } from './apps/catalog.js';
import { viewResources } from './apps/resources.js';
import { serverCapabilities } from './server/capabilities.js';
import { INSTRUCTIONS, SERVER_INFO } from './server/createMcpServer.js';
import type { ToolCatalog } from './tools/toolCatalog.js';
import { MODERN_REVISION } from './tools/plainToolCall.js';

/** Where the server card is served (the MCP server card draft): below the server's origin. */
export const SERVER_CARD_PATH = '/.well-known/mcp/server-card';
export const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
/** The official MCP registry's `server.json` schema this file is written to. */
export const SERVER_JSON_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

/** One line on what svc is, within the registry's 100 characters. */
const DESCRIPTION = 'Team rooms, messages, tasks and meeting records with approvals, for people and their agents';

/** The revisions `/mcp` speaks: the SDK's 2025 list (with `initialize`) and 2026-07-28. */
const protocolVersions = (): string[] => [...new Set([MODERN_REVISION, ...SUPPORTED_PROTOCOL_VERSIONS])];

/**
 * svc's name in the official MCP registry (reverse DNS, one slash). The registry lets only the owner of the
 * namespace publish under it: whoever publishes svc sets it to theirs (docs/mcp.md, "Discovery").
 */
export const REGISTRY_NAME = 'io.github.svc-project/svc';

/** How a client authenticates: a bearer credential, an OAuth access token (found from the 401) or an API key. */
const AUTH_HEADER = {
  name: AUTHORIZATION_HEADER,
  description:
    'Bearer <API key>; leave it out to sign in with OAuth 2.1 (the 401 names the protected-resource metadata)',
  isRequired: false,
  isSecret: true,
};

/** The remote endpoint, the same in both documents: Streamable HTTP at `/mcp`. */
const remoteOf = (baseUrl: string) => ({
  type: 'streamable-http' as const,
  url: audienceOf(baseUrl, 'mcp'),
  headers: [AUTH_HEADER],
});

/**
 * The server card (`GET /.well-known/mcp/server-card`): who the server is, where and how to connect, what it
 * declares, and its tools as a key with every scope lists them (each credential sees those its scopes allow, so
 * the list is the most a client can get), each with its view's link, and the views as resources.
 */
export function serverCard(baseUrl: string, catalog: ToolCatalog) {
  const tools: Tool[] = withViews([...catalog.values()].map((e) => e.tool)).sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  return {
    $schema: SERVER_CARD_SCHEMA,
    name: REGISTRY_NAME,
    version: SERVER_INFO.version,
    title: SERVER_INFO.title,
    description: DESCRIPTION,
    websiteUrl: `${baseUrl}/docs`,
    remotes: [
      {
        ...remoteOf(baseUrl),
        supportedProtocolVersions: protocolVersions(),
        authentication: { required: true, schemes: ['bearer', 'oauth2'] },
      },
    ],
    capabilities: serverCapabilities(true),
    resources: viewResources(),
    tools,
    _meta: { 'io.modelcontextprotocol/instructions': INSTRUCTIONS },
  };
}

/** What a publisher of its own registry entry changes: its namespace, and the address of its deployment. */
export interface RegistryEntryOptions {
  /** The name under a namespace the publisher owns (`io.github.<user>/svc`, `com.example/svc`). */
  name?: string;
  /** The deployment's BASE_URL: the entry names its `/mcp` alone, instead of the `{host}` template. */
  baseUrl?: string;
}

/**
 * `server.json` for the official MCP registry (the repository's server.json is this, a test holds it so): the same
 * name, version, description and endpoint as the server card, in the registry's schema. svc runs where its operator
 * deploys it, so the remote's URL is a template: a host fills in the deployment's address. An operator publishing
 * an entry of its own gives its name and its deployment's address instead (scripts/server-json.ts).
 */
export function registryServerJson(o: RegistryEntryOptions = {}) {
  const remote = o.baseUrl
    ? remoteOf(o.baseUrl.replace(/\/+$/, ''))
    : {
        ...remoteOf('https://{host}'),
        variables: {
          host: {
            description: 'Host name (and port) of your svc deployment, as in its BASE_URL',
            isRequired: true,
            placeholder: 'svc.example.com',
          },
        },
      };
  return {
    $schema: SERVER_JSON_SCHEMA,
    name: o.name ?? REGISTRY_NAME,
    title: SERVER_INFO.title,
    description: DESCRIPTION,
    version: SERVER_INFO.version,
    remotes: [remote],
  };
}

/**
 * `GET /.well-known/mcp/server-card`: public (it holds nothing of any caller), readable from any origin, cacheable
 * for an hour; written once per process.
 */
export function serverCardHandler(baseUrl: string, catalog: ToolCatalog): (req: Request, res: Response) => void {
  let body: string | undefined;
  return (_req, res) => {
    body ??= JSON.stringify(serverCard(baseUrl, catalog));
    res
      .set({
        [CONTENT_TYPE_HEADER]: 'application/json',
        'Access-Control-Allow-Origin': '*',
        'Access-Control-Allow-Methods': 'GET',
        'Access-Control-Allow-Headers': CONTENT_TYPE_HEADER,
        [CACHE_CONTROL_HEADER]: 'public, max-age=3600',
      })
      .send(body);
  };
}
