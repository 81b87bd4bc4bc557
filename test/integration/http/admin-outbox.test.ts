/**
 * The admin API's outbox routes: a settlement message whose receiver keeps failing goes
 * dead after `OUTBOX_MAX_ATTEMPTS`, is listed with its last error, and a replay sends it
 * again through the process's deliverer; replaying anything but a dead message is 409,
 * an unknown id 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyPrincipal } from '../../../src/domain/identity/caller.js';
import type { OutboxEntry } from '../../../src/domain/outbox/outbox.types.js';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** A receiver that is down until told otherwise. */
const receiver = { down: true, received: [] as OutboxEntry[] };

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({
    env: { OUTBOX_MAX_ATTEMPTS: '1' },
    startWorkers: true,
    extendApp: (_app, { core }) => {
      core.outbox.handlers.set('flaky', {
        async deliver(entry) {
          if (receiver.down) throw new Error('flaky receiver is down');
          receiver.received.push(entry);
        },
      });
    },
  });
});
afterAll(() => server.close());

async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('condition not met');
}

describe('admin API: the outbox', () => {
  it('lists a dead message with its last error, refuses other replays, and replays it', async () => {
    const tenant = await server.newTenant();
    const { billing } = server.core;
    const record = billing.usageRecord(apiKeyPrincipal(tenant.projectId, tenant.keyId), { model: 'm', route: 'r', requestId: 'req_flaky', inputTokens: 0, maxOutputTokens: 0 }, { inputTokens: 1, outputTokens: 1, status: 200 });
    await billing.write(record, { outbox: [{ targetKind: 'flaky', idempotencyKey: `usage:${record.id}`, payload: { n: 1 } }] });

    const dead = await until(async () => {
      const res = await call(server.baseUrl, 'GET', '/admin/v1/outbox/dead', { headers: admin });
      return res.body.data.find((m: any) => m.idempotency_key === `usage:${record.id}`);
    });
    expect(dead).toEqual({
      id: expect.stringMatching(/^outbox_/),
      object: 'outbox_message',
      target_kind: 'flaky',
      idempotency_key: `usage:${record.id}`,
      payload: { n: 1 },
      state: 'dead',
      attempts: 1,
      last_error: 'Error: flaky receiver is down',
      next_attempt_at: expect.any(Number),
      created_at: expect.any(Number),
      delivered_at: null,
    });

    expect((await call(server.baseUrl, 'GET', '/admin/v1/outbox/dead')).status).toBe(401);
    const unknown = await call(server.baseUrl, 'POST', '/admin/v1/outbox/outbox_nope/replay', { headers: admin });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'outbox_message_not_found', message: "No outbox message found with id 'outbox_nope'." });

    receiver.down = false;
    const replayed = await call(server.baseUrl, 'POST', `/admin/v1/outbox/${dead.id}/replay`, { headers: admin });
    expect(replayed.status).toBe(200);
    expect(replayed.body).toMatchObject({ id: dead.id, state: 'pending', attempts: 0, last_error: null });
    const delivered = await until(async () => receiver.received.find((e) => e.id === dead.id));
    expect(delivered.idempotencyKey).toBe(`usage:${record.id}`);

    const again = await until(async () => {
      const res = await call(server.baseUrl, 'POST', `/admin/v1/outbox/${dead.id}/replay`, { headers: admin });
      return res.body.error?.message?.includes('is delivered') ? res : undefined;
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({ code: 'outbox_message_not_dead', message: `Outbox message ${dead.id} is delivered; only a dead message is replayed` });
    const list = await call(server.baseUrl, 'GET', '/admin/v1/outbox/dead', { headers: admin });
    expect(list.body.data.map((m: any) => m.id)).not.toContain(dead.id);
  });
});
