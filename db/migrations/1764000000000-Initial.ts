import type { MigrationInterface, QueryRunner } from 'typeorm';
import { col, table } from './tableBuilder.js';

/** The domain model, API keys, audit log, idempotency records and unit balances. */
export class Initial1764000000000 implements MigrationInterface {
  name = 'Initial1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      table('users', [
        col.id(),
        col.text('email', { isUnique: true }),
        col.text('name'),
        col.text('passwordHash'),
        col.text('locale'),
        col.time('createdAt'),
        col.time('updatedAt'),
      ]),
    );
    await q.createTable(
      table('organizations', [
        col.id(),
        col.text('name'),
        col.text('plan', { default: "'default'" }),
        col.time('createdAt'),
      ]),
    );
    await q.createTable(
      table(
        'memberships',
        [col.id(), col.ref('organizationId'), col.ref('userId'), col.text('role'), col.time('createdAt')],
        [{ columns: ['organizationId', 'userId'], unique: true }, { columns: ['userId'] }],
      ),
    );
    await q.createTable(
      table(
        'rooms',
        [
          col.id(),
          col.text('name'),
          col.int('roomType'),
          col.ref('organizationId', true),
          col.ref('createdById'),
          col.time('createdAt'),
          col.time('updatedAt'),
        ],
        [{ columns: ['organizationId'] }],
      ),
    );
    await q.createTable(
      table(
        'room_members',
        [col.id(), col.ref('roomId'), col.ref('userId'), col.time('createdAt')],
        [{ columns: ['roomId', 'userId'], unique: true }, { columns: ['userId'] }],
      ),
    );
    await q.createTable(
      table(
        'messages',
        [
          col.id(),
          col.ref('roomId'),
          col.ref('authorId'),
          col.text('postedBy'),
          col.text('body'),
          col.time('createdAt'),
        ],
        [{ columns: ['roomId', 'id'] }],
      ),
    );
    await q.createTable(
      table(
        'tasks',
        [
          col.id(),
          col.ref('roomId'),
          col.text('title'),
          col.text('description', { default: "''" }),
          col.text('status'),
          col.ref('assigneeId', true),
          col.text('startDate', { isNullable: true }),
          col.text('dueDate', { isNullable: true }),
          col.ref('createdById'),
          col.time('createdAt'),
          col.time('updatedAt'),
        ],
        [{ columns: ['roomId', 'id'] }],
      ),
    );
    await q.createTable(
      table(
        'records',
        [
          col.id(),
          col.ref('roomId'),
          col.text('title'),
          col.text('body', { default: "''" }),
          col.text('approvalState'),
          col.ref('createdById'),
          col.time('createdAt'),
          col.time('updatedAt'),
        ],
        [{ columns: ['roomId', 'id'] }],
      ),
    );
    await q.createTable(
      table(
        'approvals',
        [
          col.id(),
          col.ref('recordId'),
          col.ref('roomId'),
          col.text('status'),
          col.ref('requestedById'),
          col.ref('decidedById', true),
          col.text('comment', { isNullable: true }),
          col.time('createdAt'),
          col.time('decidedAt', true),
        ],
        [{ columns: ['recordId', 'id'] }],
      ),
    );
    await q.createTable(
      table(
        'files',
        [
          col.id(),
          col.ref('roomId'),
          col.ref('messageId', true),
          col.ref('taskId', true),
          col.text('filename'),
          col.text('contentType'),
          col.bigint('size'),
          col.text('sha256'),
          col.text('storageKey'),
          col.ref('uploadedById'),
          col.time('createdAt'),
        ],
        [{ columns: ['roomId', 'id'] }],
      ),
    );
    await q.createTable(
      table(
        'events',
        [
          col.id('seq'),
          col.text('id', { isUnique: true }),
          col.text('type'),
          col.ref('organizationId', true),
          col.ref('ownerUserId', true),
          col.ref('roomId'),
          col.text('objectType'),
          col.ref('objectId'),
          col.text('actor'),
          col.ref('userId'),
          col.time('createdAt'),
        ],
        [{ columns: ['organizationId', 'seq'] }, { columns: ['roomId', 'seq'] }],
      ),
    );
    await q.createTable(
      table(
        'api_keys',
        [
          col.id(),
          col.ref('userId'),
          col.ref('organizationId', true),
          col.text('name'),
          col.text('mode'),
          col.text('scopes'),
          col.text('tokenHash', { isUnique: true }),
          col.text('prefix'),
          col.text('last4'),
          col.time('createdAt'),
          col.time('revokedAt', true),
        ],
        [{ columns: ['userId'] }],
      ),
    );
    await q.createTable(
      table('settings', [{ name: 'key', type: 'varchar', length: '64', isPrimary: true }, col.text('value')]),
    );
    await q.createTable(
      table(
        'audit_log',
        [
          col.id(),
          col.text('requestId'),
          col.text('surface'),
          col.text('method'),
          col.text('routePattern'),
          col.int('statusCode'),
          col.text('authMethod', { isNullable: true }),
          col.text('actor', { isNullable: true }),
          col.ref('delegatingUserId', true),
          col.text('scopes'),
          col.ref('organizationId', true),
          col.ref('userId', true),
          col.ref('apiKeyId', true),
          col.ref('tokenId', true),
          col.int('units'),
          col.text('errorCode', { isNullable: true }),
          col.time('createdAt'),
        ],
        [{ columns: ['createdAt'] }],
      ),
    );
    await q.createTable(
      table(
        'idempotency_keys',
        [
          col.id(),
          col.text('fingerprint'),
          col.text('state'),
          col.int('statusCode', { isNullable: true }),
          col.text('response', { isNullable: true }),
          col.time('createdAt'),
          col.time('expiresAt'),
        ],
        [{ columns: ['expiresAt'] }],
      ),
    );
    await q.createTable(
      table('unit_usage', [
        { name: 'billingEntity', type: 'varchar', length: '80', isPrimary: true },
        { name: 'period', type: 'varchar', length: '7', isPrimary: true },
        col.bigint('used'),
      ]),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'unit_usage',
      'idempotency_keys',
      'audit_log',
      'settings',
      'api_keys',
      'events',
      'files',
      'approvals',
      'records',
      'tasks',
      'messages',
      'room_members',
      'rooms',
      'memberships',
      'organizations',
      'users',
    ]) {
      await q.dropTable(t);
    }
  }
}
