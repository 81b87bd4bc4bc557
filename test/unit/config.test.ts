/** Config validation: every error names the key and why; defaults with no config; a bad file stops start-up (78). */
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { tempDir } from '../helpers/databases.js';
import { builtEntry, REPO, type Entry } from '../helpers/built.js';

/** Loads config from a YAML text (and env) in a fresh directory; returns the problems, or [] when valid. */
function problemsOf(yaml: string | null, env: Record<string, string> = {}): string[] {
  const dir = tempDir('sluice-config-');
  const fullEnv = { ...env };
  if (yaml !== null) {
    writeFileSync(path.join(dir, 'bad.yaml'), yaml);
    fullEnv.SLUICE_CONFIG = 'bad.yaml';
  }
  try {
    loadConfig(fullEnv, dir);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

describe('config validation', () => {
  it.each([
    ['unknown key', 'server:\n  prot: 80\n', ['server.prot: Unexpected property (unknown key)']],
    ['unknown top-level key', 'colour: blue\n', ['colour: Unexpected property (unknown key)']],
    ['wrong type', 'server:\n  port: eighty\n', ['server.port: Expected integer, got "eighty"']],
    ['port out of range', 'server:\n  port: 70000\n', ['server.port: Expected integer to be less or equal to 65535, got 70000']],
    ['bad log level', 'log_level: loud\n', ['log_level: must be one of fatal, error, warn, info, debug, trace, silent, got "loud"']],
    [
      'bad backend',
      'models:\n  gpt-oss-120b:\n    backend: tensorrt\n',
      ['models.gpt-oss-120b.backend: must be one of openai, onnx, gguf, got "tensorrt"'],
    ],
    [
      'negative price',
      'models:\n  t5-small:\n    price:\n      input_per_million_usd: -1\n',
      [
        'models.t5-small.price.input_per_million_usd: Expected number to be greater or equal to 0 (USD per million input tokens), got -1',
      ],
    ],
    [
      'negative free credits',
      'free_credits_usd: -2\n',
      ['free_credits_usd: Expected number to be greater or equal to 0 (credits granted to every new project), got -2'],
    ],
    [
      'zero rate limit',
      'rate_limits:\n  requests_per_minute: 0\n',
      ['rate_limits.requests_per_minute: Expected integer to be greater or equal to 1 (per API key), got 0'],
    ],
    [
      'missing base_url for backend openai',
      'models:\n  glm-5.2:\n    backend: openai\n',
      ['models.glm-5.2.base_url: required when backend is openai'],
    ],
    ['not a mapping', '- a\n- b\n', ['(root): Expected object']],
  ])('%s', (_what, yaml, expected) => {
    expect(problemsOf(yaml)).toEqual(expected);
  });

  it('an id outside the catalog is a declared model, served by its base_url', () => {
    expect(problemsOf('models:\n  gpt-5:\n    base_url: http://127.0.0.1:1/v1\n')).toEqual([]);
    expect(problemsOf('models:\n  gpt-5:\n    upstream_model: x\n')).toEqual([
      'models.gpt-5.base_url: required: the OpenAI-compatible server that serves gpt-5 (e.g. http://127.0.0.1:11434/v1 for Ollama)',
    ]);
  });

  it('api_key_env naming an unset variable (and accepted once set)', () => {
    const yaml = 'models:\n  glm-5.2:\n    base_url: http://127.0.0.1:1/v1\n    api_key_env: SLUICE_TEST_UNSET_KEY\n';
    expect(problemsOf(yaml)).toEqual(['models.glm-5.2.api_key_env: environment variable SLUICE_TEST_UNSET_KEY is not set']);
    expect(problemsOf(yaml, { SLUICE_TEST_UNSET_KEY: 'secret' })).toEqual([]);
  });

  it('invalid YAML and a missing file name the file', () => {
    const [yamlProblem] = problemsOf('server: [1,\n');
    expect(yamlProblem).toMatch(/bad\.yaml: not valid YAML: /);
    const dir = tempDir('sluice-config-');
    expect(() => loadConfig({ SLUICE_CONFIG: 'nope.yaml' }, dir)).toThrow(`SLUICE_CONFIG: file not found: ${path.join(dir, 'nope.yaml')}`);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT: must be an integer between 0 and 65535, got "abc"'],
    [{ PORT: '80.5' }, 'PORT: must be an integer between 0 and 65535, got "80.5"'],
    [{ PORT: '65536' }, 'PORT: must be an integer between 0 and 65535, got "65536"'],
    [{ RATE_LIMIT_RPM: '0' }, 'RATE_LIMIT_RPM: must be an integer at least 1, got "0"'],
    [{ AUTH_CACHE_TTL_MS: '-1' }, 'AUTH_CACHE_TTL_MS: must be an integer between 0 and 60000, got "-1"'],
    [{ SHUTDOWN_GRACE_SECONDS: '0' }, 'SHUTDOWN_GRACE_SECONDS: must be a number between 0.1 and 3600, got "0"'],
    [{ FREE_CREDITS_USD: 'lots' }, 'FREE_CREDITS_USD: must be a number at least 0, got "lots"'],
    [{ DATABASE_URL: 'mysql://db/sluice' }, 'DATABASE_URL: must start with postgres://, postgresql:// or sqlite:'],
    [{ REDIS_URL: 'http://127.0.0.1:6379' }, 'REDIS_URL: must start with redis:// or rediss://'],
    [{ SLUICE_WORKERS: 'threads' }, 'SLUICE_WORKERS: must be "in-process" or "off"'],
    [{ BILLING_LOWER_OUTPUT_CAP: 'no' }, 'BILLING_LOWER_OUTPUT_CAP: must be true or false, got "no"'],
    [{ DATABASE_USAGE_SYNCHRONOUS_COMMIT: 'off' }, 'DATABASE_USAGE_SYNCHRONOUS_COMMIT: must be true or false, got "off"'],
    [{ BILLING_MIN_OUTPUT_TOKENS: '0' }, 'BILLING_MIN_OUTPUT_TOKENS: must be an integer at least 1, got "0"'],
    [{ BILLING_DEFAULT_HOLD_TOKENS: '0' }, 'BILLING_DEFAULT_HOLD_TOKENS: must be an integer at least 1, got "0"'],
    [{ BILLING_HOLD_WAIT_MS: '-1' }, 'BILLING_HOLD_WAIT_MS: must be an integer at least 0, got "-1"'],
  ])('environment %o', (env, expected) => {
    expect(problemsOf(null, env)).toEqual([expected]);
  });

  it('reports every problem at once', () => {
    expect(problemsOf('server:\n  port: x\nlog_level: loud\n', { PORT: 'y' })).toHaveLength(3);
  });
});

describe('config defaults and overrides', () => {
  it('runs with no configuration at all', () => {
    const dir = tempDir('sluice-config-');
    const config = loadConfig({}, dir);
    expect(config.server).toEqual({
      host: '127.0.0.1',
      port: 8080,
      bodyLimitBytes: 10 * 1024 * 1024,
      trustProxy: false,
      shutdownGraceMs: 30_000,
      timeouts: { headersMs: 30_000, bodyIdleMs: 30_000, requestMs: 900_000 },
    });
    expect(config.dataDir).toBe(path.join(dir, 'data'));
    expect(config.database).toEqual({ kind: 'sqlite', path: path.join(dir, 'data', 'sluice.db') });
    expect(config.billing).toEqual({ freeCreditsMicros: 1_000_000, lowerOutputCap: true, minOutputTokens: 16, defaultHoldTokens: 1024, holdWaitMs: 2_000 });
    expect(config.workers.inProcess).toBe(true);
    expect(config.adminToken).toBeNull();
    expect(config.redisUrl).toBeNull();
    expect(config.rateLimit).toEqual({ requestsPerMinute: 600, redisPrefix: 'sluice:rl' });
    expect(config.auth.cacheTtlMs).toBe(5_000);
    expect(config.configFile).toBeNull();
    expect(Object.isFrozen(config.server)).toBe(true);
  });

  it('environment variables override the file', () => {
    const dir = tempDir('sluice-config-');
    writeFileSync(path.join(dir, 'sluice.yaml'), 'server:\n  port: 9000\nfree_credits_usd: 5\nrate_limits:\n  requests_per_minute: 10\n');
    const fromFile = loadConfig({}, dir);
    expect(fromFile.server.port).toBe(9000);
    expect(fromFile.billing.freeCreditsMicros).toBe(5_000_000);
    expect(fromFile.configFile).toBe(path.join(dir, 'sluice.yaml'));
    const overridden = loadConfig({ PORT: '9001', FREE_CREDITS_USD: '0.5', RATE_LIMIT_RPM: '20', SLUICE_WORKERS: 'off' }, dir);
    expect(overridden.server.port).toBe(9001);
    expect(overridden.billing.freeCreditsMicros).toBe(500_000);
    expect(overridden.rateLimit.requestsPerMinute).toBe(20);
    expect(overridden.workers.inProcess).toBe(false);
  });

  it('the shutdown grace takes fractions of a second, from the file or the environment', () => {
    const dir = tempDir('sluice-config-');
    writeFileSync(path.join(dir, 'sluice.yaml'), 'server:\n  shutdown_grace_seconds: 1.5\n');
    expect(loadConfig({}, dir).server.shutdownGraceMs).toBe(1_500);
    expect(loadConfig({ SHUTDOWN_GRACE_SECONDS: '0.25' }, dir).server.shutdownGraceMs).toBe(250);
    expect(problemsOf('server:\n  shutdown_grace_seconds: 0.05\n', {})).toHaveLength(1);
  });

  it('billing: lowering the output cap from the file, and its environment twin', () => {
    const dir = tempDir('sluice-config-');
    writeFileSync(
      path.join(dir, 'sluice.yaml'),
      'billing:\n  lower_output_cap: false\n  min_output_tokens: 64\n  default_hold_tokens: 256\n  hold_wait_ms: 500\n',
    );
    expect(loadConfig({}, dir).billing).toMatchObject({ lowerOutputCap: false, minOutputTokens: 64, defaultHoldTokens: 256, holdWaitMs: 500 });
    const overridden = loadConfig(
      { BILLING_LOWER_OUTPUT_CAP: 'true', BILLING_MIN_OUTPUT_TOKENS: '8', BILLING_DEFAULT_HOLD_TOKENS: '32', BILLING_HOLD_WAIT_MS: '0' },
      dir,
    );
    expect(overridden.billing).toMatchObject({ lowerOutputCap: true, minOutputTokens: 8, defaultHoldTokens: 32, holdWaitMs: 0 });
    expect(problemsOf('billing:\n  lower_output_cap: sometimes\n', {})).toHaveLength(1);
    expect(problemsOf('billing:\n  hold_wait_ms: -5\n', {})).toHaveLength(1);
  });

  it('reads DATABASE_URL and the admin token from a file', () => {
    const dir = tempDir('sluice-config-');
    writeFileSync(path.join(dir, 'token'), 'from-file\n');
    const config = loadConfig({ DATABASE_URL: 'postgres://u@h/db', SLUICE_ADMIN_TOKEN_FILE: 'token' }, dir);
    expect(config.database).toEqual({ kind: 'postgres', url: 'postgres://u@h/db', usageSynchronousCommit: true, preparedStatements: true });
    expect(config.adminToken).toBe('from-file');
    const relaxed = loadConfig({ DATABASE_URL: 'postgres://u@h/db', DATABASE_USAGE_SYNCHRONOUS_COMMIT: 'false' }, dir);
    expect(relaxed.database).toEqual({ kind: 'postgres', url: 'postgres://u@h/db', usageSynchronousCommit: false, preparedStatements: true });
    writeFileSync(path.join(dir, 'relaxed.yaml'), 'database_url: postgres://u@h/db\ndatabase_usage_synchronous_commit: false\n');
    expect(loadConfig({ SLUICE_CONFIG: 'relaxed.yaml' }, dir).database).toEqual({ kind: 'postgres', url: 'postgres://u@h/db', usageSynchronousCommit: false, preparedStatements: true });
    const unprepared = loadConfig({ DATABASE_URL: 'postgres://u@h/db', DATABASE_PREPARED_STATEMENTS: 'false' }, dir);
    expect(unprepared.database).toEqual({ kind: 'postgres', url: 'postgres://u@h/db', usageSynchronousCommit: true, preparedStatements: false });
    writeFileSync(path.join(dir, 'pooled.yaml'), 'database_url: postgres://u@h/db\ndatabase_prepared_statements: false\n');
    expect(loadConfig({ SLUICE_CONFIG: 'pooled.yaml' }, dir).database).toMatchObject({ preparedStatements: false });
    expect(() => loadConfig({ DATABASE_URL: 'postgres://u@h/db', DATABASE_PREPARED_STATEMENTS: 'sometimes' }, dir)).toThrow(/DATABASE_PREPARED_STATEMENTS/);
    expect(loadConfig({ DATABASE_URL: 'sqlite:x/y.db' }, dir).database).toEqual({ kind: 'sqlite', path: path.join(dir, 'x/y.db') });
  });
});

/** Runs an entry point (src/main.ts, src/worker-main.ts) of the repository with `yaml` as its sluice.yaml, in a fresh data directory. */
function startWith(entry: Entry, yaml: string) {
  const dir = tempDir('sluice-config-');
  const file = path.join(dir, 'sluice.yaml');
  writeFileSync(file, yaml);
  const result = spawnSync(process.execPath, [builtEntry(entry)], {
    cwd: dir,
    env: { ...process.env, SLUICE_CONFIG: file, DATA_DIR: dir, LOG_LEVEL: 'silent' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { ...result, file };
}

describe('start-up with a bad config file', { timeout: 90_000 }, () => {
  it('exits with code 78 and names the bad key', () => {
    const { file, ...result } = startWith('src/main.ts', 'server:\n  port: eighty\n');
    expect(result.status).toBe(78);
    expect(result.stderr).toContain(`Invalid configuration (${file})`);
    expect(result.stderr).toContain('server.port: Expected integer, got "eighty"');
  });

  // Which endpoints can be batched is the assembled app's: checked there, answered the same way.
  it.each<Entry>(['src/main.ts', 'src/worker-main.ts'])('%s exits 78 naming a batches.endpoints entry that cannot be batched', (entry) => {
    const { file, ...result } = startWith(entry, 'batches:\n  endpoints: [/v1/images/generations]\n');
    expect(result.status).toBe(78);
    expect(result.stderr).toContain(`Invalid configuration (${file})`);
    expect(result.stderr).toContain('batches.endpoints: /v1/images/generations cannot be batched (one of /v1/chat/completions, ');
  });

  // The worker too: it once compared argv[1] with its URL as text, so through this path it did nothing and exited 0.
  it.each<Entry>(['src/main.ts', 'src/worker-main.ts'])('%s starts (and so exits 78) when launched through a symlinked path containing a space', (entry) => {
    const dir = tempDir('sluice-config-');
    mkdirSync(path.join(dir, 'with space'));
    symlinkSync(REPO, path.join(dir, 'with space', 'sluice'));
    const file = path.join(dir, 'sluice.yaml');
    writeFileSync(file, 'log_level: loud\n');
    const result = spawnSync(process.execPath, [builtEntry(entry, path.join(dir, 'with space', 'sluice'))], {
      cwd: dir,
      env: { ...process.env, SLUICE_CONFIG: file, DATA_DIR: dir },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(78);
    expect(result.stderr).toContain('log_level: must be one of');
  });
});
