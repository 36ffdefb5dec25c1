import { createHash } from 'node:crypto';
import {
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type CallToolResult,
  type InputRequiredResult,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Actor, AuthenticatedActor } from '../../src/domain/actor.js';
import { DomainError } from '../../src/domain/errors.js';
import { hmacHex, safeEqual } from '../../src/domain/hashing.js';
import type { Services } from '../../src/domain/services.js';
import { errorEnvelope } from '../../src/http/envelope.js';
import type { ProcedureInfo } from '../../src/procedures/index.js';
import type { ConfirmTarget } from '../../src/procedures/meta.js';
import { IDEMPOTENCY_ARGUMENT } from './toolCatalog.js';

/** The `inputRequests` key of the confirmation form, and its one field. */
export const CONFIRM_KEY = 'confirm';
/** How long a confirmation may take: a human reads the form and answers. */
export const CONFIRM_TTL_SECONDS = 300;

/** What the signed `requestState` of a confirmation holds (readable by the client, not changeable). */
interface ConfirmState {
  tool: string;
  /** SHA-256 of the arguments as called (the idempotency key aside): the retry must call the same. */
  args: string;
  target: string;
  version: string;
}

type Args = Record<string, unknown>;

/**
 * Whether a call is confirmed by the human first (docs/mcp.md "Confirmation before destructive tools"): a tool
 * marked destructive, called on 2026-07-28 by a client declaring elicitation, with a person's OAuth token. An
 * API key (an app), an agent run's delegated token, a 2025 client and a client without elicitation are never
 * asked: automation does not wait for a human who is not there.
 */
export function needsConfirmation(
  proc: ProcedureInfo,
  actor: AuthenticatedActor | undefined,
  clientCapabilities: unknown,
): boolean {
  if (proc.meta.destructive !== true || !proc.meta.confirmTarget) return false;
  if (!actor || actor.credential.method !== 'oauth_bearer' || actor.agentRunId !== undefined) return false;
  const elicitation = (clientCapabilities as { elicitation?: { form?: unknown; url?: unknown } } | undefined)
    ?.elicitation;
  // `elicitation: {}` declares form mode (client/elicitation "Capabilities"); only `{ url: {} }` excludes it
  return (
    !!elicitation &&
    typeof elicitation === 'object' &&
    (elicitation.form !== undefined || elicitation.url === undefined)
  );
}

/** The codec of confirmation states: HMAC with a key derived from the server secret, bound to the credential. */
export function confirmCodec(secret: string, actor: AuthenticatedActor | undefined): RequestStateCodec<ConfirmState> {
  return createRequestStateCodec<ConfirmState>({
    key: hmacHex(secret, 'mcp:requestState'),
    ttlSeconds: CONFIRM_TTL_SECONDS,
    bind: (ctx) => `${ctx.mcpReq.method}\0${actor?.credential.method ?? ''}:${actor?.credential.id ?? ''}`,
  });
}

const digest = (args: Args): string => {
  const { [IDEMPOTENCY_ARGUMENT]: _key, ...rest } = args;
  return createHash('sha256')
    .update(
      JSON.stringify(
        Object.keys(rest)
          .sort()
          .map((k) => [k, rest[k]]),
      ),
    )
    .digest('base64url');
};

/** A refusal as a tool error, in the shape every tool error has (the REST envelope as text). */
function refusal(
  code: 'conflict' | 'validation_error' | 'forbidden',
  message: string,
  details?: Record<string, unknown>,
): CallToolResult {
  const error = new DomainError(code, message, { details });
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(errorEnvelope(error, '')) }] };
}

export type Confirmation = { kind: 'run' } | { kind: 'answer'; result: CallToolResult | InputRequiredResult };

/**
 * The confirmation round of a destructive call: without state, the form (the target's name and current state)
 * and a signed state; with the state (the SDK has verified its MAC, expiry and credential), the same tool and
 * arguments, the target unchanged since the form, and the human's acceptance: then the call runs once, through
 * the pipeline. A decline writes nothing; a changed target is a conflict.
 */
export async function confirm(
  proc: ProcedureInfo,
  args: Args,
  ctx: ServerContext,
  o: { services: Services; actor: Actor; codec: RequestStateCodec<ConfirmState> },
): Promise<Confirmation> {
  const tool = proc.meta.tool.name;
  const read = proc.meta.confirmTarget;
  if (!read) return { kind: 'run' };
  let target: ConfirmTarget | null;
  try {
    target = await read(o.services.ds.manager, o.actor, args);
  } catch (err) {
    if (err instanceof DomainError && err.status < 500) return { kind: 'run' }; // the tool answers its own refusal
    throw err;
  }
  const state = ctx.mcpReq.requestState<ConfirmState>();
  if (state === undefined) {
    if (!target) return { kind: 'run' };
    return { kind: 'answer', result: await ask(tool, target, args, ctx, o.codec) };
  }
  if (
    typeof state !== 'object' ||
    state === null ||
    state.tool !== tool ||
    typeof state.args !== 'string' ||
    !safeEqual(state.args, digest(args))
  ) {
    return {
      kind: 'answer',
      result: refusal(
        'validation_error',
        'This confirmation was given for another call: call the tool again without requestState to be asked again. Nothing was changed.',
      ),
    };
  }
  if (!target || target.id !== state.target || target.version !== state.version) {
    return {
      kind: 'answer',
      result: refusal(
        'conflict',
        'The target changed, or is gone, since it was shown for confirmation; nothing was changed. Call the tool again to see it as it is now.',
      ),
    };
  }
  const answer = inputResponse(ctx.mcpReq.inputResponses, CONFIRM_KEY);
  if (answer.kind === 'missing' || answer.kind !== 'elicit')
    return { kind: 'answer', result: await ask(tool, target, args, ctx, o.codec) };
  if (answer.action !== 'accept' || answer.content?.[CONFIRM_KEY] !== true) {
    // a tool error, not a success: clients hold structuredContent to the tool's outputSchema, never an error
    return {
      kind: 'answer',
      result: refusal(
        'forbidden',
        `Not confirmed: the person did not accept ${tool} (${answer.action}); nothing was changed. Do not call it again unless they ask.`,
        { confirmed: false, action: answer.action },
      ),
    };
  }
  return { kind: 'run' };
}

async function ask(
  tool: string,
  target: ConfirmTarget,
  args: Args,
  ctx: ServerContext,
  codec: RequestStateCodec<ConfirmState>,
): Promise<InputRequiredResult> {
  const requestState = await codec.mint({ tool, args: digest(args), target: target.id, version: target.version }, ctx);
  return inputRequired({
    inputRequests: {
      [CONFIRM_KEY]: inputRequired.elicit({
        mode: 'form',
        message: `${tool} will change ${target.shown}. Go ahead?`,
        requestedSchema: {
          type: 'object',
          properties: {
            [CONFIRM_KEY]: { type: 'boolean', title: 'Confirm', description: `Yes: ${tool} on ${target.shown}` },
          },
          required: [CONFIRM_KEY],
        },
      }),
    },
    requestState,
  });
}
