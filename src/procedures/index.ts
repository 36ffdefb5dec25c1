import { agentRunsRouter } from './agentRuns.js';
import { connectorsRouter } from './connectors.js';
import { eventsRouter } from './events.js';
import type { AnyTRPCProcedure } from '@trpc/server';
import { type InvokeOptions, invokeProcedure, procedureDefOf } from '../fastpaths/invokeProcedure.js';
import { fileEvents, filesRouter } from './files.js';
import { meRouter, organizationsRouter } from './me.js';
import { messageEvents, messagesRouter } from './messages.js';
import { recordEvents, recordsRouter } from './records.js';
import { roomEvents, roomsRouter } from './rooms.js';
import { searchRouter } from './search.js';
import { taskEvents, tasksRouter } from './tasks.js';
import { router } from './trpc.js';
import { webhooksRouter } from './webhooks.js';
import type { ProcedureMeta } from './meta.js';
import type { z } from 'zod';
import type { CatalogEntry } from '../domain/catalogEntry.js';

/** The app router: one router per resource. Adding an operation here adds it to REST, OpenAPI and MCP. */
export const appRouter = router({
  me: meRouter,
  organizations: organizationsRouter,
  rooms: roomsRouter,
  messages: messagesRouter,
  tasks: tasksRouter,
  records: recordsRouter,
  files: filesRouter,
  events: eventsRouter,
  search: searchRouter,
  webhooks: webhooksRouter,
  connectors: connectorsRouter,
  agentRuns: agentRunsRouter,
});

export type AppRouter = typeof appRouter;

/**
 * The event catalog as the operation modules declare it: each module's events in this order, the stable types first
 * and the previews (never delivered) last. `npm run generate` writes it to src/domain/eventCatalog.generated.ts,
 * the table the domain emits from; the order is that of `GET /v1/event-types`.
 */
export function catalogEntries(): CatalogEntry[] {
  const declared: readonly CatalogEntry[] = [
    ...recordEvents,
    ...roomEvents,
    ...messageEvents,
    ...taskEvents,
    ...fileEvents,
  ];
  return [...declared.filter((e) => e.stable), ...declared.filter((e) => !e.stable)];
}

/** A procedure as the adapters see it: its path in the router, type, metadata and schemas. */
export interface ProcedureInfo {
  path: string;
  type: 'query' | 'mutation';
  meta: ProcedureMeta;
  input: z.ZodObject;
  output: z.ZodType;
  /** Runs the procedure (its pipeline, parsers and resolver) with this context and raw input. */
  call(o: InvokeOptions): Promise<unknown>;
}

/** Every procedure of the app router, in declaration order. */
export function listProcedures(): ProcedureInfo[] {
  return Object.entries(appRouter._def.procedures).map(([path, proc]) => {
    // (the router's record is typed by resource; at run time `procedures` holds each built procedure by path)
    const built = proc as unknown as AnyTRPCProcedure;
    const declared = built._def;
    const def = procedureDefOf<z.ZodType>(built);
    return {
      path,
      type: def.type,
      meta: declared.meta as ProcedureMeta,
      input: declared.inputs[0] as z.ZodObject,
      output: def.output,
      call: (o: InvokeOptions) => invokeProcedure(path, def, o),
    };
  });
}

export { type RequestContext, newResponseState } from './context.js';
export { toDomainError } from './errors.js';
export type { ProcedureMeta } from './meta.js';
