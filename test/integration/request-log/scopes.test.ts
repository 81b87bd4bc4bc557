/**
 * The gateway and the storefront log their calls too: one entry per call, in the project
 * the scope charges (the intermediary's tenant, the seller's project), with the route the
 * usage record names and the scope it came on; a request the scope does not admit (a bad
 * signature) has no entry; another project's key is answered 404 for it.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, type TestServer } from '../../helpers/harness.js';
import { gatewayProjectId } from '../../../src/composition/gateway.js';
import { storefrontProjectId } from '../../../src/domain/storefront/sellers.js';
import { newId } from '../../../src/domain/shared/ids.js';
import { signedCall, startGatewayEnv, type GatewayEnv } from '../gateway/setup.js';
import { post, startStorefront, type StorefrontEnv } from '../storefront/support.js';
import { admin, flushLog } from './setup.js';

/** The project's entries, newest first, as the operator lists them. */
async function entriesOf(server: TestServer, projectId: string): Promise<any[]> {
  await flushLog(server);
  const res = await admin(server, 'GET', `/requests?project_id=${projectId}&limit=100`);
  expect(res.status).toBe(200);
  return res.body.data;
}

async function usageProjectOf(server: TestServer, requestId: string): Promise<string> {
  const row = await server.core.database.db.selectFrom('usage_records').select('project_id').where('request_id', '=', requestId).executeTakeFirstOrThrow();
  return row.project_id;
}

describe('the gateway', () => {
  let env: GatewayEnv;
  beforeAll(async () => {
    env = await startGatewayEnv({ startWorkers: false });
  }, 60_000);
  afterAll(async () => env?.close());

  it('logs one entry per signed call in the intermediary tenant, scope gateway; none for a bad signature; 404 to another project', async () => {
    const project = gatewayProjectId('default');
    const body = { model: 'llama-3.1-8b-instruct-fast', messages: [{ role: 'user', content: 'Hi' }] };
    const first = await signedCall(env.server.baseUrl, '/gateway/v1/chat/completions', body);
    const second = await signedCall(env.server.baseUrl, '/gateway/v1/chat/completions', { ...body, stream: true });
    const forged = await signedCall(env.server.baseUrl, '/gateway/v1/chat/completions', body, { signature: 't=1,kid=k1,v1=00' });
    expect([first.status, second.status, forged.status]).toEqual([200, 200, 401]);
    const ids = [first.headers.get('x-request-id')!, second.headers.get('x-request-id')!];
    let entries: any[] = [];
    await vi.waitFor(async () => {
      entries = await entriesOf(env.server, project);
      expect(entries).toHaveLength(2);
    });
    expect(entries.map((e) => e.id).sort()).toEqual([...ids].sort());
    for (const entry of entries) {
      expect(entry).toMatchObject({ project_id: project, key_id: null, route: '/v1/chat/completions', wire: 'chat-completions', scope: 'gateway', status: 200, model: 'llama-3.1-8b-instruct-fast' });
      expect(await usageProjectOf(env.server, entry.id)).toBe(project);
    }
    expect(entries.find((e) => e.id === ids[1]).stream).toBe(true);
    const forgedId = forged.headers.get('x-request-id')!;
    expect((await admin(env.server, 'GET', `/requests/${forgedId}`)).status).toBe(404);

    const other = await env.server.newTenant();
    const foreign = await call(env.server.baseUrl, 'GET', `/v1/requests/${ids[0]}`, { key: other.key });
    expect(foreign.status).toBe(404);
    expect((await call(env.server.baseUrl, 'GET', '/v1/requests', { key: other.key })).body.data).toEqual([]);
  });

  it('refuses to delete the tenant project the configuration names', async () => {
    const project = gatewayProjectId('default');
    const res = await admin(env.server, 'DELETE', `/projects/${project}`);
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({
      code: 'project_in_use',
      message: `Project ${project} is the gateway's tenant, named by the configuration: take it out of the configuration before deleting the project`,
    });
    expect((await admin(env.server, 'GET', `/projects/${project}`)).status).toBe(200);
  });
});

describe('the storefront', () => {
  let env: StorefrontEnv;
  beforeAll(async () => {
    env = await startStorefront({ agents: 1 });
  }, 60_000);
  afterAll(async () => env?.close());

  it("logs one entry per agent call in the seller's project, scope storefront; 404 to another project", async () => {
    const agent = env.agents[0]!;
    await env.server.features.storefront.services!.store.purchase({
      id: newId('mov_'), sellerId: 'sluice', holder: { kind: 'agent', agentId: agent.id }, kind: 'purchase',
      amountMicros: 1_000_000, paymentRef: `test:${agent.id}`, rail: 'card', detail: null, createdAtMs: Date.now(),
    });
    const token = await env.tokenOf(agent);
    const answer = await post(env, '/gateway/v1/chat/completions', { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hi' }] }, { authorization: `Bearer ${token}` });
    expect(answer.status).toBe(200);
    const id = answer.headers.get('x-request-id')!;
    const project = storefrontProjectId('sluice');
    let entries: any[] = [];
    await vi.waitFor(async () => {
      entries = await entriesOf(env.server, project);
      expect(entries).toHaveLength(1);
    });
    expect(entries[0]).toMatchObject({ id, project_id: project, key_id: null, route: '/v1/chat/completions', scope: 'storefront', status: 200, model: 'gpt-oss-120b' });
    expect(entries[0].cost_usd).toBe(0.000025);
    expect(await usageProjectOf(env.server, id)).toBe(project);

    const other = await env.server.newTenant();
    expect((await call(env.server.baseUrl, 'GET', `/v1/requests/${id}`, { key: other.key })).status).toBe(404);
  });
});
