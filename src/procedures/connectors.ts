import { z } from 'zod';
import type { AgentConnector } from '../../db/entities/index.js';
import { listOrganizationConnectors } from '../agents/connectors.js';
import { idOf, listOf, pageInput, timestamp } from './schemas.js';
import { apiProcedure, router } from './trpc.js';

// The agent connectors of the caller's organization: what `create_agent_run` takes as its `connectorId`. Their
// endpoints and secrets are the administrators' (the developer settings page), never listed here.

export const ConnectorView = z
  .object({
    id: idOf('acn'),
    name: z.string(),
    active: z.boolean().meta({ description: 'An inactive connector refuses new runs (409 connector_inactive)' }),
    scopes: z.array(z.string()).meta({
      description: "Scopes the connector may be delegated: a run's token holds the invoker's scopes among these",
    }),
    createdAt: timestamp,
  })
  .meta({ id: 'AgentConnector' });

const toConnector = (c: AgentConnector): z.infer<typeof ConnectorView> => ({
  id: c.id,
  name: c.name,
  active: c.active,
  scopes: c.scopes,
  createdAt: c.createdAt,
});

export const connectorsRouter = router({
  list: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/connectors' },
      tool: {
        name: 'list_connectors',
        title: 'List agent connectors',
        description: "Your organization's agent connectors: the connectorId of create_agent_run.",
      },
      summary: 'List agent connectors',
      docs: {
        what: 'The agent connectors of the organization (the `connectorId` of a run; never their URLs or secrets)',
      },
      description:
        "The agent connectors of the caller's organization, oldest first, with the scopes each may be delegated (their URLs and secrets are never shown); empty in the individual context.",
      tags: ['agents'],
      scope: 'agent:invoke',
      units: 1,
      kind: 'read',
    })
    .input(z.strictObject({ ...pageInput }))
    .output(listOf(ConnectorView))
    .query(async ({ ctx, input }) => {
      const page = await listOrganizationConnectors(ctx.services.ds.manager, ctx.actor, input, ctx.services.secret);
      return { data: page.data.map(toConnector), nextCursor: page.nextCursor };
    }),
});
