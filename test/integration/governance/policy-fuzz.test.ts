/**
 * Malformed policies on the admin key routes, generated (test/fuzz/http-surface.ts's key
 * policy fields): key creation, PATCH and rotate of a real key answer 200 or a 4xx in the
 * admin envelope, never a 5xx, and a refused change leaves the key as it was.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { keyPolicyFields } from '../../fuzz/http-surface.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const policyBody = fc.record({ name: fc.oneof(fc.string({ maxLength: 10 }), fc.integer()), ...keyPolicyFields }, { requiredKeys: [] });

describe('malformed key policies', () => {
  let server: TestServer;
  let projectId: string;
  let keyId: string;
  beforeAll(async () => {
    server = await startTestServer({ env: { RATE_LIMIT_RPM: '1000000' } });
    projectId = (await server.newTenant()).projectId;
    keyId = (await call(server.baseUrl, 'POST', `/admin/v1/projects/${projectId}/keys`, { headers: admin, body: { rpm: 5 } })).body.id;
  });
  afterAll(async () => server.close());

  it('never answer 5xx on create, PATCH or rotate; every refusal names its field', { timeout: 60_000 }, async () => {
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(policyBody, fc.constantFrom('create', 'patch', 'rotate'), async (body, route) => {
        const [method, url] =
          route === 'create' ? ['POST', `/admin/v1/projects/${projectId}/keys`] : route === 'patch' ? ['PATCH', `/admin/v1/keys/${keyId}`] : ['POST', `/admin/v1/keys/${keyId}/rotate`];
        const before = (await server.core.repositories.keys.findById(keyId))!;
        const res = await call(server.baseUrl, method, url, { headers: admin, body });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        expect(res.status, JSON.stringify({ body, answer: res.body })).toBeLessThan(500);
        if (res.status === 200) return;
        expect(res.status).toBe(400);
        expect(typeof res.body.error.message).toBe('string');
        expect(res.body.error.param, JSON.stringify(res.body)).not.toBeNull();
        expect(await server.core.repositories.keys.findById(keyId)).toEqual(before);
      }),
      { numRuns: 300 },
    );
    expect(statuses.get(400)).toBeGreaterThan(100);
  });
});
