/** The gateway page's hand-signed request (docs/gateway.md) (bash, printf, openssl dgst -sha256 -hmac, curl) is served by a gateway with that secret. */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGatewayEnv, type GatewayEnv } from './setup.js';

const GATEWAY_PAGE = readFileSync(path.resolve(import.meta.dirname, '../../../docs/gateway.md'), 'utf8');
const example = /A signed request by hand[^\n]*\n\n```sh\n([\s\S]*?)```/.exec(GATEWAY_PAGE)?.[1];

let env: GatewayEnv;
beforeAll(async () => {
  env = await startGatewayEnv({ env: { GATEWAY_SIGNING_SECRETS: JSON.stringify({ k1: 'gwsec_0123456789abcdef' }) } });
});
afterAll(() => env?.close());

const hasTools = (() => {
  try {
    execFileSync('bash', ['-c', 'command -v openssl && command -v curl'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

describe.skipIf(!hasTools)('docs/gateway.md signed example', () => {
  it('signs a request the gateway serves', async () => {
    expect(example).toBeDefined();
    const script = example!.replace('localhost:8080', env.server.baseUrl);
    // Asynchronously: the server answering it runs in this process.
    const { stdout: output } = await promisify(execFile)('bash', ['-c', script], { encoding: 'utf8', timeout: 20_000 });
    expect(output).toMatch(/^HTTP\/1\.1 200/);
    expect(output).toMatch(/gw-usage: input_tokens=\d+/);
  });
});
