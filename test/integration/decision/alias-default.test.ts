/**
 * `jev-latest` and the other System One aliases with DECISION_DEFAULT_MODEL unset: with
 * exactly one decision model ready they answer with it (a System One client needs no
 * configuration); with several ready, or none, the 404 names the setting that chooses.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { MANIFEST_FILE, defaultManifest } from '../../../src/inference/classifier/manifest.js';

const IAB = 'zlm-v1-iab-classify-edge';
const QUESTION = { q: { type: 'noul' } };
const dirs: string[] = [];
const servers: TestServer[] = [];

async function serverOn(modelsDir: string): Promise<{ server: TestServer; key: string }> {
  const server = await startTestServer({ env: { MODELS_DIR: modelsDir } });
  servers.push(server);
  const { key } = await server.newTenant({ balanceUsd: 5 });
  return { server, key };
}

const decide = (target: { server: TestServer; key: string }, model: string) =>
  call(target.server.baseUrl, 'POST', '/v1/systemone', { key: target.key, body: { model, state: 'x', questions: QUESTION } });

const aliasNotFound = (why: string) => ({
  error: {
    message: `The model \`jev-latest\` is an alias and ${why}: set DECISION_DEFAULT_MODEL (decision.default_model) to the model it answers with`,
    type: 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
  },
});

let oneReady: { server: TestServer; key: string };
let allReady: { server: TestServer; key: string };
let noneReady: { server: TestServer; key: string };

beforeAll(async () => {
  // Only bge-small is present, and only the IAB pack names it as its backbone; the other
  // packs want the default backbone (all-minilm-l6-v2), which is missing.
  const one = buildTestModels(['bge-small-en-v1.5']);
  mkdirSync(path.join(one, IAB));
  writeFileSync(path.join(one, IAB, MANIFEST_FILE), JSON.stringify(defaultManifest(IAB, 'bge-small-en-v1.5')));
  const all = buildTestModels(['all-minilm-l6-v2']);
  const none = buildTestModels([]);
  dirs.push(one, all, none);
  oneReady = await serverOn(one);
  allReady = await serverOn(all);
  noneReady = await serverOn(none);
}, 120_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('System One aliases without DECISION_DEFAULT_MODEL', () => {
  it('answer with the one decision model that is ready, which the answer names', async () => {
    for (const alias of ['jev-latest', 'jev', 'JEV-1.13.0']) {
      const res = await decide(oneReady, alias);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.model).toBe(IAB);
      expect(res.body.answers.q).toEqual({ type: 'noul', noul: 0.5 });
    }
    // The others are not ready: named directly they are 503, as before.
    const other = await decide(oneReady, 'zlm-v1-moderation-edge');
    expect([other.status, other.body.error.code]).toEqual([503, 'model_not_available']);
  });

  it('are 404 naming the setting when several are ready', async () => {
    const res = await decide(allReady, 'jev-latest');
    expect(res.status).toBe(404);
    expect(res.body).toEqual(
      aliasNotFound(
        '4 decision models are ready (zlm-v1-moderation-edge, zlm-v1-iab-classify-edge, zlm-v1-iab-domain-classifier, zlm-v2-iab-classify-edge-enriched)',
      ),
    );
    // A model named directly still answers.
    const direct = await decide(allReady, IAB);
    expect([direct.status, direct.body.model]).toEqual([200, IAB]);
  });

  it('are 404 naming the setting when none is ready', async () => {
    const res = await decide(noneReady, 'jev-latest');
    expect(res.status).toBe(404);
    expect(res.body).toEqual(aliasNotFound('no decision model is ready'));
  });
});
