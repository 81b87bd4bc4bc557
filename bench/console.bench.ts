/**
 * `npm run bench -- console`: the console's first-load JavaScript (the script and module
 * preloads index.html names, as served compressed: brotli and gzip), and the usage page
 * over 100,000 usage records in headless Chromium: from navigation to the chart drawn
 * with the range's total shown (the browser fetches one server-side aggregation, never the
 * records). Also the aggregation request alone, per project and across every project.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import type { BenchRow } from './run.js';
import { median, timed } from './measure.js';
import { ADMIN_TOKEN, startTestServer } from '../test/helpers/harness.js';
import { usageRecord } from '../test/helpers/usage-records.js';
import { CHROMIUM_PATH, launchChromium } from '../test/helpers/browser.js';
import { consoleBuildDir } from '../src/http/routes/console/static-assets.js';

const RECORDS = 100_000;
const RUNS = 5;
const DAY = 86_400_000;

function firstLoadJs(dir: string): { raw: number; gzip: number; brotli: number; files: number } {
  const html = readFileSync(path.join(dir, 'index.html'), 'utf8');
  const scripts = [...html.matchAll(/(?:src|href)="\/console\/(assets\/[^"]+\.js)"/g)].map((m) => path.join(dir, m[1]!));
  const size = (file: string) => statSync(file).size;
  return {
    raw: scripts.reduce((n, f) => n + size(f), 0),
    gzip: scripts.reduce((n, f) => n + size(`${f}.gz`), 0),
    brotli: scripts.reduce((n, f) => n + size(`${f}.br`), 0),
    files: scripts.length,
  };
}

export default async function consoleBench(): Promise<BenchRow[]> {
  const dir = consoleBuildDir();
  if (!existsSync(path.join(dir, 'index.html'))) throw new Error('the console is not built: run `npm run build:console` first');
  const js = firstLoadJs(dir);
  const rows: BenchRow[] = [
    { name: 'first-load JS, brotli', value: Math.round(js.brotli / 102.4) / 10, unit: 'KB', note: `${js.files} file(s), as served to browsers that accept br` },
    { name: 'first-load JS, gzip', value: Math.round(js.gzip / 102.4) / 10, unit: 'KB', note: 'target ≤ 250 KB compressed' },
    { name: 'first-load JS, uncompressed', value: Math.round(js.raw / 102.4) / 10, unit: 'KB' },
  ];

  const server = await startTestServer();
  try {
    const tenant = await server.newTenant({ balanceUsd: 1000 });
    const other = await server.newTenant();
    const now = Date.now();
    const models = ['llama-3.1-8b-instruct-fast', 'gpt-oss-120b', 'all-minilm-l6-v2', 'zlm-iab-content'];
    for (let done = 0; done < RECORDS; done += 1000) {
      const batch = Array.from({ length: 1000 }, (_, i) => {
        const n = done + i;
        return usageRecord(n % 10 === 0 ? other.projectId : tenant.projectId, {
          keyId: n % 3 === 0 ? null : tenant.keyId,
          model: models[n % models.length]!,
          // Within the last 5 days: inside the page's default range (the last 7 UTC days).
          createdAtMs: now - Math.floor((n / RECORDS) * 5 * DAY),
          inputTokens: 50 + (n % 100),
          outputTokens: n % 40,
          costMicros: 3,
        });
      });
      await server.core.repositories.usage.recordAndDebitMany(batch);
    }
    const start = Math.floor((now - 7 * DAY) / 1000);
    const end = Math.floor(now / 1000) + 1;
    const api = (pathName: string, headers: Record<string, string>) => async () => {
      const res = await fetch(`${server.baseUrl}${pathName}`, { headers });
      if (!res.ok) throw new Error(`${pathName}: ${res.status}`);
      await res.arrayBuffer();
    };
    const perProject = api(`/v1/usage?start_time=${start}&end_time=${end}&bucket_width=1h&group_by=model`, { 'x-api-key': tenant.key });
    const everyProject = api(`/admin/v1/usage?start_time=${start}&end_time=${end}&bucket_width=1h&group_by=project`, { authorization: `Bearer ${ADMIN_TOKEN}` });
    await perProject();
    rows.push({ name: 'GET /v1/usage, 7 days hourly by model, one project (90,000 of 100,000 records)', value: median(await repeat(perProject)), unit: 'ms', note: `median of ${RUNS}` });
    rows.push({ name: 'GET /admin/v1/usage, 7 days hourly by project, 100,000 records', value: median(await repeat(everyProject)), unit: 'ms', note: `median of ${RUNS}` });

    if (!CHROMIUM_PATH) {
      console.warn('no Chromium binary: the usage page render is not measured');
      return rows;
    }
    rows.push(...(await renderTimes(server.baseUrl, tenant.key)));
  } finally {
    await server.close();
  }
  return rows;
}

async function repeat(fn: () => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) times.push(await timed(fn));
  return times;
}

/** Navigation to the usage page → chart canvas drawn and the total showing every record of the range. */
async function renderTimes(baseUrl: string, key: string): Promise<BenchRow[]> {
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${baseUrl}/console/`);
    await page.getByLabel('Admin token or API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    const cold: number[] = [];
    const warm: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      // Cold: a full page load (HTML, script, session, aggregation, chart); warm: switching to the page in the app.
      await page.goto('about:blank');
      cold.push(await timed(async () => {
        await page.goto(`${baseUrl}/console/#/usage`);
        await waitForChart(page);
      }));
      await page.goto(`${baseUrl}/console/#/`);
      await page.getByRole('heading', { name: 'Your project' }).waitFor();
      warm.push(await timed(async () => {
        await page.evaluate(() => ((globalThis as any).location.hash = '#/usage'));
        await waitForChart(page);
      }));
    }
    return [
      { name: 'usage page, full load to chart drawn (90,000 records in range)', value: median(cold), unit: 'ms', note: `median of ${RUNS}; target ≤ 1000 ms` },
      { name: 'usage page, in-app navigation to chart drawn', value: median(warm), unit: 'ms', note: `median of ${RUNS}` },
    ];
  } finally {
    await browser.close();
  }
}

async function waitForChart(page: Page): Promise<void> {
  await page.locator('figure.chart canvas').first().waitFor();
  await page.getByTestId('total-requests').filter({ hasText: '90,000' }).waitFor();
}
