import { TableColumn, type MigrationInterface, type QueryRunner } from 'typeorm';
import { col, table } from './tableBuilder.js';

/**
 * The agent route: agent connectors (`agent_connectors`), agent runs (`agent_runs`, also the outbox
 * of their invocations: leased like webhook deliveries), the run that created a message or task
 * (`agentRunId`), the delegated token's room restriction and run (`oauth_tokens.roomId`, `.agentRunId`), and
 * the run an audited request acted for (`audit_log.agentRunId`).
 */
export class AgentRuns1764000008000 implements MigrationInterface {
  name = 'AgentRuns1764000008000';

  async up(q: QueryRunner): Promise<void> {
    await q.createTable(
      table(
        'agent_connectors',
        [
          col.id(),
          col.ref('organizationId'),
          col.text('name'),
          col.text('url'),
          col.text('scopes'),
          col.text('secretEnc'),
          col.bool('active'),
          col.ref('createdById', true),
          col.time('createdAt'),
          col.time('updatedAt'),
        ],
        [{ columns: ['organizationId', 'id'] }],
      ),
    );
    await q.createTable(
      table(
        'agent_runs',
        [
          col.id(),
          col.ref('connectorId'),
          col.ref('roomId'),
          col.ref('organizationId'),
          col.ref('userId'),
          col.text('invokedBy'),
          col.ref('apiKeyId', true),
          col.ref('tokenId', true),
          col.text('scopes'),
          col.text('input'),
          col.text('status'),
          col.bool('awaitingCompletion'),
          col.int('attempts'),
          col.int('maxAttempts'),
          col.time('nextAttemptAt'),
          col.text('leaseOwner', { isNullable: true }),
          col.time('leaseUntil', true),
          col.time('deadlineAt'),
          col.int('lastStatusCode', { isNullable: true }),
          col.text('error', { isNullable: true }),
          col.text('output', { isNullable: true }),
          col.time('createdAt'),
          col.time('startedAt', true),
          col.time('finishedAt', true),
          col.time('updatedAt'),
        ],
        [{ columns: ['roomId', 'id'] }, { columns: ['status', 'nextAttemptAt'] }, { columns: ['connectorId'] }],
      ),
    );
    await q.addColumn('messages', new TableColumn(col.ref('agentRunId', true)));
    await q.addColumn('tasks', new TableColumn(col.ref('agentRunId', true)));
    await q.addColumns('oauth_tokens', [
      new TableColumn(col.ref('roomId', true)),
      new TableColumn(col.ref('agentRunId', true)),
    ]);
    await q.addColumn('audit_log', new TableColumn(col.ref('agentRunId', true)));
  }

  async down(q: QueryRunner): Promise<void> {
    await q.dropColumn('audit_log', 'agentRunId');
    await q.dropColumn('oauth_tokens', 'agentRunId');
    await q.dropColumn('oauth_tokens', 'roomId');
    await q.dropColumn('tasks', 'agentRunId');
    await q.dropColumn('messages', 'agentRunId');
    await q.dropTable('agent_runs');
    await q.dropTable('agent_connectors');
  }
}
