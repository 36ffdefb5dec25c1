/**
 * The two API surfaces and what the door check needs of each: the OAuth
 * audience a token must be pinned to, where the surface's protected-resource metadata lives (RFC 9728), and
 * the scopes the surface itself requires besides an operation's. REST, MCP and the OAuth server read these
 * from here, and only here.
 */
export interface SurfaceEntry {
  /** `rest` or `mcp`: the audit row's surface. */
  name: 'rest' | 'mcp';
  /** The path the surface is served under, and the last segment of its audience. */
  path: '/v1' | '/mcp';
  /** Scopes every call of the surface needs besides the operation's own. */
  scopes: readonly string[];
  /** The `realm` its challenges name (RFC 6750 §3), if any. */
  realm?: string;
  /**
   * How its challenges are written: `rest` names the metadata on a 401 only; `mcp` (MCP authorization) names
   * it on every challenge, and a 401 also names the scope to ask for and why the token was refused.
   */
  style: 'rest' | 'mcp';
}

/** The scope every MCP tool call needs besides the operation's own. */
export const MCP_SCOPE = 'mcp:tools';

export const SURFACES = {
  rest: { name: 'rest', path: '/v1', scopes: [], realm: 'svc', style: 'rest' },
  mcp: { name: 'mcp', path: '/mcp', scopes: [MCP_SCOPE], style: 'mcp' },
} as const satisfies Record<'rest' | 'mcp', SurfaceEntry>;

export type SurfaceName = keyof typeof SURFACES;

/** The audience (RFC 8707 resource) of a surface: `BASE_URL/v1` or `BASE_URL/mcp`. */
export const audienceOf = (baseUrl: string, surface: SurfaceName): string => `${baseUrl}${SURFACES[surface].path}`;

/** Where a surface's protected-resource metadata is served (RFC 9728 §3.1): the path below the base URL. */
export const resourceMetadataPath = (surface: SurfaceName): string =>
  `/.well-known/oauth-protected-resource${SURFACES[surface].path}`;

export const resourceMetadataUrl = (baseUrl: string, surface: SurfaceName): string =>
  `${baseUrl}${resourceMetadataPath(surface)}`;

/** True when `resource` is the audience of one of the surfaces (an authorization request's `resource`). */
export const isAudience = (baseUrl: string, resource: string): boolean =>
  (Object.keys(SURFACES) as SurfaceName[]).some((s) => audienceOf(baseUrl, s) === resource);

/** `^` and a surface's path escaped for a regular expression (`^\/v1`): the start of every matcher of its requests. */
export const surfacePattern = (surface: SurfaceName): string => `^${SURFACES[surface].path.replace(/[/.]/g, '\\$&')}`;

/** The path of the OpenAPI document, under the REST surface. */
export const OPENAPI_JSON_PATH = `${SURFACES.rest.path}/openapi.json`;
