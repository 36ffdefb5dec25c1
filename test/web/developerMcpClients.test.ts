import { describe, expect, it } from 'vitest';
import { OAuthClientApproval } from '../../db/entities/index.js';
import { DevBrowser, startDeveloperEnv } from './developerHelpers.js';

const URL_A = 'https://vscode.dev/oauth/client-metadata.json';

describe('/settings/developer: Approved MCP clients', () => {
  it('an organization owner approves a client-id URL or origin and removes it; CSRF is required', async () => {
    await using env = await startDeveloperEnv();
    const { t, w } = env;
    const b = await DevBrowser.signedIn(t, w.owner);
    const first = await b.page('/settings/developer/mcp');
    expect(first.html).toContain('<h2 id="mcp-clients-title">Approved MCP clients</h2>');
    expect(first.html).toContain('No MCP clients approved for Acme.');

    const ok = await b.submit('/settings/developer/mcp-clients', { url: URL_A, org: w.orgId });
    expect(ok.status).toBe(303);
    expect(ok.location).toBe('/settings/developer/mcp?notice=mcp-client-approved#mcp-clients');
    const origin = await b.submit('/settings/developer/mcp-clients', { url: 'https://claude.ai/', org: w.orgId });
    expect(origin.status).toBe(303);
    const listed = await b.page('/settings/developer/mcp');
    expect(listed.html).toContain(`<code>${URL_A}</code>`);
    expect(listed.html).toContain('<code>https://claude.ai</code>');
    const rows = await t.rt.ds.getRepository(OAuthClientApproval).find({ order: { createdAt: 'ASC', id: 'ASC' } });
    expect(rows.map((r) => [r.pattern, r.organizationId, r.createdById])).toEqual([
      [URL_A, w.orgId, w.owner.id],
      ['https://claude.ai', w.orgId, w.owner.id],
    ]);

    // bad input: the page again with the problem, nothing stored
    for (const [url, problem] of [
      ['http://vscode.dev/x.json', 'must use https'],
      ['https://vscode.dev/a#b', 'must not have a fragment'],
      ['nope', 'Give an https client-id URL'],
    ]) {
      await b.page('/settings/developer/mcp');
      const r = await b.submit('/settings/developer/mcp-clients', { url, org: w.orgId });
      expect(r.status, url).toBe(400);
      expect(r.html, url).toContain(problem);
    }
    await b.page('/settings/developer/mcp');
    const noCsrf = await b.submit(
      '/settings/developer/mcp-clients',
      { url: 'https://other.example/c.json', org: w.orgId },
      { csrf: null },
    );
    expect(noCsrf.status).toBe(403);
    expect(await t.rt.ds.getRepository(OAuthClientApproval).count()).toBe(2);

    await b.page('/settings/developer/mcp');
    // the Remove button leads to a confirmation step; a POST without the confirmation answers with it
    const confirm = await b.page(`/settings/developer/mcp-clients/remove?approval=${rows[0].id}`);
    expect(confirm.html).toContain('Remove MCP client approval?');
    expect(confirm.html).toContain('<input type="hidden" name="confirm" value="yes">');
    const unconfirmed = await b.submit('/settings/developer/mcp-clients/remove', { approval: rows[0].id });
    expect(unconfirmed.status).toBe(200);
    expect(unconfirmed.html).toContain('Remove MCP client approval?');
    expect(await t.rt.ds.getRepository(OAuthClientApproval).count()).toBe(2);
    const removed = await b.submit('/settings/developer/mcp-clients/remove', { approval: rows[0].id, confirm: 'yes' });
    expect(removed.status).toBe(303);
    expect(removed.location).toBe('/settings/developer/mcp?notice=mcp-client-removed#mcp-clients');
    expect((await t.rt.ds.getRepository(OAuthClientApproval).find()).map((r) => r.pattern)).toEqual([
      'https://claude.ai',
    ]);
  });

  it('a member can neither approve nor remove, and sees who can', async () => {
    await using env = await startDeveloperEnv();
    const { t, w } = env;
    const owner = await DevBrowser.signedIn(t, w.owner);
    await owner.page('/settings/developer/mcp');
    await owner.submit('/settings/developer/mcp-clients', { url: URL_A, org: w.orgId });
    const [approval] = await t.rt.ds.getRepository(OAuthClientApproval).find();

    const b = await DevBrowser.signedIn(t, w.member);
    const page = await b.page('/settings/developer/mcp');
    expect(page.html).toContain('Only an owner or admin of an organization approves MCP clients.');
    const add = await b.submit('/settings/developer/mcp-clients', { url: 'https://evil.example/c.json', org: w.orgId });
    expect(add.status).toBe(403);
    expect(add.html).toContain('Only an owner or admin of the organization can approve MCP clients for it.');
    await b.page('/settings/developer/mcp');
    expect((await b.page(`/settings/developer/mcp-clients/remove?approval=${approval.id}`)).status).toBe(404);
    await b.page('/settings/developer/mcp');
    const remove = await b.submit('/settings/developer/mcp-clients/remove', { approval: approval.id, confirm: 'yes' });
    expect(remove.status).toBe(404);
    expect((await t.rt.ds.getRepository(OAuthClientApproval).find()).map((r) => r.pattern)).toEqual([URL_A]);
  });
});
