import { TableIndex, type MigrationInterface, type QueryRunner } from 'typeorm';

/** The developer page lists a user's recent API activity: index the audit log by user and time. */
export class AuditUserIndex1764000004000 implements MigrationInterface {
  name = 'AuditUserIndex1764000004000';

  async up(q: QueryRunner): Promise<void> {
    await q.createIndex(
      'audit_log',
      new TableIndex({ name: 'IDX_audit_log_userId_createdAt', columnNames: ['userId', 'createdAt'] }),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropIndex('audit_log', 'IDX_audit_log_userId_createdAt');
  }
}
