import type { MigrationInterface, QueryRunner } from 'typeorm';
import { col, table } from './tableBuilder.js';

/** The OAuth 2.1 authorization server: clients, codes, grants (refresh families) and tokens. */
export class OAuth1764000001000 implements MigrationInterface {
  name = 'OAuth1764000001000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      table('oauth_clients', [
        col.id(),
        col.text('name'),
        col.text('type'),
        col.text('kind'),
        col.text('redirectUris'),
        col.text('scopes'),
        col.text('secretHash', { isNullable: true }),
        col.time('createdAt'),
      ]),
    );
    await q.createTable(
      table(
        'oauth_codes',
        [
          col.id(),
          col.text('codeHash', { isUnique: true }),
          col.ref('clientId'),
          col.ref('userId'),
          col.ref('organizationId', true),
          col.text('scopes'),
          col.text('resource'),
          col.text('redirectUri'),
          col.text('codeChallenge'),
          col.time('expiresAt'),
          col.time('createdAt'),
          col.time('usedAt', true),
          col.ref('grantId', true),
        ],
        [{ columns: ['expiresAt'] }],
      ),
    );
    await q.createTable(
      table(
        'oauth_grants',
        [
          col.id(),
          col.ref('clientId'),
          col.ref('userId'),
          col.ref('organizationId', true),
          col.text('scopes'),
          col.text('resource'),
          col.time('createdAt'),
          col.time('expiresAt'),
          col.time('revokedAt', true),
        ],
        [{ columns: ['clientId'] }, { columns: ['userId'] }],
      ),
    );
    await q.createTable(
      table(
        'oauth_tokens',
        [
          col.id(),
          col.ref('grantId'),
          col.text('kind'),
          col.text('tokenHash', { isUnique: true }),
          col.text('scopes'),
          col.time('createdAt'),
          col.time('expiresAt'),
          col.time('usedAt', true),
          col.time('revokedAt', true),
        ],
        [{ columns: ['grantId'] }],
      ),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['oauth_tokens', 'oauth_grants', 'oauth_codes', 'oauth_clients']) await q.dropTable(t);
  }
}
