import { describe, expect, it } from 'vitest';
import { createWorld, startTestServer } from '../helpers/harness.js';
import { postMcp, toolCall } from '../mcp/mcpClient.js';
import { startReceiver } from '../webhooks/helpers.js';
import { svc } from '../webhooks/processes.js';
import { invokeDue, invokerKey, startRun } from './helpers.js';

describe('svc connector and svc audit list --run', () => {
  it("registers, lists and (de)activates connectors; refuses internal endpoints; lists a run's audit rows", async () => {
    await using t = await startTestServer();
    const w = await createWorld(t.rt);
    const env = { ...t.env, PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? t.dataDir };
    await using rx = await startReceiver([{ status: 202 }]);
    const created = await svc(env, [
      'connector',
      'create',
      '--org',
      w.orgId,
      '--name',
      'Lines',
      '--url',
      rx.url,
      '--scopes',
      'mcp:tools,messages:write',
    ]);
    expect(created).toEqual({
      id: expect.stringMatching(/^acn_/),
      secret: expect.stringMatching(/^whsec_/),
      agentKey: expect.any(String),
      startRun: expect.any(String),
    });
    // what comes next, ready to paste: the key that may start runs with exactly the connector's scopes, and a run
    expect(created.agentKey).toBe(
      `npx svc key create --user $USER_ID --org ${w.orgId} --name agent-runs ` +
        '--scopes agent:invoke,mcp:tools,messages:write --mode test --json',
    );
    expect(created.startRun).toContain(`/v1/rooms/$ROOM/agent-runs`);
    expect(created.startRun).toContain(`"connectorId":"${created.id}"`);
    const listed = await svc(env, ['connector', 'list', '--org', w.orgId]);
    expect(listed.data).toEqual([
      expect.objectContaining({ id: created.id, name: 'Lines', scopes: ['mcp:tools', 'messages:write'], active: true }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(created.secret);

    const refused = svc(env, [
      'connector',
      'create',
      '--org',
      w.orgId,
      '--name',
      'Meta',
      '--url',
      'http://169.254.169.254/x',
      '--scopes',
      'mcp:tools',
    ]);
    await expect(refused).rejects.toThrow(/internal/);
    await expect(refused).rejects.not.toThrow(/169\.254/);
    await expect(
      svc(env, ['connector', 'create', '--org', w.orgId, '--name', 'X', '--url', rx.url, '--scopes', 'agent:invoke']),
    ).rejects.toThrow(/cannot be delegated/);

    const key = await invokerKey(t.rt, w);
    const run = (await startRun(t, key, w.roomId, created.id)).body;
    await invokeDue(t.rt);
    const token = JSON.parse(rx.requests[0].body.toString('utf8')).delegation.accessToken as string;
    expect(
      (await postMcp(t, toolCall('create_message', { roomId: w.roomId, body: 'from the agent' }), { token })).status,
    ).toBe(200);
    const audit = await svc(env, ['audit', 'list', '--run', run.id]);
    expect(audit.data).toEqual([
      expect.objectContaining({
        routePattern: 'create_message',
        actor: 'agent',
        delegatingUserId: w.owner.id,
        statusCode: 201,
      }),
    ]);

    expect(await svc(env, ['connector', 'deactivate', '--id', created.id])).toEqual({});
    expect((await startRun(t, key, w.roomId, created.id)).status).toBe(409);
    expect(await svc(env, ['connector', 'activate', '--id', created.id])).toEqual({});
    expect((await startRun(t, key, w.roomId, created.id)).status).toBe(202);
  }, 180_000);
});
