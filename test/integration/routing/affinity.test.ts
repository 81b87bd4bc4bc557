/**
 * Session affinity through the wires, on one replica in front of three fake engines: the
 * key each setting reads reaches the router (the `X-Claude-Code-Session-Id` header on
 * chat completions; a `previous_response_id` chain on the Responses API, through the
 * `openai` SDK; the prompt's prefix), every turn of a session reaches the engine of its first turn, sessions
 * spread over the engines, and the turns are counted in sluice_routing_affinity_total.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';

let engines: FakeUpstream[];
let server: TestServer;
let key: string;

const modelYaml = (id: string, keys: string) => `  ${id}:
    kind: chat
    affinity: { key: ${keys} }
    deployments:
${engines.map((e, i) => `      - { id: ${id}-${i}, base_url: ${e.baseUrl} }`).join('\n')}`;

beforeAll(async () => {
  engines = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeUpstream()]);
  const yaml = `routing:
  strategy: least_busy
models:
${modelYaml('header-llm', 'session_header')}
${modelYaml('chain-llm', 'previous_response')}
${modelYaml('prefix-llm', 'prefix, prefix_chars: 64')}
`;
  server = await startTestServer({ yaml, env: { RATE_LIMIT_RPM: '1000000' } });
  key = (await server.newTenant()).key;
});
afterAll(async () => {
  await server?.close();
  await Promise.all((engines ?? []).map((e) => e.close()));
});

/** The engine that received the request with `marker` in its last message. */
function engineOf(marker: string): number {
  const found = engines.flatMap((e, i) =>
    e.requests.some((r) => JSON.stringify((r.body as { messages?: unknown[] })?.messages?.at(-1) ?? null).includes(marker)) ? [i] : [],
  );
  expect(found).toHaveLength(1);
  return found[0]!;
}

describe('session affinity through the wires', () => {
  it('chat completions: the X-Claude-Code-Session-Id header keeps each session on one engine', async () => {
    const sessions = Array.from({ length: 9 }, (_, i) => `claude-session-${i}`);
    const placed = new Map<string, number>();
    for (let t = 0; t < 3; t++) {
      for (const session of sessions) {
        const marker = `${session} turn ${t}`;
        const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', {
          key,
          headers: { 'x-claude-code-session-id': session },
          body: { model: 'header-llm', messages: [{ role: 'user', content: marker }] },
        });
        expect(res.status).toBe(200);
        const engine = engineOf(marker);
        if (t === 0) placed.set(session, engine);
        else expect(engine).toBe(placed.get(session));
      }
    }
    expect(new Set(placed.values()).size).toBeGreaterThan(1);
  });

  it('responses: the turns of a previous_response_id chain stay on the engine of its first', async () => {
    const client = new OpenAI({ baseURL: `${server.baseUrl}/v1`, apiKey: key, maxRetries: 0 });
    const roots = new Set<number>();
    for (let chain = 0; chain < 6; chain++) {
      let previous: string | undefined;
      let first: number | undefined;
      for (let t = 0; t < 3; t++) {
        const marker = `chain ${chain} turn ${t}`;
        const response = await client.responses.create({ model: 'chain-llm', input: marker, ...(previous ? { previous_response_id: previous } : {}) });
        previous = response.id;
        const engine = engineOf(marker);
        first ??= engine;
        expect(engine).toBe(first);
      }
      roots.add(first!);
    }
    expect(roots.size).toBeGreaterThan(1);
  });

  it('chat completions: a prompt prefix keys the session when the request carries nothing else', async () => {
    const placed = new Map<number, number>();
    for (let t = 0; t < 3; t++) {
      for (let session = 0; session < 6; session++) {
        const marker = `prefix session ${session} turn ${t}`;
        const messages = [
          { role: 'system', content: `You are agent number ${session}, working on repository ${session * 7919}; keep every change small and tested.` },
          ...Array.from({ length: t }, (_, i) => ({ role: 'user', content: `earlier turn ${i}` })),
          { role: 'user', content: marker },
        ];
        expect((await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: 'prefix-llm', messages } })).status).toBe(200);
        const engine = engineOf(marker);
        if (t === 0) placed.set(session, engine);
        else expect(engine).toBe(placed.get(session));
      }
    }
    expect(new Set(placed.values()).size).toBeGreaterThan(1);
  });

  it('counts hits and new sessions in sluice_routing_affinity_total', async () => {
    const res = await fetch(`${server.baseUrl}/metrics`);
    const text = await res.text();
    const count = (outcome: string) => Number(new RegExp(`^sluice_routing_affinity_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    expect(count('new')).toBe(9 + 6 + 6);
    expect(count('hit')).toBe(9 * 2 + 6 * 2 + 6 * 2);
  });
});
