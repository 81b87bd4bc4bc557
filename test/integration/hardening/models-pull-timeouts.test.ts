/**
 * `sluice models pull` against a Hub that is not there or does not answer: bounded by
 * the hub timeouts, one line naming what failed, where and what to try, non-zero exit.
 */
import { spawnSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../helpers/databases.js';
import { refusedPort } from '../../helpers/refused-port.js';
import { loadConfig } from '../../../src/config/load.js';
import { pullModel } from '../../../src/inference/hub/pull.js';
import { builtEntry } from '../../helpers/built.js';

/** Accepts connections and never answers. */
let silent: net.Server;
let silentUrl: string;
const sockets = new Set<net.Socket>();

beforeAll(async () => {
  silent = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  silentUrl = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

function configFor(endpoint: string) {
  const dir = tempDir('sluice-pull-');
  writeFileSync(path.join(dir, 'sluice.yaml'), 'hub:\n  connect_timeout_ms: 300\n  idle_timeout_ms: 300\n');
  const env = { DATA_DIR: dir, HF_ENDPOINT: endpoint, SLUICE_CONFIG: path.join(dir, 'sluice.yaml') };
  return { dir, env, config: loadConfig(env, dir) };
}

describe('models pull without a working Hub', () => {
  it('a Hub that accepts and never answers fails after the idle timeout with one clear line', async () => {
    const { config } = configFor(silentUrl);
    await expect(pullModel(config, 'all-minilm-l6-v2', {}, () => {})).rejects.toThrow(
      `Listing Xenova/all-MiniLM-L6-v2 failed: cannot reach ${silentUrl} (it stopped answering); check the network, or set HF_ENDPOINT to a reachable Hub mirror`,
    );
  });

  it('a refused connection names the cause', async () => {
    const closed = `http://127.0.0.1:${await refusedPort()}`;
    const { config } = configFor(closed);
    await expect(pullModel(config, 'all-minilm-l6-v2', {}, () => {})).rejects.toThrow(
      `Listing Xenova/all-MiniLM-L6-v2 failed: cannot reach ${closed} (ECONNREFUSED); check the network, or set HF_ENDPOINT to a reachable Hub mirror`,
    );
  });

  it('the CLI prints that line alone, no stack, and exits non-zero', { timeout: 60_000 }, () => {
    const { dir, env } = configFor(silentUrl);
    const result = spawnSync(process.execPath, [builtEntry('src/cli/main.ts'), 'models', 'pull', 'all-minilm-l6-v2'], {
      cwd: dir,
      env: { ...process.env, ...env, LOG_LEVEL: 'silent' },
      encoding: 'utf8',
      timeout: 50_000,
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe(
      `error: Listing Xenova/all-MiniLM-L6-v2 failed: cannot reach ${silentUrl} (it stopped answering); check the network, or set HF_ENDPOINT to a reachable Hub mirror`,
    );
  });
});
