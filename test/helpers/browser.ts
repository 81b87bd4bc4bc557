/**
 * Headless Chromium for the console's end-to-end tests, driven by playwright-core with the
 * system's browser (Debian's `chromium`; CI installs it). One browser per test file, new
 * contexts per user. `CHROMIUM_PATH` overrides where it is looked for.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { expect } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/** The Chromium binary, or null when the machine has none (a failure where CI installed one: SLUICE_TEST_REQUIRE_CHROMIUM=1). */
export const CHROMIUM_PATH: string | null = process.env.CHROMIUM_PATH ?? CANDIDATES.find((file) => existsSync(file)) ?? null;
if (!CHROMIUM_PATH && process.env.SLUICE_TEST_REQUIRE_CHROMIUM === '1') {
  throw new Error('Chromium required (SLUICE_TEST_REQUIRE_CHROMIUM=1) but no binary was found');
}

export function launchChromium(): Promise<Browser> {
  if (!CHROMIUM_PATH) throw new Error('no Chromium binary');
  // --no-sandbox: CI containers run as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** Where screenshots go: test-output/console/<name>.png under the repository. */
export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, '../../test-output/console');

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  targets: string[];
}

/**
 * axe-core's serious and critical violations on the page as it is now. The script is
 * evaluated through the DevTools protocol, which the page's CSP does not govern (an
 * injected <script> tag would be refused, as it should be).
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // Runs in the page: `globalThis` is its window (the test's own types have no DOM).
    const page = globalThis as any;
    const result: { violations: any[] } = await page.axe.run(page.document, { resultTypes: ['violations'] });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, targets: v.nodes.map((n: any) => String(n.target)) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** A fresh browser profile (its own cookies) with its page, and the page's CSP violations as they come. */
export async function openPage(
  browser: Browser,
  options: { width?: number; acceptDownloads?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page; cspErrors: string[] }> {
  const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: 900 }, acceptDownloads: options.acceptDownloads ?? false });
  context.setDefaultTimeout(10_000);
  const page = await context.newPage();
  const cspErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) cspErrors.push(message.text());
  });
  return { context, page, cspErrors };
}

/** Signs in to the console at `baseUrl` with the admin token or an API key. */
export async function signInToConsole(page: Page, baseUrl: string, credential: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.getByLabel('Admin token or API key').fill(credential);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** A screenshot named `name`, and no serious axe-core violation on the page as it is. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  await screenshot(page, name);
  const violations = await seriousViolations(page);
  expect(violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.targets.join(', ')}`), name).toEqual([]);
}
