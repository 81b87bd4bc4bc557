/**
 * The console's "Connect an agent" page in headless Chromium against a real Sluice with a
 * fake upstream: the `mcp.json` snippet names this server's `/mcp` URL and the key header,
 * the tools table is the endpoint's own `tools/list` answer (models and prices), an MCP
 * client configured from the snippet lists the same tools, and axe-core finds nothing
 * serious at 1280 and 390 px. Skipped where no Chromium exists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { CHROMIUM_PATH, expectAccessible, launchChromium, openPage, signInToConsole } from '../../helpers/browser.js';

if (!CHROMIUM_PATH) console.warn('console agents browser tests skipped: no Chromium binary (install Debian\'s chromium, or set CHROMIUM_PATH)');

describe.skipIf(!CHROMIUM_PATH)('the Connect an agent page in Chromium', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  let browser: Browser;
  let key: string;

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    const yaml = `models:\n  gpt-oss-120b: { backend: openai, base_url: "${upstream.baseUrl}", price: { input_per_million_usd: 1, output_per_million_usd: 2 } }\n`;
    server = await startTestServer({ yaml });
    ({ key } = await server.newTenant({ balanceUsd: 5 }));
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await upstream?.close();
  });

  it.each([1280, 390])('shows the mcp.json snippet and the tools the endpoint lists, accessibly (%i px)', async (width) => {
    const { context, page, cspErrors } = await openPage(browser, { width });
    await signInToConsole(page, server.baseUrl, key);
    await page.getByRole('link', { name: 'Connect an agent' }).click();
    await page.getByRole('heading', { name: 'Connect an agent' }).waitFor();

    const snippet = JSON.parse(await page.getByTestId('mcp-json').innerText());
    expect(snippet).toEqual({ mcpServers: { sluice: { url: `${server.baseUrl}/mcp`, headers: { Authorization: 'Bearer <your API key>' } } } });

    const table = page.getByRole('region', { name: 'MCP tools' });
    await table.getByRole('rowheader', { name: 'chat' }).waitFor();
    const rows = await table.locator('tbody tr').allInnerTexts();
    const chatRow = rows.find((r) => r.startsWith('chat'))!;
    expect(chatRow).toContain('gpt-oss-120b');
    expect(chatRow).toContain('per million tokens — gpt-oss-120b: $1 in / $2 out');
    expect(rows.find((r) => r.startsWith('batch_get'))).toContain('free');

    // The table is the endpoint's answer: an MCP client configured from the snippet lists the same tools.
    const client = new Client({ name: 'from-snippet', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const { url, headers } = snippet.mcpServers.sluice;
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { ...headers, Authorization: `Bearer ${key}` } } }));
    const { tools } = await client.listTools();
    await client.close();
    const shown = await table.locator('tbody th').allInnerTexts();
    expect(shown).toEqual(tools.map((t) => t.name));
    await page.getByText('The tools/list answer').click();
    const raw = JSON.parse(await page.getByTestId('mcp-tools-json').innerText());
    expect(raw.map((t: { name: string }) => t.name)).toEqual(shown);

    await expectAccessible(page, `agents-${width}`);
    expect(cspErrors).toEqual([]);
    await context.close();
  });
});
