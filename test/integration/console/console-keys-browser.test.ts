/**
 * Key policies in the console, in headless Chromium against a real Sluice: an operator
 * makes a key with a model list and a day budget and sees the policy in the list; a bad
 * policy is refused with the field named beside the form; the key's rpm is edited; the key
 * is rotated with a grace period, the new secret shown once and the old one still working.
 * axe-core at desktop and phone widths. Skipped, with a message, where no Chromium exists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { ADMIN_TOKEN, call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { CHROMIUM_PATH, expectAccessible, launchChromium, openPage, signInToConsole } from '../../helpers/browser.js';

if (!CHROMIUM_PATH) console.warn('console key browser tests skipped: no Chromium binary (install Debian\'s chromium, or set CHROMIUM_PATH)');

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

describe.skipIf(!CHROMIUM_PATH)('key policies in the console, in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  let projectId = '';

  beforeAll(async () => {
    server = await startTestServer({});
    projectId = (await call(server.baseUrl, 'POST', '/admin/v1/projects', { headers: admin, body: { name: 'governed' } })).body.id;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const keysNamed = async (name: string) => (await call(server.baseUrl, 'GET', `/admin/v1/projects/${projectId}/keys`, { headers: admin })).body.data.find((k: { name: string }) => k.name === name);

  it('an admin creates a key with models and a day budget, edits its rpm, and rotates it with a grace period', { timeout: 120_000 }, async () => {
    const { page, cspErrors } = await openPage(browser);
    await signInToConsole(page, server.baseUrl, ADMIN_TOKEN);
    await page.getByLabel('Project', { exact: true }).selectOption(projectId);
    await page.getByText('No keys yet').waitFor();

    // A bad policy: the server's message, with the field, beside the form; the field marked invalid.
    await page.getByLabel('New key name').fill('nightly');
    await page.getByLabel('Tags (comma-separated)').fill('ok, not ok!');
    await page.getByRole('button', { name: 'Create key' }).click();
    const refusal = page.getByRole('form', { name: 'New key' }).getByRole('alert');
    await refusal.filter({ hasText: 'tags: "not ok!" must be 1 to' }).waitFor();
    expect(await refusal.getByText('Field:').textContent()).toBe('Field: tags');
    expect(await page.getByLabel('Tags (comma-separated)').getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page, 'keys-refused');

    await page.getByLabel('Tags (comma-separated)').fill('');
    await page.getByLabel('Models (comma-separated; globs like small-*)').fill('small-*, gpt-4o-mini');
    await page.getByLabel('Budget (USD)').fill('2.5');
    await page.getByLabel('per', { exact: true }).selectOption('day');
    await page.getByRole('button', { name: 'Create key' }).click();
    const first = (await page.getByTestId('new-key').textContent())!;
    expect(first).toMatch(/^sk-sluice-/);
    const policy = page.getByRole('definition');
    await policy.filter({ hasText: 'small-*, gpt-4o-mini' }).waitFor();
    await policy.filter({ hasText: '$2.50 a day' }).waitFor();
    expect(await keysNamed('nightly')).toMatchObject({ models: ['small-*', 'gpt-4o-mini'], budget: { limit_usd: 2.5, window: 'day' }, rpm: null, tags: null });
    await expectAccessible(page, 'keys-created-with-policy');
    await page.getByRole('button', { name: 'I have copied it' }).click();

    await page.getByRole('button', { name: 'Edit nightly' }).click();
    const edit = page.getByRole('form', { name: 'Edit key “nightly”' });
    expect(await edit.getByLabel('Models (comma-separated; globs like small-*)').inputValue()).toBe('small-*, gpt-4o-mini');
    await edit.getByLabel('Requests per minute').fill('120');
    await expectAccessible(page, 'keys-edit');
    await edit.getByRole('button', { name: 'Save key' }).click();
    await policy.filter({ hasText: /^120$/ }).waitFor();
    expect(await keysNamed('nightly')).toMatchObject({ models: ['small-*', 'gpt-4o-mini'], budget: { limit_usd: 2.5, window: 'day' }, rpm: 120 });

    await page.getByRole('button', { name: 'Rotate nightly' }).click();
    const dialog = page.getByRole('dialog', { name: 'Rotate “nightly”?' });
    await dialog.getByLabel('Grace period for the old secret').selectOption({ label: '1 hour' });
    await expectAccessible(page, 'keys-rotate-dialog');
    await dialog.getByRole('button', { name: 'Rotate key' }).click();
    await page.getByText('Copy the new secret of “nightly” now: it is shown only once.').waitFor();
    const second = (await page.getByTestId('new-key').textContent())!;
    expect(second).toMatch(/^sk-sluice-/);
    expect(second).not.toBe(first);
    await page.getByText(/^old secret works until /).waitFor();
    const rotated = await keysNamed('nightly');
    expect(rotated.previous_key_valid_until - Math.floor(Date.now() / 1000)).toBeGreaterThan(3000);
    for (const key of [first, second]) expect((await call(server.baseUrl, 'GET', '/v1/models', { key })).status).toBe(200);
    expect(cspErrors).toEqual([]);
  });

  for (const width of [1280, 390]) {
    it(`the keys panel with a policy is accessible at ${width} px, without sideways scrolling`, { timeout: 60_000 }, async () => {
      const { page } = await openPage(browser, { width });
      await signInToConsole(page, server.baseUrl, ADMIN_TOKEN);
      await page.getByLabel('Project', { exact: true }).selectOption(projectId);
      await page.getByRole('button', { name: 'Edit nightly' }).click();
      await page.getByRole('button', { name: 'Save key' }).waitFor();
      await expectAccessible(page, `keys-panel-${width}`);
      const overflow = await page.evaluate(() => {
        const root = (globalThis as any).document.documentElement;
        return root.scrollWidth - root.clientWidth;
      });
      expect(overflow).toBeLessThanOrEqual(0);
    });
  }
});
