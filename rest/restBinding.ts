import type { z } from 'zod';
import type { ProcedureInfo } from '../src/procedures/index.js';

/** Where each input field of a procedure travels over REST. */
export interface RestBinding {
  /** `{name}` segments of the path. */
  path: string[];
  /** Query parameters: the fields of a GET, or those of an upload besides its bytes. */
  query: string[];
  /** Fields of the JSON body (writes), or the two fields an upload's raw body fills. */
  body: string[];
}

/**
 * The one mapping from a procedure's input fields to path, query and body: the OpenAPI document describes it
 * and the router enforces it (a query parameter the binding does not name is refused, as an unknown body
 * field is by the strict input schema).
 */
export function restBindingOf(proc: ProcedureInfo): RestBinding {
  const { http } = proc.meta;
  const keys = Object.keys(proc.input.shape as Record<string, z.ZodType>);
  const path = [...http.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const rest = keys.filter((k) => !path.includes(k));
  if (http.rawBody) {
    // (fields that stand for the body over MCP only, such as an upload's `text`, are not REST parameters)
    const body = [http.rawBody.field, http.rawBody.contentTypeField];
    const mcpOnly = http.rawBody.mcpOnly ?? [];
    return { path, query: rest.filter((k) => !body.includes(k) && !mcpOnly.includes(k)), body };
  }
  return http.method === 'GET' ? { path, query: rest, body: [] } : { path, query: [], body: rest };
}
