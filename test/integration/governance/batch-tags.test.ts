/**
 * A batch line is labelled as its route labels a call: its body's `metadata.tags` and
 * `user` are kept on its usage record, and a bad tag fails that line alone with the
 * route's 400, naming the field.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { MODEL, isTerminal, jsonl, resultsOf, startBatch, upstreamYaml, waitForBatch } from '../batches/support/batch-helpers.js';
import { usageOf } from '../inference/setup.js';

let upstream: FakeUpstream;
let server: TestServer;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  server = await startTestServer({ yaml: upstreamYaml(upstream.baseUrl), startWorkers: true });
});
afterAll(async () => {
  await server.close();
  await upstream.close();
});

const line = (customId: string, extra: Record<string, unknown>) => ({
  custom_id: customId,
  method: 'POST',
  url: '/v1/chat/completions',
  body: { model: MODEL, messages: [{ role: 'user', content: `say ${customId}` }], ...extra },
});

it("keeps each line's tags and end user on its usage record; a bad tag fails its line with a 400", async () => {
  const { key, projectId } = await server.newTenant();
  const content = jsonl([
    line('tagged', { metadata: { tags: 'nightly,team-a' }, user: 'alice' }),
    line('plain', {}),
    line('bad', { metadata: { tags: 'no spaces allowed' } }),
  ]);
  const { batch } = await startBatch(server.baseUrl, key, content);
  const done = await waitForBatch(server.baseUrl, key, batch.id, isTerminal);
  expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
  const { errors } = await resultsOf(server.baseUrl, key, done);
  expect(errors.map((e: any) => [e.custom_id, e.response, e.error])).toEqual([
    [
      'bad',
      null,
      expect.objectContaining({
        code: 'invalid_request_error',
        message: '[legacy:http_400] metadata.tags: a tag may hold only letters, digits and . _ : / = - (got "no spaces allowed")',
      }),
    ],
  ]);
  const records = await usageOf(server, projectId);
  expect(records.map((r) => [r.route, r.tags ?? null, r.endUser ?? null]).sort()).toEqual([
    ['batch', null, null],
    ['batch', ['nightly', 'team-a'], 'alice'],
  ]);
});
