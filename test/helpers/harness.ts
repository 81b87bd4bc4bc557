/**
 * Starts a real Sluice (its assembled features + Fastify app) on a loopback port for black-box tests,
 * configured the way an operator would: environment variables and an optional YAML file.
 * With SLUICE_TEST_HTTP_ON_POSTGRES=1 every server without a DATABASE_URL of its own runs
 * on a fresh schema of the PostgreSQL test server instead of SQLite, so the HTTP suites
 * can be run once on each database (`npm run test:postgres`).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { loadConfig } from '../../src/config/load.js';
import { assemble, type Assembly, type CoreOverrides, type Features } from '../../src/composition/features.js';
import type { CoreServices } from '../../src/composition/core.js';
import { buildApp } from '../../src/http/app.js';
import type { ScopeDeclaration } from '../../src/http/scopes/api-scope.js';
import { usdToMicros } from '../../src/domain/shared/money.js';
import { postgresSchema, tempDir } from './databases.js';
import pino from 'pino';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export interface TestServer {
  baseUrl: string;
  assembly: Assembly;
  /** The core's services (projects, billing, the registry, the database, …). */
  core: CoreServices;
  /** Each feature's services, by name. */
  features: Features;
  app: FastifyInstance;
  dataDir: string;
  /** Environment that points another process at this server's data: DATA_DIR, and DATABASE_URL when set. */
  dataEnv: Record<string, string>;
  /** A new project with one key; `balanceUsd` replaces the free credits when given. */
  newTenant(options?: { balanceUsd?: number; name?: string }): Promise<{ projectId: string; key: string; keyId: string }>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  env?: Record<string, string>;
  /** YAML text written to a temp file and passed as SLUICE_CONFIG. */
  yaml?: string;
  overrides?: CoreOverrides;
  startWorkers?: boolean;
  /** The scope declarations buildApp mounts, changed: e.g. a route module added to /v1 and the gateway. */
  scopes?: (scopes: readonly ScopeDeclaration[]) => readonly ScopeDeclaration[];
  /** Called after buildApp and before listen, e.g. to register test-only routes. */
  extendApp?: (app: FastifyInstance, assembly: Assembly) => void | Promise<void>;
}

/**
 * The schema of each DATA_DIR's servers under SLUICE_TEST_HTTP_ON_POSTGRES=1, with how many
 * are open on it: the last to close drops it (the first to close dropped it under the
 * others, whose queries then found no tables).
 */
const schemaOfDataDir = new Map<string, { url: string; open: number; drop(): Promise<void> }>();

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = tempDir();
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    SLUICE_ADMIN_TOKEN: ADMIN_TOKEN,
    LOG_LEVEL: 'silent',
    ...options.env,
  };
  let dropSchema: (() => Promise<void>) | null = null;
  if (process.env.SLUICE_TEST_HTTP_ON_POSTGRES === '1' && env.DATABASE_URL === undefined) {
    // A server given another's DATA_DIR shares its database, as two replicas on one SQLite file do.
    const dir = env.DATA_DIR!;
    let shared = schemaOfDataDir.get(dir);
    if (!shared) schemaOfDataDir.set(dir, (shared = { ...(await postgresSchema()), open: 0 }));
    shared.open++;
    env.DATABASE_URL = shared.url;
    dropSchema = async () => {
      if (--shared.open > 0) return;
      schemaOfDataDir.delete(dir);
      await shared.drop();
    };
  }
  if (options.yaml !== undefined) {
    const file = path.join(dataDir, 'sluice.yaml');
    writeFileSync(file, options.yaml);
    env.SLUICE_CONFIG = file;
  }
  const config = loadConfig(env, dataDir);
  const assembly = await assemble(config, {
    logger: pino({ level: env.LOG_LEVEL ?? 'silent' }),
    ...options.overrides,
  });
  const app = await buildApp(options.scopes ? { ...assembly, scopes: options.scopes(assembly.scopes) } : assembly);
  await options.extendApp?.(app, assembly);
  const { core, features } = assembly;
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no address');
  if (options.startWorkers) assembly.startWorkers();

  return {
    baseUrl: `http://127.0.0.1:${address.port}`,
    assembly,
    core,
    features,
    app,
    dataDir,
    dataEnv: env.DATABASE_URL === undefined ? { DATA_DIR: dataDir } : { DATA_DIR: dataDir, DATABASE_URL: env.DATABASE_URL },
    async newTenant({ balanceUsd, name = 'tenant' } = {}) {
      const project = await core.projects.createProject(name);
      if (balanceUsd !== undefined) {
        await core.projects.grantCredits(project.id, usdToMicros(balanceUsd) - project.balanceMicros);
      }
      const { record, key } = await core.projects.createKey(project.id, 'test');
      return { projectId: project.id, key, keyId: record.id };
    },
    async close() {
      await app.close();
      await assembly.close();
      await dropSchema?.();
    },
  };
}

/** JSON request helper returning status, headers and parsed body. */
export async function call(
  baseUrl: string,
  method: string,
  pathName: string,
  options: { key?: string; body?: unknown; headers?: Record<string, string>; rawBody?: string | Buffer } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers['x-api-key'] = options.key;
  let body: string | Buffer | undefined = options.rawBody;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await fetch(`${baseUrl}${pathName}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* non-JSON bodies stay text */
  }
  return { status: response.status, headers: response.headers, body: parsed };
}
