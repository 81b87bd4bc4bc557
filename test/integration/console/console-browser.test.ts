/**
 * The console in headless Chromium against a real Sluice and a fake upstream: sign in both
 * ways, create a key and see it once, chat in the playground and see the usage move,
 * upload a file, run a batch to completion and download its output, cancel a batch, follow
 * a batch on a link slower than the page's poll, revoke a key, a developer kept to their
 * project, cookie flags and CSRF, and axe-core on every page at desktop and phone widths.
 * Screenshots go to test-output/console/.
 * Skipped, with a message, where no Chromium binary exists.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { CHROMIUM_PATH, expectAccessible, launchChromium, openPage, signInToConsole } from '../../helpers/browser.js';
import { MODEL, requestLines, upstreamYaml } from '../batches/support/batch-helpers.js';

if (!CHROMIUM_PATH) console.warn('console browser tests skipped: no Chromium binary (install Debian\'s chromium, or set CHROMIUM_PATH)');

describe.skipIf(!CHROMIUM_PATH)('the console in Chromium', () => {
  let upstream: FakeUpstream;
  let server: TestServer;
  let browser: Browser;
  /** Set by the first test: the project an operator creates, and the key shown once. */
  let projectId = '';
  let key = '';

  beforeAll(async () => {
    upstream = await startFakeUpstream();
    // The chat model of the batch tests, plus an embedding and a moderation model on the same fake upstream.
    const extraModels = ['all-minilm-l6-v2', 'zlm-v1-moderation-edge'].map((id) => `  ${id}:\n    backend: openai\n    base_url: ${upstream.baseUrl}\n`).join('');
    // The file signs in 11 times within a minute; the default allows 10 per address.
    const consoleYaml = 'console:\n  sign_in_attempts_per_minute: 60\n';
    const yaml = `${upstreamYaml(upstream.baseUrl, { per_batch_concurrency: 2, shard_lines: 5 }).replace('models:\n', `models:\n${extraModels}`)}${consoleYaml}`;
    server = await startTestServer({ yaml, startWorkers: true });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await upstream?.close();
  });

  const newPage = (width = 1280) => openPage(browser, { width, acceptDownloads: true });
  const signIn = (page: Page, credential: string) => signInToConsole(page, server.baseUrl, credential);



  it('an operator signs in with the admin token, creates a project and a key, and sees the key once', async () => {
    const { page, cspErrors } = await newPage();
    await signIn(page, ADMIN_TOKEN);
    await expectAccessible(page, 'operator-projects-empty');
    await page.getByLabel('New project name').fill('acme');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.locator('tr.selected', { hasText: 'acme' }).waitFor();
    projectId = (await page.locator('tr.selected code').first().textContent())!;
    expect(projectId).toMatch(/^[0-9a-f-]{36}$/);

    await page.getByText('No keys yet').waitFor();
    await page.getByLabel('New key name').fill('ci');
    await page.getByRole('button', { name: 'Create key' }).click();
    key = (await page.getByTestId('new-key').textContent())!;
    expect(key).toMatch(/^sk-sluice-/);
    await expect(page.getByText('it is shown only once')).toBeTruthy();
    await expectAccessible(page, 'operator-key-created');
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.reload();
    await page.getByRole('cell', { name: 'ci', exact: true }).waitFor();
    expect(await page.content()).not.toContain(key);
    expect((await call(server.baseUrl, 'GET', '/v1/models', { key })).status).toBe(200);
    expect(cspErrors).toEqual([]);
  });

  it('a developer signs in with the key, chats in the playground, and the usage moves', async () => {
    const { page, cspErrors } = await newPage();
    await signIn(page, key);
    await page.getByRole('heading', { name: 'Your project' }).waitFor();
    await expectAccessible(page, 'developer-project');

    await page.goto(`${server.baseUrl}/console/#/usage`);
    await page.getByText('No usage in this range').waitFor();
    expect(await page.getByTestId('total-requests').textContent()).toBe('0');

    await page.goto(`${server.baseUrl}/console/#/playground`);
    await page.getByLabel('Message', { exact: true }).fill('Say hello');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('usage').waitFor();
    expect(await page.getByTestId('answer').textContent()).toBe('Hello from the fake upstream.');
    const chat = upstream.requests.find((r) => r.path === '/chat/completions')!;
    expect(chat.body).toMatchObject({ stream: true, messages: [{ role: 'user', content: 'Say hello' }] });
    for (const language of ['openai-node', 'Python', 'curl']) {
      await page.getByRole('button', { name: language, exact: true }).click();
      expect(await page.locator('pre.code').textContent()).toContain('Say hello');
    }
    await expectAccessible(page, 'developer-playground');

    await page.goto(`${server.baseUrl}/console/#/usage`);
    await page.locator('figure.chart canvas').first().waitFor();
    expect(await page.getByTestId('total-requests').textContent()).toBe('1');
    await expectAccessible(page, 'developer-usage');

    // A tagged call by an end user: the page groups its chart and totals by tag and by end user.
    const tagged = { model: MODEL, messages: [{ role: 'user', content: 'Hi' }], user: 'alice' };
    expect((await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: tagged, headers: { 'x-sluice-tags': 'team-a,search' } })).status).toBe(200);
    await page.reload();
    await page.getByLabel('Group by').selectOption('tag');
    const totals = page.getByRole('table', { name: 'Totals by tag' });
    await totals.getByRole('cell', { name: 'team-a', exact: true }).waitFor();
    const tagRows = await totals.locator('tbody tr').evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent)));
    expect(tagRows.sort()).toEqual([
      ['search', '1'],
      ['team-a', '1'],
    ]);
    await page.locator('figure.chart canvas').first().waitFor();
    await page.getByLabel('Group by').selectOption('end_user');
    const byUser = page.getByRole('table', { name: 'Totals by end user' });
    await byUser.getByRole('cell', { name: 'alice', exact: true }).waitFor();
    await byUser.getByRole('cell', { name: 'no end user', exact: true }).waitFor();
    expect(await page.getByTestId('total-requests').textContent()).toBe('2');
    await expectAccessible(page, 'developer-usage-by-tag');
    expect(cspErrors).toEqual([]);
  });

  it('embeds two texts and moderates one in their playgrounds', async () => {
    const { page } = await newPage();
    await signIn(page, key);
    await page.goto(`${server.baseUrl}/console/#/playground`);
    await page.getByRole('button', { name: 'Embeddings', exact: true }).click();
    await page.getByLabel('First text').fill('a cat');
    await page.getByLabel('Second text').fill('a dog');
    await page.getByRole('button', { name: 'Embed both' }).click();
    expect(await page.getByTestId('similarity').textContent()).toMatch(/^Cosine similarity: -?\d\.\d{4}$/);
    const embedded = upstream.requests.find((r) => r.path === '/embeddings')!;
    expect(embedded.body.input).toEqual(['a cat', 'a dog']);
    await expectAccessible(page, 'developer-embeddings');

    await page.getByRole('button', { name: 'Moderation', exact: true }).click();
    await page.getByLabel('Text', { exact: true }).fill('hello there');
    await page.getByRole('button', { name: 'Moderate' }).click();
    await page.getByRole('heading', { name: /flagged/i }).waitFor();
    expect(await page.getByRole('progressbar').count()).toBeGreaterThan(3);
    expect(await page.locator('pre.code').textContent()).toContain('hello there');
    await expectAccessible(page, 'developer-moderation');
  });

  // Both batch tests wait on the batch runner and the page's 2 s poll: 90 s each, so the
  // chip's own 60 s wait ends first and says what the API saw (CI failed one at the 30 s default).
  it('uploads a file, creates a batch, watches it complete, and downloads the output', { timeout: 90_000 }, async () => {
    upstream.chat({ delayMs: 150 });
    const { page } = await newPage();
    await signIn(page, key);
    await page.goto(`${server.baseUrl}/console/#/files`);
    await page.getByText('No files here').waitFor();
    await page.getByLabel(/Drop a file here/).setInputFiles({ name: 'lines.jsonl', mimeType: 'application/jsonl', buffer: Buffer.from(requestLines(6)) });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.locator('td', { hasText: 'lines.jsonl' }).first().waitFor();
    await expectAccessible(page, 'developer-files');

    await page.goto(`${server.baseUrl}/console/#/batches`);
    const option = page.locator('#batch-file option', { hasText: 'lines.jsonl' });
    await option.waitFor({ state: 'attached' });
    await page.getByLabel('Input file').selectOption((await option.getAttribute('value'))!);
    await page.getByRole('button', { name: 'Create batch' }).click();
    await page.getByTestId('batch-card').first().waitFor();
    await expectAccessible(page, 'developer-batches');
    const card = page.getByTestId('batch-card').first().getByRole('link');
    const batchId = (await card.textContent())!.match(/batch_\w+/)![0];
    await card.click();
    await waitForStatusChip(page, batchId, 'completed');
    expect(await page.getByRole('progressbar', { name: 'Batch progress' }).getAttribute('aria-valuenow')).toBe('100');
    expect(await page.getByTestId('batch-counts').textContent()).toBe('6 completed, 0 failed of 6');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download output' }).click()]);
    const lines = (await readFile((await download.path())!, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
    expect(lines.map((l) => l.custom_id).sort()).toEqual(['req-1', 'req-2', 'req-3', 'req-4', 'req-5', 'req-6']);
    await expectAccessible(page, 'developer-batch-completed');
    upstream.reset();
  });

  it('cancels a running batch after confirmation', { timeout: 90_000 }, async () => {
    upstream.chat({ delayMs: 400 });
    const { page, batchId } = await batchAndSignedInPage(40);
    await page.goto(`${server.baseUrl}/console/#/batches/${batchId}`);
    await page.getByRole('button', { name: 'Cancel batch' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel this batch?' });
    await expectAccessible(page, 'developer-cancel-dialog');
    await dialog.getByRole('button', { name: 'Cancel batch' }).click();
    await waitForStatusChip(page, batchId, 'cancelled');
    const batch = await call(server.baseUrl, 'GET', `/v1/batches/${batchId}`, { key });
    expect(batch.body.status).toBe('cancelled');
    expect(batch.body.request_counts.completed).toBeLessThan(40);
    upstream.reset();
  });

  it('follows a batch to completed on a link slower than its 2 s poll', { timeout: 90_000 }, async () => {
    // Each line takes 10 s upstream, so the page's first read lands while the batch runs.
    upstream.chat({ delayMs: 10_000 });
    const { page, batchId } = await batchAndSignedInPage(2);
    // Every read of the batch answers 2.5 s late: a poll that aborted the read under way would never see one land.
    let reads = 0;
    await page.route(`**/console/api/v1/batches/${batchId}`, async (route) => {
      reads += 1;
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      await route.continue().catch(() => {});
    });
    await page.goto(`${server.baseUrl}/console/#/batches/${batchId}`);
    await waitForStatusChip(page, batchId, 'in_progress');
    await waitForStatusChip(page, batchId, 'completed');
    expect(await page.getByTestId('batch-counts').textContent()).toBe('2 completed, 0 failed of 2');
    expect(reads).toBeGreaterThanOrEqual(2);
    upstream.reset();
  });

  /** Waits up to 60 s for the batch page's chip to read `status`; a timeout names the status and counts the API answers. */
  async function waitForStatusChip(page: Page, batchId: string, status: string): Promise<void> {
    try {
      await page.locator('.chip', { hasText: status }).waitFor({ timeout: 60_000 });
    } catch (err) {
      const seen = await call(server.baseUrl, 'GET', `/v1/batches/${batchId}`, { key });
      throw new Error(`no "${status}" chip after 60 s; the API says ${seen.status} ${JSON.stringify({ status: seen.body.status, request_counts: seen.body.request_counts })}`, { cause: err });
    }
  }

  /** A batch of `lines` chat lines created through the API, and a page signed in with the developer's key. */
  async function batchAndSignedInPage(lines: number): Promise<{ page: Page; batchId: string }> {
    const fileId = await uploadBatchFile(lines);
    const created = await call(server.baseUrl, 'POST', '/v1/batches', { key, body: { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h' } });
    const { page } = await newPage();
    await signIn(page, key);
    return { page, batchId: created.body.id };
  }

  async function uploadBatchFile(lines: number): Promise<string> {
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([requestLines(lines)]), 'cancel.jsonl');
    const res = await fetch(`${server.baseUrl}/v1/files`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    return ((await res.json()) as { id: string }).id;
  }

  it('keeps a developer to their project: another project\'s batch is not found', async () => {
    const other = await server.newTenant({ name: 'other' });
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([requestLines(1)]), 'theirs.jsonl');
    const file = (await (await fetch(`${server.baseUrl}/v1/files`, { method: 'POST', headers: { 'x-api-key': other.key }, body: form })).json()) as { id: string };
    const { page } = await newPage();
    await signIn(page, key);
    await page.goto(`${server.baseUrl}/console/#/files`);
    await page.locator('td', { hasText: 'lines.jsonl' }).first().waitFor();
    expect(await page.content()).not.toContain('theirs.jsonl');
    await page.goto(`${server.baseUrl}/console/#/batches/batch_${'0'.repeat(26)}`);
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/not found.*Request id: req_/i);
    const direct = await page.evaluate(async (id) => (await fetch(`/console/api/v1/files/${id}`)).status, file.id);
    expect(direct).toBe(404);
  });

  it('keeps the session in an HttpOnly SameSite=Strict cookie and refuses requests without the CSRF token', async () => {
    const { page } = await newPage();
    await signIn(page, ADMIN_TOKEN);
    const cookies = await page.context().cookies();
    expect(cookies).toEqual([expect.objectContaining({ name: 'sluice_session', httpOnly: true, sameSite: 'Strict', path: '/console' })]);
    expect(await page.evaluate(() => (globalThis as any).document.cookie)).toBe('');
    const forged = await page.evaluate(async () => {
      const res = await fetch('/console/api/admin/projects', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"forged"}' });
      return { status: res.status, body: await res.json() };
    });
    expect(forged).toEqual({ status: 403, body: { error: expect.objectContaining({ code: 'csrf_token_invalid' }) } });
  });

  it('an operator revokes the key after confirmation, and its next call fails', async () => {
    const { page } = await newPage();
    await signIn(page, ADMIN_TOKEN);
    await page.getByLabel('Project', { exact: true }).selectOption(projectId);
    await page.getByRole('cell', { name: 'ci', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Revoke ci' }).click();
    await page.getByRole('dialog', { name: 'Revoke this key?' }).getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText(/^revoked /).waitFor();
    const after = await call(server.baseUrl, 'GET', '/v1/models', { key });
    expect(after.status).toBe(403);
    expect(after.body.error.message).toBe('Invalid credentials');
  });

  // Six pages, each waited to network idle and scanned by axe: ~10 s on a quiet machine, past the default 30 s on a loaded one.
  for (const width of [1280, 390]) {
    it(`every operator page is accessible at ${width} px`, { timeout: 120_000 }, async () => {
      const { page, cspErrors } = await newPage(width);
      await signIn(page, ADMIN_TOKEN);
      await page.getByLabel('Project', { exact: true }).selectOption(projectId);
      for (const name of ['', 'usage', 'batches', 'files', 'models', 'playground']) {
        await page.goto(`${server.baseUrl}/console/#/${name}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await page.waitForLoadState('networkidle');
        await expectAccessible(page, `operator-${name || 'projects'}-${width}`);
        const overflow = await page.evaluate(() => {
          const root = (globalThis as any).document.documentElement;
          return root.scrollWidth - root.clientWidth;
        });
        expect(overflow, `${name} at ${width} px scrolls sideways`).toBeLessThanOrEqual(0);
      }
      expect(cspErrors).toEqual([]);
    });
  }
});
