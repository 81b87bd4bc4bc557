/**
 * Signing in to the console through an identity provider, in headless Chromium: the
 * sign-in page offers "Sign in with <provider>", the provider's page signs the person in,
 * the console opens as that user in their project, where they make a key; the Members
 * and Audit log pages show them and the key they made; a person with no role comes back to the sign-in page with the
 * reason. axe-core on every console page seen. Skipped, with a message, where no Chromium exists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { newUuid } from '../../../src/domain/shared/ids.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { CHROMIUM_PATH, expectAccessible, launchChromium, openPage } from '../../helpers/browser.js';
import { startIdentityProvider, type TestIdentityProvider } from '../../helpers/oidc-provider.js';

if (!CHROMIUM_PATH) console.warn('console sign-in browser tests skipped: no Chromium binary (install Debian\'s chromium, or set CHROMIUM_PATH)');

describe.skipIf(!CHROMIUM_PATH)('console sign-in through the identity provider, in Chromium', () => {
  let idp: TestIdentityProvider;
  let server: TestServer;
  let browser: Browser;
  const projectId = newUuid();

  beforeAll(async () => {
    idp = await startIdentityProvider();
    const yaml = `sign_in:
  oidc:
    provider_name: Test IdP
    issuer: ${idp.issuer}
    client_id: ${idp.clientId}
    scopes: [openid, email, profile, groups]
    roles:
      - { claim: groups, value: ml-team, project: ${projectId}, role: admin }
`;
    server = await startTestServer({ yaml, env: { SLUICE_OIDC_CLIENT_SECRET: idp.clientSecret } });
    await server.core.projects.ensureProject(projectId, 'ML team');
    idp.register(`${server.baseUrl}/console/api/session/oidc/callback`);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await idp?.close();
  });

  it('walks the whole sign-in and lands in the user\'s project as its admin', async () => {
    idp.person = { sub: 'lin', email: 'lin@example.com', email_verified: true, name: 'Lin', groups: ['ml-team'] };
    const { page, cspErrors } = await openPage(browser);
    await page.goto(`${server.baseUrl}/console/`);
    const button = page.getByRole('link', { name: 'Sign in with Test IdP' });
    await button.waitFor();
    await expectAccessible(page, 'sign-in-with-provider');
    await button.click();
    await page.getByRole('heading', { name: 'Test identity provider' }).waitFor();
    await page.getByRole('button', { name: 'Continue as lin@example.com' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/');
    await page.getByText('lin@example.com (admin)').waitFor();
    await page.getByRole('heading', { name: 'Your project' }).waitFor();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await expectAccessible(page, 'user-project');
    await page.getByLabel('New key name').fill('lin-laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('new-key').waitFor();

    await page.getByRole('link', { name: 'Members' }).click();
    await page.getByRole('cell', { name: 'lin@example.com', exact: true }).waitFor();
    expect(await page.getByLabel('Role of lin@example.com').inputValue()).toBe('admin');
    await expectAccessible(page, 'user-members');

    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('cell', { name: 'key.create' }).waitFor();
    await page.getByRole('cell', { name: 'user user_', exact: false }).first().waitFor();
    await expectAccessible(page, 'user-audit');
    const cookies = await page.context().cookies();
    const session = cookies.find((c) => c.name === 'sluice_session')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    expect(cspErrors).toEqual([]);
  });

  it('sends a person with no role back to the sign-in page, saying why', async () => {
    idp.person = { sub: 'zed', email: 'zed@example.com', email_verified: true, groups: ['elsewhere'] };
    const { page } = await openPage(browser);
    await page.goto(`${server.baseUrl}/console/`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await page.getByRole('button', { name: 'Continue as zed@example.com' }).click();
    await page.getByRole('alert').filter({ hasText: 'Your account has no role in Sluice: ask an operator to give you one.' }).waitFor();
    expect(new URL(page.url()).search).toBe('?sign_in_error=sign_in_not_mapped');
    expect((await page.context().cookies()).some((c) => c.name === 'sluice_session')).toBe(false);
    await expectAccessible(page, 'sign-in-refused');
  });
});
