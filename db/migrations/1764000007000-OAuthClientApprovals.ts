import type { MigrationInterface, QueryRunner } from 'typeorm';
import { col, table } from './tableBuilder.js';

/**
 * Client ID Metadata Document approvals: a client-id URL or an https origin that an
 * organization administrator (or, server-wide, an operator) approved once. `organizationId` null is a
 * server-wide approval made with `svc client allow` without `--org`.
 */
export class OAuthClientApprovals1764000007000 implements MigrationInterface {
  name = 'OAuthClientApprovals1764000007000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      table(
        'oauth_client_approvals',
        [
          col.id(),
          col.text('pattern'),
          col.ref('organizationId', true),
          col.ref('createdById', true),
          col.time('createdAt'),
        ],
        [{ columns: ['organizationId'] }],
      ),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropTable('oauth_client_approvals');
  }
}
