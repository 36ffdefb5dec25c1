import { z } from 'zod';
import { organizationById } from '../../db/stores/organizations.js';
import { membership } from '../../db/stores/memberships.js';
import { listOrganizationMembers } from '../domain/memberships.js';
import { idOf, listOf, pageInput, timestamp } from './schemas.js';
import { apiProcedure, router } from './trpc.js';

export const MeView = z
  .object({
    id: idOf('usr'),
    email: z.string(),
    name: z.string(),
    locale: z.string().meta({ example: 'en' }),
    organizationId: idOf('org').nullable().meta({ description: 'null in the individual context' }),
    billingContext: z.enum(['individual', 'organization']),
    createdAt: timestamp,
  })
  .meta({ id: 'Me' });

export const OrganizationView = z
  .object({ id: idOf('org'), name: z.string(), role: z.enum(['owner', 'admin', 'member']), createdAt: timestamp })
  .meta({ id: 'Organization' });

export const OrganizationMemberView = z
  .object({
    userId: idOf('usr'),
    name: z.string(),
    role: z.enum(['owner', 'admin', 'member']),
    joinedAt: timestamp,
  })
  .meta({ id: 'OrganizationMember' });

export const meRouter = router({
  get: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/me' },
      tool: {
        name: 'get_me',
        title: 'Get the current user',
        description:
          'Who this credential acts for: the user and organization (null in the individual context). Call first.',
      },
      summary: 'The current user and acting context',
      description: 'Who the credential acts for: the user, and the organization (null in the individual context).',
      tags: ['me'],
      scope: 'me:read',
      units: 1,
      kind: 'read',
    })
    .input(z.strictObject({}))
    .output(MeView)
    .query(({ ctx }) => {
      // the user's row was read with the credential, in this request (a credential whose user is gone is a 401)
      const { user } = ctx.actor;
      return {
        id: ctx.actor.userId,
        email: user.email,
        name: user.name,
        locale: user.locale,
        organizationId: ctx.actor.organizationId,
        billingContext: ctx.actor.organizationId ? ('organization' as const) : ('individual' as const),
        createdAt: user.createdAt,
      };
    }),
});

export const organizationsRouter = router({
  list: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/organizations' },
      tool: {
        name: 'list_organizations',
        title: 'List organizations',
        description: 'The organization the credential acts in, with your role; empty in the individual context.',
      },
      summary: 'Organizations of the acting context',
      description:
        "The organization the credential acts in, with the caller's role. A credential of the individual context sees none (spec 5.3: other organizations answer as if they did not exist).",
      tags: ['organizations'],
      toolset: 'me',
      scope: 'organizations:read',
      units: 1,
      kind: 'read',
    })
    .input(z.strictObject({}))
    .output(z.object({ data: z.array(OrganizationView), nextCursor: z.null() }))
    .query(async ({ ctx }) => {
      const orgId = ctx.actor.organizationId;
      if (!orgId) return { data: [], nextCursor: null };
      const m = ctx.services.ds.manager;
      const [org, member] = await Promise.all([organizationById(m, orgId), membership(m, orgId, ctx.actor.userId)]);
      if (!org || !member) return { data: [], nextCursor: null };
      return {
        data: [{ id: org.id, name: org.name, role: member.role, createdAt: org.createdAt }],
        nextCursor: null,
      };
    }),

  members: apiProcedure
    .meta({
      http: { method: 'GET', path: '/v1/organizations/{organizationId}/members' },
      tool: {
        name: 'list_organization_members',
        title: 'List organization members',
        description: "Your organization's members: the userId of add_room_member.",
      },
      summary: 'Members of the organization',
      docs: {
        what: "Members of the acting organization, with names and roles (the `userId` to add to a room); an agent run's token sees its room's members only",
      },
      description:
        "The members of the organization the credential acts in (its id from GET /v1/organizations), oldest membership first, with their names and roles: who can be added to its rooms. Another organization answers 404 not_found. An agent run's delegated token sees the members of its run's room only.",
      tags: ['organizations'],
      toolset: 'me',
      scope: 'organizations:read',
      units: 1,
      kind: 'read',
      errors: ['not_found'],
    })
    .input(z.strictObject({ organizationId: idOf('org'), ...pageInput }))
    .output(listOf(OrganizationMemberView))
    .query(({ ctx, input }) =>
      listOrganizationMembers(ctx.services.ds.manager, ctx.actor, input.organizationId, input, ctx.services.secret),
    ),
});
