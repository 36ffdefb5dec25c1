import { SCOPES } from '../domain/scopes.js';
import { GRANTS } from './grants/index.js';
import { audienceOf, type SurfaceName } from '../http/surfaces.js';

/** RFC 8414 authorization server metadata: issuer = BASE_URL, PKCE S256 only, `iss` in responses. */
export function authorizationServerMetadata(baseUrl: string) {
  return {
    issuer: baseUrl,
    authorization_endpoint: `${baseUrl}/oauth/authorize`,
    token_endpoint: `${baseUrl}/oauth/token`,
    revocation_endpoint: `${baseUrl}/oauth/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: GRANTS.map((g) => g.grantType),
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_basic', 'client_secret_post'],
    scopes_supported: [...SCOPES],
    authorization_response_iss_parameter_supported: true,
    resource_indicators_supported: true,
    // a client_id may be an https URL of its metadata document, once an administrator approved it
    client_id_metadata_document_supported: true,
    service_documentation: `${baseUrl}/docs`,
  };
}

/** RFC 9728 protected resource metadata of `/v1` or `/mcp`. */
export function protectedResourceMetadata(baseUrl: string, surface: SurfaceName) {
  return {
    resource: audienceOf(baseUrl, surface),
    authorization_servers: [baseUrl],
    scopes_supported: [...SCOPES],
    bearer_methods_supported: ['header'],
    resource_name: surface === 'mcp' ? 'svc MCP server' : 'svc REST API v1',
    resource_documentation: `${baseUrl}/docs`,
  };
}
