/**
 * The console's request log pages in headless Chromium against a real Sluice: a developer
 * finds the project's calls on the Requests page and filters them, opens a call that was
 * retried and fell back (its attempts on a timeline, the fallback, the cost held against
 * the cost settled, the request and answer pretty-printed), follows it to its session (the
 * calls in order, tokens and cost summed as the API sums them), reaches a call from the
 * Usage page, and meets "not found" for another project's call and session. axe-core at
 * 1280 and 390 px; screenshots go to test-output/console/. Skipped where no Chromium exists;
 * the console API's isolation (another project's call, body and session are 404 to a
 * developer's and to an operator's session) runs everywhere.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { fail, startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { CHROMIUM_PATH, expectAccessible, launchChromium, openPage, signInToConsole } from '../../helpers/browser.js';
import { FAST_FLUSH_YAML, flushLog, setBodies } from '../request-log/setup.js';
import { usd } from '../../../console/src/lib/format.js';

if (!CHROMIUM_PATH) console.warn('console request log browser tests skipped: no Chromium binary (install Debian\'s chromium, or set CHROMIUM_PATH)');

const SESSION = 'sess-console-1';
const OTHER_SESSION = 'sess-console-other';
const PROMPT = 'What is the capital of Norway?';

let failing: FakeUpstream;
let healthy: FakeUpstream;
let server: TestServer;
let key = '';
let projectId = '';
let otherProjectId = '';
/** The retried, fallen-back call, two plain calls after it in the same session, and another project's call (in its own session). */
let storyId = '';
let plainIds: string[] = [];
let otherId = '';

beforeAll(async () => {
  [failing, healthy] = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  failing.setDefault('/chat/completions', fail(503));
  healthy.chat({ content: 'Oslo.', usage: { prompt_tokens: 40, completion_tokens: 9, cached_tokens: 32 } });
  const yaml = `${FAST_FLUSH_YAML}routing:
  retries: 1
models:
  primary:
    kind: chat
    price: { input_per_million_usd: 1, output_per_million_usd: 2 }
    deployments:
      - { id: p-1, base_url: ${failing.baseUrl}, upstream_model: p1 }
      - { id: p-2, base_url: ${failing.baseUrl}, upstream_model: p2 }
    fallbacks: [backup]
  backup:
    kind: chat
    price: { input_per_million_usd: 3, output_per_million_usd: 6 }
    deployments:
      - { id: b-1, base_url: ${healthy.baseUrl}, upstream_model: b1 }
  plain-llm:
    kind: chat
    price: { input_per_million_usd: 3, output_per_million_usd: 6 }
    base_url: ${healthy.baseUrl}
console:
  sign_in_attempts_per_minute: 60
`;
  server = await startTestServer({ yaml });
  const tenant = await server.newTenant({ balanceUsd: 10 });
  ({ key, projectId } = tenant);
  await setBodies(server, projectId, 'redacted');
  const chat = (withKey: string, model: string, session: string) =>
    call(server.baseUrl, 'POST', '/v1/chat/completions', { key: withKey, body: { model, messages: [{ role: 'user', content: PROMPT }], prompt_cache_key: session } });
  const idOf = async (res: Awaited<ReturnType<typeof call>>) => {
    expect(res.status).toBe(200);
    return res.headers.get('x-request-id')!;
  };
  storyId = await idOf(await chat(key, 'primary', SESSION));
  plainIds = [await idOf(await chat(key, 'plain-llm', SESSION)), await idOf(await chat(key, 'plain-llm', SESSION))];
  const other = await server.newTenant({ balanceUsd: 1 });
  otherProjectId = other.projectId;
  await setBodies(server, otherProjectId, 'full');
  otherId = await idOf(await chat(other.key, 'plain-llm', OTHER_SESSION));
  await flushLog(server);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await Promise.all([failing?.close(), healthy?.close()]);
});

describe('the request log through the console API', () => {
  async function consoleSession(credential: string): Promise<{ cookie: string }> {
    const res = await call(server.baseUrl, 'POST', '/console/api/session', { body: { credential } });
    expect(res.status).toBe(200);
    return { cookie: res.headers.get('set-cookie')!.split(';')[0]! };
  }
  const get = (headers: Record<string, string>, path: string) => call(server.baseUrl, 'GET', `/console/api/v1${path}`, { headers });

  it('a developer\'s session reads its project\'s log; another project\'s call, body and session are 404 in the OpenAI envelope', async () => {
    const dev = await consoleSession(key);
    expect((await get(dev, `/requests/${storyId}`)).body).toMatchObject({ id: storyId, project_id: projectId, fallback: true });
    expect((await get(dev, `/requests/${storyId}/body`)).body).toMatchObject({ object: 'request_body', id: storyId, mode: 'redacted' });
    const notFound = (code: string, param: string) => ({ error: { type: 'invalid_request_error', code, param, message: expect.any(String) } });
    for (const path of [`/requests/${otherId}`, `/requests/${otherId}/body`]) {
      const res = await get(dev, path);
      expect([path, res.status, res.body]).toEqual([path, 404, notFound('request_not_found', 'request_id')]);
    }
    const session = await get(dev, `/requests/sessions/${OTHER_SESSION}`);
    expect([session.status, session.body.error.code]).toEqual([404, 'session_not_found']);
    const list = await get(dev, '/requests');
    expect(list.body.data.map((r: { id: string }) => r.id)).toEqual([plainIds[1], plainIds[0], storyId]);
  });

  it('an operator\'s session reads the chosen project\'s log only', async () => {
    const op = await consoleSession(ADMIN_TOKEN);
    expect((await get({ ...op, 'x-project-id': otherProjectId }, `/requests/${otherId}/body`)).body).toMatchObject({ id: otherId, mode: 'full' });
    expect((await get({ ...op, 'x-project-id': projectId }, `/requests/${otherId}`)).status).toBe(404);
    expect((await get({ ...op, 'x-project-id': projectId }, `/requests/sessions/${OTHER_SESSION}`)).status).toBe(404);
  });
});

describe.skipIf(!CHROMIUM_PATH)('the request log pages in Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  const api = async (path: string) => {
    const res = await call(server.baseUrl, 'GET', path, { key });
    expect(res.status).toBe(200);
    return res.body;
  };
  async function developerPage(width = 1280): Promise<{ page: Page; cspErrors: string[] }> {
    const { page, cspErrors } = await openPage(browser, { width });
    await signInToConsole(page, server.baseUrl, key);
    return { page, cspErrors };
  }

  it('lists the project\'s calls newest first, filters them by model and status, and clears the filters', async () => {
    const { page, cspErrors } = await developerPage();
    await page.getByRole('link', { name: 'Requests' }).click();
    const rows = page.getByTestId('request-row');
    await rows.first().waitFor();
    expect(await rows.locator('td:first-child').allTextContents()).toEqual([plainIds[1], plainIds[0], storyId]);
    expect(await rows.first().textContent()).not.toContain(otherId);
    expect(await rows.last().locator('td').nth(2).textContent()).toBe('primary → backup');
    await expectAccessible(page, 'requests-list');

    await page.getByLabel('Model').fill('backup');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('[data-testid="request-row"]').length === 1);
    expect(await rows.locator('td:first-child').allTextContents()).toEqual([storyId]);

    await page.getByLabel('Model').fill('');
    await page.getByLabel('Status').selectOption('error');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('No requests match').waitFor();

    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('[data-testid="request-row"]').length === 3);
    expect(cspErrors).toEqual([]);
  });

  it('a retried, fallen-back call: the attempts on a timeline, the fallback, the hold against the settlement, the bodies pretty-printed', async () => {
    const detail = await api(`/v1/requests/${storyId}`);
    expect(detail.attempts.map((a: any) => a.deployment).slice(0, 2).sort()).toEqual(['p-1', 'p-2']);
    const { page, cspErrors } = await developerPage();
    await page.goto(`${server.baseUrl}/console/#/requests`);
    await page.getByRole('link', { name: storyId }).click();
    await page.getByRole('heading', { name: 'Attempts' }).waitFor();

    const facts = page.getByTestId('request-facts');
    expect(await facts.textContent()).toContain('Model asked forprimary');
    expect(await facts.textContent()).toContain('Served bybackup (fallback) on b-1');
    expect(await facts.textContent()).toContain('Tokens40 in (32 cached), 9 out');

    const attempts = page.getByTestId('attempt');
    expect(await attempts.count()).toBe(3);
    const labels = await attempts.locator('.timeline-label').allTextContents();
    expect(labels.slice(0, 2).map((l) => l.split(':')[0]).sort()).toEqual(['p-1', 'p-2']);
    for (const label of labels.slice(0, 2)) expect(label).toMatch(/: 503 /);
    expect(labels[2]).toMatch(/^b-1: 200, from /);
    expect(await attempts.locator('.timeline-failed').count()).toBe(2);
    expect(await attempts.locator('.timeline-ok').count()).toBe(1);

    const cost = page.getByTestId('request-cost');
    expect(await cost.locator('dd').allTextContents()).toEqual([
      usd(detail.hold_usd),
      usd(detail.settled_usd),
      usd(Math.round((detail.hold_usd - detail.settled_usd) * 1e6) / 1e6),
      usd(detail.cost_usd),
    ]);

    const requestBody = await page.getByTestId('request-body').textContent();
    expect(requestBody).toContain(`"content": "${PROMPT}"`);
    expect(requestBody).toContain('\n  "model": "primary"');
    expect(await page.getByTestId('answer-body').textContent()).toContain('Oslo.');
    expect(await page.content()).not.toContain(key);
    await expectAccessible(page, 'request-detail');
    expect(cspErrors).toEqual([]);
  });

  it('the call\'s session: its calls oldest first, tokens and cost summed as the API sums them', async () => {
    const session = await api(`/v1/requests/sessions/${SESSION}`);
    expect(session.requests).toBe(3);
    const { page } = await developerPage();
    await page.goto(`${server.baseUrl}/console/#/requests/${storyId}`);
    await page.getByRole('link', { name: SESSION }).click();
    await page.getByRole('heading', { name: `Session ${SESSION}` }).waitFor();
    expect(await page.getByTestId('session-totals').locator('dd').allTextContents()).toEqual([
      '3',
      String(session.usage.input_tokens),
      String(session.usage.cached_input_tokens),
      String(session.usage.output_tokens),
      usd(session.cost_usd),
    ]);
    expect(await page.getByTestId('request-row').locator('td:first-child').allTextContents()).toEqual([storyId, ...plainIds]);
    await expectAccessible(page, 'request-session');
  });

  it('the Usage page lists the range\'s last calls, each linked to its detail', async () => {
    const { page } = await developerPage();
    await page.goto(`${server.baseUrl}/console/#/usage`);
    await page.getByRole('heading', { name: 'Recent calls' }).waitFor();
    await page.getByRole('link', { name: plainIds[1]! }).click();
    await page.getByRole('heading', { name: `Request ${plainIds[1]}` }).waitFor();
    await page.getByText('Served byplain-llm on').waitFor();
  });

  it('another project\'s call and session are not found, in the API\'s words', async () => {
    const { page } = await developerPage();
    await page.goto(`${server.baseUrl}/console/#/requests/${otherId}`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain(`No request found with id '${otherId}'`);
    await page.goto(`${server.baseUrl}/console/#/sessions/${OTHER_SESSION}`);
    await page.getByRole('alert').getByText(OTHER_SESSION).waitFor();
  });

  it('at phone width the pages stay accessible and never scroll sideways (wide tables and bodies scroll in their own boxes)', async () => {
    const { page } = await developerPage(390);
    const sideways = () => page.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    await page.goto(`${server.baseUrl}/console/#/requests`);
    await page.getByTestId('request-row').first().waitFor();
    await expectAccessible(page, 'requests-list-phone');
    expect(await sideways()).toBeLessThanOrEqual(0);
    await page.goto(`${server.baseUrl}/console/#/requests/${storyId}`);
    await page.getByTestId('answer-body').waitFor();
    await expectAccessible(page, 'request-detail-phone');
    expect(await sideways()).toBeLessThanOrEqual(0);
    await page.goto(`${server.baseUrl}/console/#/sessions/${SESSION}`);
    await page.getByTestId('session-totals').waitFor();
    await expectAccessible(page, 'request-session-phone');
    expect(await sideways()).toBeLessThanOrEqual(0);
  });
});
