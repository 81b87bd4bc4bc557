/**
 * The GGUF runtime on demand: what `sluice runtimes add gguf` asks npm for, its failure
 * (npm offline with an empty cache: no network), Sluice loading the runtime from a given
 * folder (the one SLUICE_RUNTIMES_DIR holds in CI), and a pulled GGUF model whose runtime
 * is missing, as the 503, /readyz, GET /v1/models/{id}, the catalog and `models list` say.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ggufInstallPlan, ggufRuntimeState, loadGgufRuntime } from '../../../src/inference/backends/gguf/runtime.js';
import { runSluice } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/databases.js';
import { GGUF_RUNTIMES_DIR } from '../../helpers/gguf-runtime.js';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';

const MODEL = 'LFM2.5-1.2B-Instruct';
const COMMON = ['install', '--prefix', '/srv/runtimes/gguf', '--no-save', '--no-package-lock', '--ignore-scripts', '--omit=optional', '--omit=dev', '--no-audit', '--no-fund'];

describe('the install plan', () => {
  it("node-llama-cpp and this platform's CPU build, pinned, nothing else", () => {
    expect(ggufInstallPlan('/srv/runtimes', null, 'linux', 'x64')).toEqual({
      prefix: '/srv/runtimes/gguf',
      packages: ['node-llama-cpp@3.21.1', '@node-llama-cpp/linux-x64@3.21.1'],
      npmArgs: [...COMMON, 'node-llama-cpp@3.21.1', '@node-llama-cpp/linux-x64@3.21.1'],
    });
    expect(ggufInstallPlan('/srv/runtimes', null, 'darwin', 'arm64').packages).toEqual(['node-llama-cpp@3.21.1', '@node-llama-cpp/mac-arm64-metal@3.21.1']);
    expect(ggufInstallPlan('/srv/runtimes', null, 'linux', 'arm').packages).toEqual(['node-llama-cpp@3.21.1', '@node-llama-cpp/linux-armv7l@3.21.1']);
  });

  it('--gpu adds that build beside the CPU one', () => {
    expect(ggufInstallPlan('/srv/runtimes', 'cuda', 'linux', 'x64').npmArgs.slice(COMMON.length)).toEqual([
      'node-llama-cpp@3.21.1',
      '@node-llama-cpp/linux-x64@3.21.1',
      '@node-llama-cpp/linux-x64-cuda@3.21.1',
    ]);
    expect(ggufInstallPlan('/srv/runtimes', 'vulkan', 'win32', 'x64').packages.at(-1)).toBe('@node-llama-cpp/win-x64-vulkan@3.21.1');
  });

  it('refuses a platform or GPU build node-llama-cpp does not ship', () => {
    expect(() => ggufInstallPlan('/srv/runtimes', null, 'freebsd', 'x64')).toThrow('node-llama-cpp has no prebuilt binary for freebsd-x64');
    expect(() => ggufInstallPlan('/srv/runtimes', 'cuda', 'linux', 'arm64')).toThrow('node-llama-cpp has no cuda build for linux-arm64');
  });
});

describe('sluice runtimes add', { timeout: 120_000 }, () => {
  it('a failed npm install: npm says why, then one clear line, exit 1, nothing installed', async () => {
    const dir = tempDir('sluice-runtimes-');
    const runtimesDir = path.join(dir, 'runtimes');
    const result = runSluice(['runtimes', 'add', 'gguf'], {
      cwd: dir,
      env: { DATA_DIR: dir, SLUICE_RUNTIMES_DIR: '', npm_config_offline: 'true', npm_config_cache: path.join(dir, 'empty-npm-cache') },
    });
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe(`installing the GGUF runtime (node-llama-cpp@3.21.1, @node-llama-cpp/${process.platform === 'linux' ? 'linux' : 'mac'}-${process.arch}@3.21.1) into ${runtimesDir}/gguf with npm`);
    expect(result.stderr).toContain('ENOTCACHED');
    expect(lines.at(-1)).toBe(
      'error: installing the GGUF runtime failed: npm exited with code 1 (its messages above say why). ' +
        'The packages come from the npm registry (`npm config get registry`): check that it is reachable, then run `sluice runtimes add gguf` again',
    );
    expect(await ggufRuntimeState(runtimesDir)).toEqual({ installed: false, detail: `GGUF runtime not installed in ${runtimesDir}`, publicDetail: 'GGUF runtime not installed' });
  });

  it('refuses an unknown runtime and an unknown GPU build', () => {
    const dir = tempDir('sluice-runtimes-');
    const unknown = runSluice(['runtimes', 'add', 'tensorrt'], { cwd: dir, env: { DATA_DIR: dir } });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toBe('error: unknown runtime tensorrt; the one runtime installed on demand is gguf\n');
    const metal = runSluice(['runtimes', 'add', 'gguf', '--gpu', 'metal'], { cwd: dir, env: { DATA_DIR: dir } });
    expect(metal.status).toBe(1);
    expect(metal.stderr).toContain("error: option '--gpu <kind>' argument 'metal' is invalid. Allowed choices are cuda, vulkan.");
  });
});

describe('loading the runtime from its folder', () => {
  it.skipIf(!GGUF_RUNTIMES_DIR)('imports node-llama-cpp from the folder runtimes add filled', async () => {
    const runtime = await loadGgufRuntime(GGUF_RUNTIMES_DIR!);
    expect(typeof runtime?.module.getLlama).toBe('function');
    expect(typeof runtime?.module.LlamaCompletion).toBe('function');
  });

  it('finds nothing in an empty folder, and names a version other than the pinned one', async () => {
    const dir = tempDir('sluice-runtimes-');
    expect(await loadGgufRuntime(dir)).toBeNull();
    const pkg = path.join(dir, 'gguf/node_modules/node-llama-cpp');
    mkdirSync(pkg, { recursive: true });
    writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'node-llama-cpp', version: '3.9.0' }));
    expect(await ggufRuntimeState(dir)).toEqual({
      installed: false,
      detail: `GGUF runtime 3.9.0 installed; this Sluice needs 3.21.1 (in ${dir})`,
      publicDetail: 'GGUF runtime 3.9.0 installed; this Sluice needs 3.21.1',
    });
  });
});

describe('a pulled GGUF model without its runtime', { timeout: 120_000 }, () => {
  let server: TestServer;
  let key: string;
  const modelsDir = tempDir('sluice-models-');
  const runtimesDir = tempDir('sluice-runtimes-');
  const env = { MODELS_DIR: modelsDir, SLUICE_RUNTIMES_DIR: runtimesDir };
  const SAYS = 'GGUF runtime not installed: run `sluice runtimes add gguf`';

  beforeAll(async () => {
    mkdirSync(path.join(modelsDir, MODEL));
    writeFileSync(path.join(modelsDir, MODEL, 'model-Q4_K_M.gguf'), 'GGUF');
    server = await startTestServer({ env });
    ({ key } = await server.newTenant({ balanceUsd: 1 }));
  });
  afterAll(async () => server?.close());

  it('a call answers 503 model_not_available with the command that installs it', async () => {
    const res = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model: MODEL, messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      error: {
        message: `Model ${MODEL} is not available: GGUF runtime not installed; run \`sluice runtimes add gguf\``,
        type: 'invalid_request_error',
        code: 'model_not_available',
        param: 'model',
      },
    });
  });

  it('/readyz stays ready and names the missing runtime', async () => {
    const res = await call(server.baseUrl, 'GET', '/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { database: 'ok', migrations: 'ok', blob_store: 'ok' }, runtimes: { gguf: SAYS } });
  });

  it('GET /v1/models/{id} says it on that model only', async () => {
    const res = await call(server.baseUrl, 'GET', `/v1/models/${MODEL}`, { key });
    expect(res.body).toEqual({ id: MODEL, object: 'model', created: expect.any(Number), owned_by: 'sluice', not_ready: SAYS });
    const other = await call(server.baseUrl, 'GET', '/v1/models/LFM2.5-1.2B-Thinking', { key });
    expect(other.body).not.toHaveProperty('not_ready');
  });

  it("the catalog (the console's models page) gives the runtime command as the fix", async () => {
    const res = await call(server.baseUrl, 'GET', '/v1/catalog', { key });
    const row = res.body.data.find((m: { id: string }) => m.id === MODEL);
    expect(row).toMatchObject({ id: MODEL, runtime: 'gguf', ready: false, detail: 'GGUF runtime not installed' });
    expect(row.fixes).toEqual([
      `set models.${MODEL}.base_url in sluice.yaml to an OpenAI-compatible server (vLLM, SGLang, llama.cpp server, Ollama)`,
      'run `sluice runtimes add gguf`',
    ]);
  });

  it('`sluice models list` shows the operator where it looked', () => {
    const result = runSluice(['models', 'list', '--json'], { cwd: modelsDir, env: { DATA_DIR: tempDir(), ...env } });
    expect(result.status).toBe(0);
    const row = (JSON.parse(result.stdout) as Array<Record<string, unknown>>).find((r) => r.id === MODEL);
    expect(row).toEqual({
      id: MODEL,
      task: 'chat',
      backend: 'gguf',
      ready: false,
      detail: `GGUF runtime not installed in ${runtimesDir}; run \`sluice runtimes add gguf\``,
      price: { input_per_million_usd: 0.02, output_per_million_usd: 0.05 },
    });
  });
});
