import type { ReadResourceResult, Resource } from '@modelcontextprotocol/server';
import { RPC_INVALID_PARAMS, RpcError } from '../server/rpcError.js';
import { VIEW_MIME_TYPE, VIEWS, viewOfUri } from './catalog.js';
import { viewDocument } from './bundle.js';

/**
 * What a view may reach besides its host, as the extension declares it (`_meta.ui.csp`): nothing. The lists are
 * empty: no connection, no script, style, font or image from elsewhere, no nested frame.
 */
export const VIEW_CSP = { connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] };

const viewMeta = { ui: { csp: VIEW_CSP, prefersBorder: true } };

/** The views as resources (for a client that declared the extension). */
export const viewResources = (): Resource[] =>
  VIEWS.map((v) => ({
    uri: v.uri,
    name: v.name,
    title: v.title,
    description: v.description,
    mimeType: VIEW_MIME_TYPE,
    _meta: viewMeta,
  }));

/**
 * `resources/read` of a `ui://` URI: the view's HTML document. It is the same for every caller and holds no data;
 * the data reaches the view only as tool results, through the host, under the caller's own rights.
 */
export async function readView(uri: string): Promise<ReadResourceResult> {
  const view = viewOfUri(uri);
  if (!view) throw new RpcError(RPC_INVALID_PARAMS, `Resource not found: ${uri} is not a view of this server`, { uri });
  return { contents: [{ uri, mimeType: VIEW_MIME_TYPE, text: await viewDocument(view), _meta: viewMeta }] };
}
