/**
 * The spend report (`GET /admin/v1/spend`, `GET /v1/spend`): exact sums per key, model,
 * tag, end user and day over a range; CSV and NDJSON exports; a project sees only its own
 * spend; `sluice spend` prints the same; the same once the janitor has rolled the days up.
 * Runs on SQLite, and on PostgreSQL under
 * `npm run test:postgres`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiKeyPrincipal } from '../../../src/domain/identity/caller.js';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { runSluice } from '../../helpers/cli.js';
import { janitorOf } from '../batches/support/test-clock.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const MARCH = Date.UTC(2026, 2, 1);
const DAY = 86_400_000;

let server: TestServer;
let a: { projectId: string; key: string; keyId: string };
let b: { projectId: string; key: string; keyId: string };

interface Seed {
  day: number;
  model: string;
  tags?: string[];
  endUser?: string;
  cost: number;
  input: number;
  output: number;
  keyless?: boolean;
}

async function seed(tenant: { projectId: string; keyId: string }, seeds: Seed[]) {
  const { billing } = server.core;
  for (const [i, s] of seeds.entries()) {
    const metered = { model: s.model, route: '/v1/chat/completions', requestId: `req_spend_${i}`, inputTokens: 0, maxOutputTokens: 0 };
    const labelled = { ...metered, ...(s.tags ? { tags: s.tags } : {}), ...(s.endUser ? { endUser: s.endUser } : {}) };
    const record = billing.usageRecord(apiKeyPrincipal(tenant.projectId, s.keyless ? null : tenant.keyId), labelled, {
      inputTokens: s.input,
      outputTokens: s.output,
      status: 200,
      costMicros: s.cost,
    });
    record.createdAtMs = MARCH + s.day * DAY + 3_600_000;
    await billing.write(record);
  }
}

beforeAll(async () => {
  server = await startTestServer();
  a = await server.newTenant({ balanceUsd: 100 });
  b = await server.newTenant({ balanceUsd: 100 });
  await seed(a, [
    { day: 0, model: 'm-small', tags: ['team-a', 'prod'], endUser: 'alice', cost: 100, input: 10, output: 1 },
    { day: 0, model: 'm-large', tags: ['team-a'], endUser: 'bob', cost: 2_000, input: 20, output: 2 },
    { day: 1, model: 'm-small', tags: ['prod'], cost: 300, input: 30, output: 3 },
    { day: 2, model: 'm-small', endUser: 'alice', cost: 4_000, input: 40, output: 4, keyless: true },
    // April: outside the range asked for.
    { day: 31, model: 'm-small', tags: ['team-a'], endUser: 'alice', cost: 50_000, input: 50, output: 5 },
  ]);
  await seed(b, [{ day: 0, model: 'm-other', tags: ['team-a'], endUser: 'zed', cost: 7, input: 1, output: 1 }]);
});
afterAll(async () => server.close());

const range = 'since=2026-03-01&until=2026-04-01';
const adminSpend = (query: string) => call(server.baseUrl, 'GET', `/admin/v1/spend?${query}`, { headers: admin });
const row = (group: string | null, requests: number, input: number, output: number, cost: number) => ({
  group,
  requests,
  input_tokens: input,
  input_cached_tokens: 0,
  input_cache_write_tokens: 0,
  output_tokens: output,
  cost_micros: cost,
  cost_usd: cost / 1e6,
});

describe('GET /admin/v1/spend', () => {
  it('sums per key, model, tag, end user and day, for one project', async () => {
    const by = async (group: string) => {
      const res = await adminSpend(`group_by=${group}&${range}&project_id=${a.projectId}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'spend_report', group_by: group, since: MARCH / 1000, until: (MARCH + 31 * DAY) / 1000 });
      return res.body.data;
    };
    expect(await by('key')).toEqual([row(null, 1, 40, 4, 4_000), row(a.keyId, 3, 60, 6, 2_400)]);
    expect(await by('model')).toEqual([row('m-large', 1, 20, 2, 2_000), row('m-small', 3, 80, 8, 4_400)]);
    expect(await by('tag')).toEqual([row('prod', 2, 40, 4, 400), row('team-a', 2, 30, 3, 2_100)]);
    expect(await by('end_user')).toEqual([row(null, 1, 30, 3, 300), row('alice', 2, 50, 5, 4_100), row('bob', 1, 20, 2, 2_000)]);
    expect(await by('day')).toEqual([row('2026-03-01', 2, 30, 3, 2_100), row('2026-03-02', 1, 30, 3, 300), row('2026-03-03', 1, 40, 4, 4_000)]);
  });

  it('answers the same once the janitor has rolled the days up (the rollups read for them)', async () => {
    const groups = ['key', 'model', 'tag', 'end_user', 'day'];
    const report = () => Promise.all(groups.flatMap((g) => [adminSpend(`group_by=${g}&${range}`), adminSpend(`group_by=${g}&${range}&project_id=${a.projectId}`)]));
    const before = (await report()).map((res) => res.body.data);
    // Seven days per pass: six passes reach past the range's end (March 1 to April 1).
    for (let pass = 0; pass < 6; pass++) await janitorOf(server.assembly).runOnce();
    const state = await server.core.database.db.selectFrom('usage_rollup_state').select('rolled_until').executeTakeFirstOrThrow();
    expect(Number(state.rolled_until)).toBeGreaterThanOrEqual(MARCH + 31 * DAY);
    const rolled = await server.core.database.db.selectFrom('usage_rollups').select(['label', 'requests']).where('dimension', '=', 'tag').where('project_id', '=', a.projectId).where('label', '=', 'team-a').orderBy('day').execute();
    expect(rolled.map((r) => Number(r.requests))).toEqual([2, 1]);
    const after = (await report()).map((res) => res.body.data);
    expect(after).toEqual(before);
  });

  it('without project_id, sums every project', async () => {
    const res = await adminSpend(`group_by=tag&${range}`);
    const teamA = res.body.data.find((r: { group: string }) => r.group === 'team-a');
    expect(teamA).toEqual(row('team-a', 3, 31, 4, 2_107));
  });

  it('exports CSV and NDJSON, streamed as downloads', async () => {
    const csv = await fetch(`${server.baseUrl}/admin/v1/spend?group_by=end_user&${range}&project_id=${a.projectId}&format=csv`, { headers: admin });
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="sluice-spend-by-end_user-2026-03-01.csv"');
    expect(await csv.text()).toBe(
      [
        'group,requests,input_tokens,input_cached_tokens,input_cache_write_tokens,output_tokens,cost_micros,cost_usd',
        ',1,30,0,0,3,300,0.0003',
        'alice,2,50,0,0,5,4100,0.0041',
        'bob,1,20,0,0,2,2000,0.002',
        '',
      ].join('\n'),
    );
    const ndjson = await fetch(`${server.baseUrl}/admin/v1/spend?group_by=model&${range}&project_id=${a.projectId}&format=ndjson`, { headers: admin });
    expect(ndjson.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const lines = (await ndjson.text()).trimEnd().split('\n').map((line) => JSON.parse(line));
    expect(lines).toEqual([row('m-large', 1, 20, 2, 2_000), row('m-small', 3, 80, 8, 4_400)]);
  });

  it('refuses a bad group_by, time, range or format with a 400 naming it, and an unknown project with a 404', async () => {
    const cases: Array<[string, string, string]> = [
      ['group_by=project', 'group_by must be one of key, model, tag, end_user, day', 'group_by'],
      ['group_by=key&since=yesterday', 'since must be Unix seconds or an ISO 8601 date (2026-01-31) or date-time', 'since'],
      ['group_by=key&since=2026-03-02&until=2026-03-01', 'since must be before until', 'since'],
      ['group_by=key&since=2024-01-01&until=2026-01-01', 'The range may span at most 366 days', 'since'],
      ['group_by=key&format=xml', 'format must be one of json, csv, ndjson', 'format'],
    ];
    for (const [query, message, param] of cases) {
      const res = await adminSpend(query);
      expect(res.status, query).toBe(400);
      expect(res.body.error, query).toMatchObject({ message, param });
    }
    const missing = await adminSpend('group_by=key&project_id=proj_missing');
    expect(missing.status).toBe(404);
  });
});

describe('GET /v1/spend', () => {
  it("shows the caller's project only", async () => {
    const res = await call(server.baseUrl, 'GET', `/v1/spend?group_by=tag&${range}`, { key: b.key });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([row('team-a', 1, 1, 1, 7)]);
    const own = await call(server.baseUrl, 'GET', `/v1/spend?group_by=end_user&${range}&format=ndjson`, { key: a.key });
    expect(own.body).not.toContain('zed');
  });
});

describe('sluice spend', { timeout: 120_000 }, () => {
  const sluice = (...args: string[]) => runSluice(['spend', ...args], { cwd: server.dataDir, env: server.dataEnv });

  it('prints the report as JSON, or writes CSV', () => {
    const json = sluice('--group-by', 'tag', '--since', '2026-03-01', '--until', '2026-04-01', '--project', a.projectId);
    expect(json.stderr).toBe('');
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      object: 'spend_report',
      group_by: 'tag',
      since: MARCH / 1000,
      until: (MARCH + 31 * DAY) / 1000,
      data: [row('prod', 2, 40, 4, 400), row('team-a', 2, 30, 3, 2_100)],
    });
    const csv = sluice('--group-by', 'day', '--since', '2026-03-01', '--until', '2026-04-01', '--project', a.projectId, '--format', 'csv');
    expect(csv.status).toBe(0);
    expect(csv.stdout.split('\n')).toEqual([
      'group,requests,input_tokens,input_cached_tokens,input_cache_write_tokens,output_tokens,cost_micros,cost_usd',
      '2026-03-01,2,30,0,0,3,2100,0.0021',
      '2026-03-02,1,30,0,0,3,300,0.0003',
      '2026-03-03,1,40,0,0,4,4000,0.004',
      '',
    ]);
  });

  it('refuses a bad group with the message the API gives', () => {
    const bad = sluice('--group-by', 'colour');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toBe('error: group_by must be one of key, model, tag, end_user, day\n');
  });
});
