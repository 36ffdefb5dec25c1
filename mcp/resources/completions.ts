import type { CompleteRequest, CompleteResult } from '@modelcontextprotocol/server';
import { recordAudit } from '../../src/auth/audit.js';
import { count } from '../../src/auth/meter.js';
import { readableRoomObjectsByPrefix, readableRoomsByPrefix } from '../../src/domain/access.js';
import { DomainError } from '../../src/domain/errors.js';
import { newId } from '../../src/domain/ids.js';
import { auditRow } from '../../src/http/auditRow.js';
import { errorEnvelope } from '../../src/http/envelope.js';
import { newResponseState, type RequestContext, type ResponseState } from '../../src/procedures/context.js';
import type { ToolCallOptions } from '../tools/invokeTool.js';
import { resourceTemplates } from './resources.js';
import { RPC_INTERNAL_ERROR, RPC_INVALID_PARAMS, RpcError } from '../server/rpcError.js';

/** How many values one completion answers with (the spec allows 100; a picker shows a screenful). */
export const COMPLETION_LIMIT = 20;
/** `_meta` key of a completion's `{ id: name }` map: the values are ids, a picker shows the names. */
export const COMPLETION_NAMES_META = 'svc/names';
/** A typed prefix longer than any name or id: refused as invalid params. */
const MAX_VALUE = 200;
const ROUTE = 'completion/complete';

/** The scope each completed argument needs: the one its resource's read needs. */
const ARGUMENT_SCOPES: Record<string, string> = {
  roomId: 'rooms:read',
  recordId: 'records:read',
  fileId: 'files:read',
};

/** The request's params, as the SDK has checked them against the spec's schema (a bad shape never gets here). */
type CompleteParams = CompleteRequest['params'];

type Named = { id: string; name: string };

/**
 * `completion/complete` for the resource templates' arguments (mcp/resources/resources.ts): `roomId` to the rooms the
 * caller can read (`readableRoomsByPrefix`, the room list's condition, a delegated token's room restriction
 * included), `recordId` and `fileId` to those of `context.arguments.roomId` the caller can read
 * (`readableRoomObjectsByPrefix`). A room the caller cannot read, or that does not exist, completes to nothing,
 * the same answer as a readable room with no match, so a completion never tells another room's existence.
 * Counted in the caller's
 * rate-limit window and audited like every request; no units (like the resource and tool lists).
 */
export async function complete(
  params: CompleteParams,
  call: Omit<ToolCallOptions, 'signal'>,
  onOutcome?: (out: ResponseState) => void,
): Promise<CompleteResult> {
  const { ref, argument } = params;
  if (ref.type !== 'ref/resource') throw new RpcError(RPC_INVALID_PARAMS, `svc has no prompts: ${ref.name}`);
  const template = resourceTemplates().find((t) => t.uriTemplate === ref.uri);
  if (!template)
    throw new RpcError(
      RPC_INVALID_PARAMS,
      `Resource not found: ${ref.uri} is not a resource template (resources/templates/list)`,
      { uri: ref.uri },
    );
  const variables = [...template.uriTemplate.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  if (!variables.includes(argument.name)) {
    throw new RpcError(
      RPC_INVALID_PARAMS,
      `${template.uriTemplate} has no argument ${argument.name}; it has ${variables.join(', ')}`,
    );
  }
  if (argument.value.length > MAX_VALUE)
    throw new RpcError(RPC_INVALID_PARAMS, `argument.value is longer than ${MAX_VALUE} characters`);
  const roomId = params.context?.arguments?.roomId;
  if (argument.name !== 'roomId' && typeof roomId !== 'string') {
    throw new RpcError(
      RPC_INVALID_PARAMS,
      `Completing ${argument.name} needs context.arguments.roomId (complete roomId first)`,
    );
  }

  const actor = call.actor!;
  const ctx: RequestContext = {
    services: call.services,
    rateLimiter: call.rateLimiter,
    surface: 'mcp',
    requestId: call.requestId ?? newId('req'),
    method: 'POST',
    path: ROUTE,
    routePattern: ROUTE,
    clientIp: call.clientIp,
    credentials: call.credentials,
    authenticated: actor,
    out: newResponseState(),
  };
  ctx.out.actor = actor;
  let error: DomainError | undefined;
  try {
    await count(ctx, actor, 0, false);
    // without the argument's read scope there is nothing the caller could pick: nothing, as resources/list does
    if (!actor.scopes.includes(ARGUMENT_SCOPES[argument.name])) return answer([]);
    const m = call.services.ds.manager;
    if (argument.name === 'roomId')
      return answer(await readableRoomsByPrefix(m, actor, argument.value, COMPLETION_LIMIT + 1));
    const kind = argument.name === 'recordId' ? 'record' : 'file';
    return answer(await readableRoomObjectsByPrefix(m, actor, roomId!, kind, argument.value, COMPLETION_LIMIT + 1));
  } catch (err) {
    error = err instanceof DomainError ? err : new DomainError('internal_error', 'The completion failed');
    if (!(err instanceof DomainError)) call.services.log.error({ err, requestId: ctx.requestId }, 'completion failed');
    throw new RpcError(
      error.status >= 500 ? RPC_INTERNAL_ERROR : RPC_INVALID_PARAMS,
      error.message,
      errorEnvelope(error, ctx.requestId),
    );
  } finally {
    onOutcome?.(ctx.out);
    await recordAudit(
      call.services,
      auditRow(
        {
          requestId: ctx.requestId,
          surface: 'mcp',
          method: 'POST',
          routePattern: ROUTE,
          statusCode: error?.status ?? 200,
          units: 0,
          errorCode: error?.code ?? null,
        },
        actor,
      ),
    );
  }
}

/** At most COMPLETION_LIMIT ids (one more was read to know whether there are more), their names in `_meta`. */
function answer(rows: Named[]): CompleteResult {
  const shown = rows.slice(0, COMPLETION_LIMIT);
  return {
    completion: { values: shown.map((r) => r.id), hasMore: rows.length > COMPLETION_LIMIT },
    _meta: { [COMPLETION_NAMES_META]: Object.fromEntries(shown.map((r) => [r.id, r.name])) },
  };
}
