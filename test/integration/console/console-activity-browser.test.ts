/**
 * The console's operator activity pages in headless Chromium against a real Sluice with
 * the gateway (a fake intermediary on loopback) and the storefront (a fake x402
 * facilitator) configured: a signed gateway call's settlement shows with its delivery
 * state, a dead one is replayed after a confirmation, a real x402 purchase (an agent's,
 * and an anonymous one with its receipt) shows on the Storefront page, a model whose
 * upstream is down shows "unreachable", and a developer sees none of it. axe-core at
 * 1280 and 390 px; screenshots go to test-output/console/. Skipped where no Chromium exists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { refusedPort } from '../../helpers/refused-port.js';
import { startFakeIntermediary, type FakeIntermediary } from '../../helpers/fake-intermediary.js';
import { startFakeFacilitator, type FakeFacilitator } from '../../helpers/fake-facilitator.js';
import { CHROMIUM_PATH, expectAccessible, launchChromium, openPage, signInToConsole } from '../../helpers/browser.js';
import { gatewayEnvVars, signedCall } from '../gateway/setup.js';
import { assertion, JWT_BEARER, newAgent, PAY_TO, type Agent } from '../storefront/support.js';
import { receiptHash } from '../../../src/domain/storefront/receipts.js';

if (!CHROMIUM_PATH) console.warn('console activity browser tests skipped: no Chromium binary (install Debian\'s chromium, or set CHROMIUM_PATH)');

async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 300; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('condition not met');
}

const CHAT = '/gateway/v1/chat/completions';
const chatBody = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'Hello there' }] };

describe.skipIf(!CHROMIUM_PATH)('the operator activity pages in Chromium', () => {
  let upstream: FakeUpstream;
  let intermediary: FakeIntermediary;
  let facilitator: FakeFacilitator;
  let server: TestServer;
  let browser: Browser;
  let agent: Agent;
  let receipt = '';

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    intermediary = await startFakeIntermediary();
    facilitator = await startFakeFacilitator();
    agent = await newAgent('agt_console');
    const yaml = [
      'models:',
      `  gpt-oss-120b: { backend: openai, base_url: "${upstream.baseUrl}", price: { input_per_million_usd: 1, output_per_million_usd: 2 } }`,
      `  down-model: { base_url: "http://127.0.0.1:${await refusedPort()}/v1" }`,
      'outbox:\n  max_attempts: 1',
      'storefront:',
      '  plans:\n    - { id: credits, kind: credits, description: Credits, minimum_usd: "0.01" }',
      '  x402: { timeout_ms: 2000 }',
      '',
    ].join('\n');
    server = await startTestServer({
      yaml,
      startWorkers: true,
      env: {
        ...gatewayEnvVars(intermediary.baseUrl),
        STOREFRONT_FACILITATOR_URL: facilitator.url,
        STOREFRONT_PAY_TO: PAY_TO,
        STOREFRONT_AGENT_KEYS: JSON.stringify({ [agent.id]: agent.jwk }),
      },
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await facilitator?.close();
    await intermediary?.close();
    await upstream?.close();
  });

  const newPage = (width = 1280) => openPage(browser, { width });
  const signIn = (page: Page, credential: string) => signInToConsole(page, server.baseUrl, credential);



  const adminGet = (path: string) => call(server.baseUrl, 'GET', path, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

  it('an operator with nothing yet sees how to turn each feature on', async () => {
    const { page } = await newPage();
    await signIn(page, ADMIN_TOKEN);
    await page.getByRole('link', { name: 'Gateway' }).click();
    await page.getByText('No settlements yet').waitFor();
    expect(await page.locator('.empty').textContent()).toContain('GATEWAY_SIGNING_SECRETS');
    await page.getByRole('link', { name: 'Storefront' }).click();
    await page.getByText('No purchases yet').waitFor();
    expect(await page.locator('.empty').first().textContent()).toContain('storefront.plans');
    await expectAccessible(page, 'operator-storefront-empty');
  });

  it('shows a signed gateway call\'s settlement with its state, and replays a dead one after confirmation', async () => {
    intermediary.refuseReports(422);
    expect((await signedCall(server.baseUrl, CHAT, chatBody, { requestId: 'gwreq_console_dead', agentId: 'agt_gw' })).status).toBe(200);
    await until(async () => ((await adminGet('/admin/v1/outbox?state=dead')).body.data.length === 1 ? true : undefined));
    intermediary.refuseReports(null);
    expect((await signedCall(server.baseUrl, CHAT, chatBody, { requestId: 'gwreq_console_ok', agentId: 'agt_gw' })).status).toBe(200);
    await intermediary.waitForAccepted(2);
    await until(async () => ((await adminGet('/admin/v1/outbox?state=delivered')).body.data.length === 1 ? true : undefined));

    const { page, cspErrors } = await newPage();
    await signIn(page, ADMIN_TOKEN);
    await page.goto(`${server.baseUrl}/console/#/gateway`);
    const rows = page.getByTestId('settlement');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(2);
    const ok = rows.filter({ hasText: 'gwreq_console_ok' });
    expect(await ok.locator('.chip').textContent()).toBe('delivered');
    expect(await ok.textContent()).toContain('agt_gw · gpt-oss-120b · input_tokens 11, output_tokens 7');
    const dead = rows.filter({ hasText: 'gwreq_console_dead' });
    expect(await dead.locator('.chip').textContent()).toBe('dead');
    expect(await dead.textContent()).toContain('usage report not accepted: status 422');
    await expectAccessible(page, 'operator-gateway');

    await page.getByLabel('Delivery state').selectOption('dead');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('[data-testid="settlement"]').length === 1);
    await page.getByRole('button', { name: 'Replay gwreq_console_dead' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replay this settlement?' });
    await dialog.waitFor();
    await expectAccessible(page, 'operator-gateway-replay-dialog');
    await dialog.getByRole('button', { name: 'Replay settlement' }).click();
    await page.getByText('No settlements match these filters').waitFor();
    await intermediary.waitForAccepted(4);
    await page.getByLabel('Delivery state').selectOption('delivered');
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('[data-testid="settlement"]').length === 2);
    expect(await page.getByTestId('settlement').filter({ hasText: 'gwreq_console_dead' }).locator('.chip').textContent()).toBe('delivered');
    expect(cspErrors).toEqual([]);
  }, 60_000);

  /** A paying fetch: @x402/fetch on a fresh local account, settled by the fake facilitator. */
  function payingFetch(): typeof fetch {
    const client = new x402Client().register('eip155:*', new ExactEvmScheme(privateKeyToAccount(generatePrivateKey())));
    return wrapFetchWithPayment(fetch, client);
  }

  async function buy(amountUsd: string, headers: Record<string, string> = {}): Promise<any> {
    const response = await payingFetch()(`${server.baseUrl}/storefront/plans/credits/purchase`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ amountUsd }),
    });
    expect(response.status).toBe(200);
    return response.json();
  }

  it('shows x402 purchases, the agent\'s Credits and the receipt by its hash on the Storefront page', async () => {
    const tokenUrl = `${server.baseUrl}/storefront/oauth2/token`;
    const form = new URLSearchParams({ grant_type: JWT_BEARER, assertion: await assertion(agent, tokenUrl) });
    const token = ((await (await fetch(tokenUrl, { method: 'POST', body: form })).json()) as { access_token: string }).access_token;
    expect(await buy('0.75', { authorization: `Bearer ${token}` })).toEqual({ access: { remainingCreditUsd: '0.75' } });
    receipt = (await buy('0.30')).receipt;
    expect(receipt).toMatch(/^rcpt_/);

    const { page, cspErrors } = await newPage();
    await signIn(page, ADMIN_TOKEN);
    await page.goto(`${server.baseUrl}/console/#/storefront`);
    const purchases = page.getByTestId('purchase');
    await purchases.first().waitFor();
    expect(await purchases.count()).toBe(2);
    const agentRow = purchases.filter({ hasText: 'agt_console' });
    expect(await agentRow.textContent()).toContain('$0.75');
    expect(await agentRow.textContent()).toContain('x402');
    expect(await agentRow.locator('code').nth(1).textContent()).toMatch(/^x402:eip155:84532:/);
    const hash = receiptHash(receipt);
    expect(await purchases.filter({ hasText: `receipt ${hash.slice(0, 12)}` }).textContent()).toContain('$0.30');
    const agentAccount = page.getByTestId('agent-account');
    expect(await agentAccount.textContent()).toContain('agt_console');
    expect(await agentAccount.locator('.chip').textContent()).toBe('active');
    expect(await page.getByTestId('receipt-account').locator('code').textContent()).toBe(`${hash.slice(0, 16)}…`);
    expect(await page.content()).not.toContain(receipt);
    await page.getByLabel('Rail').selectOption('card');
    await page.getByText('No purchases on this rail').waitFor();
    await page.getByLabel('Rail').selectOption('');
    await purchases.first().waitFor();
    await expectAccessible(page, 'operator-storefront');
    expect(cspErrors).toEqual([]);
  }, 60_000);

  it('shows a model whose upstream is down as unreachable since when, and a live one as reachable', async () => {
    const project = await server.newTenant({ name: 'models' });
    const { page } = await newPage();
    await signIn(page, ADMIN_TOKEN);
    await page.getByLabel('Project', { exact: true }).selectOption(project.projectId);
    await page.goto(`${server.baseUrl}/console/#/models`);
    const down = page.getByRole('row', { name: /down-model/ });
    await down.waitFor();
    expect(await down.getByTestId('reachability').textContent()).toMatch(/^unreachablesince \d{4}-\d\d-\d\d \d\d:\d\d UTC \(ECONNREFUSED\)$/);
    expect(await page.getByRole('row', { name: /gpt-oss-120b/ }).getByTestId('reachability').textContent()).toBe('reachable');
    await expectAccessible(page, 'operator-models-reachability');
  });

  it('a developer sees neither page and is refused by the admin API', async () => {
    const { key } = await server.newTenant({ name: 'dev' });
    const { page } = await newPage();
    await signIn(page, key);
    const nav = page.getByRole('navigation', { name: 'Console pages' });
    await nav.getByRole('link', { name: 'Models' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Gateway' }).count()).toBe(0);
    expect(await nav.getByRole('link', { name: 'Storefront' }).count()).toBe(0);
    await page.goto(`${server.baseUrl}/console/#/gateway`);
    await page.getByRole('heading', { name: 'Your project' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Gateway' }).count()).toBe(0);
    const answers = await page.evaluate(async () =>
      Promise.all(['/console/api/admin/outbox', '/console/api/admin/storefront/purchases', '/console/api/admin/storefront/accounts'].map(async (p) => {
        const res = await fetch(p);
        return { status: res.status, code: ((await res.json()) as any).error.code };
      })),
    );
    expect(answers).toEqual(Array(3).fill({ status: 403, code: 'operator_required' }));
  });

  it('the Gateway, Storefront and Models pages are accessible at 1280 and 390 px', async () => {
    const project = (await adminGet('/admin/v1/projects')).body.data[0].id as string;
    for (const width of [1280, 390]) {
      const { page, cspErrors } = await newPage(width);
      await signIn(page, ADMIN_TOKEN);
      await page.getByLabel('Project', { exact: true }).selectOption(project);
      for (const name of ['gateway', 'storefront', 'models']) {
        await page.goto(`${server.baseUrl}/console/#/${name}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await page.waitForLoadState('networkidle');
        await expectAccessible(page, `operator-${name}-${width}`);
        const overflow = await page.evaluate(() => {
          const root = (globalThis as any).document.documentElement;
          return root.scrollWidth - root.clientWidth;
        });
        expect(overflow, `${name} at ${width} px scrolls sideways`).toBeLessThanOrEqual(0);
      }
      expect(cspErrors).toEqual([]);
    }
  }, 60_000);
});
