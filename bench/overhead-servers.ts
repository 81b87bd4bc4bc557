/**
 * The overhead bench's servers, each in its own process as users run them: the mock engine
 * (every answer after a fixed ENGINE_LATENCY_MS, streamed or not), Sluice with the feature
 * set a deployment runs (API key auth, credit holds and settlements, the per-key rate
 * limit, metrics), the bare Fastify + undici proxy of the proxy bench, and Portkey's OSS
 * gateway (`@portkey-ai/gateway`, its published build started as its README says).
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchProcess, freePort, startScript, startSluice, type BenchProcess } from './processes.js';
import { startBareProxy } from './proxy.bench.js';

/** The engine's fixed latency: overhead is a proxy's latency less this. */
export const ENGINE_LATENCY_MS = 60;

/**
 * Answers every chat call after ENGINE_LATENCY_MS: non-streamed, the whole answer then;
 * streamed, the headers and the role chunk at once and the rest then, so a stream's last
 * byte (what the load times) also comes ENGINE_LATENCY_MS after the request.
 */
const MOCK_ENGINE_SOURCE = `
const http = require('node:http');
const latency = Number(process.env.ENGINE_LATENCY_MS);
const answer = JSON.stringify({ id: 'chatcmpl-mock', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, how are you?' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
const chunk = (delta, finish) => 'data: ' + JSON.stringify({ id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1, model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }] }) + '\\n\\n';
const server = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    if (req.url.endsWith('/models')) { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"object":"list","data":[]}'); return; }
    const stream = JSON.parse(Buffer.concat(parts).toString() || '{}').stream === true;
    if (!stream) { setTimeout(() => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(answer); }, latency); return; }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(chunk({ role: 'assistant', content: '' }, null));
    setTimeout(() => {
      res.write(chunk({ content: 'Hello there, how are you?' }, null));
      res.write(chunk({}, 'stop'));
      res.write('data: ' + JSON.stringify({ id: 'chatcmpl-mock', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [],
        usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } }) + '\\n\\n');
      res.end('data: [DONE]\\n\\n');
    }, latency);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.stdout.write('ready ' + server.address().port + '\\n'));
process.on('SIGTERM', () => { server.closeAllConnections(); server.close(() => process.exit(0)); });
`;

/** A server under test: where to send chat calls, with which headers, and its process. */
export interface ServerUnderTest {
  name: string;
  url: string;
  headers: Record<string, string>;
  process: BenchProcess;
}

export function startMockEngine(): Promise<BenchProcess> {
  return startScript('the mock engine', MOCK_ENGINE_SOURCE, { env: { ENGINE_LATENCY_MS: String(ENGINE_LATENCY_MS) } });
}

/**
 * Sluice on SQLite (or PostgreSQL at `databaseUrl`) with a per-key rate limit it never
 * reaches but checks on every call, and a funded key whose calls hold and settle credit.
 * The request log's metadata joins this set when Sluice has one: its switch goes in `env`.
 */
export async function startSluiceUnderTest(engineUrl: string, databaseUrl?: string): Promise<ServerUnderTest> {
  const env: Record<string, string> = { RATE_LIMIT_RPM: '100000000', LOG_LEVEL: 'warn', ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) };
  const server = await startSluice(databaseUrl ? 'overhead-postgres' : 'overhead', env, `models:\n  gpt-oss-120b: { backend: openai, base_url: "${engineUrl}/v1" }\n`);
  const { key } = await server.newTenant(1_000_000);
  return { name: databaseUrl ? 'Sluice (PostgreSQL)' : 'Sluice', url: `${server.baseUrl}/v1/chat/completions`, headers: { 'x-api-key': key }, process: server };
}

export async function startBareUnderTest(engineUrl: string): Promise<ServerUnderTest> {
  const bare = await startBareProxy(engineUrl);
  return { name: 'bare Fastify + undici', url: `${bare.baseUrl}/v1/chat/completions`, headers: {}, process: bare };
}

/**
 * Portkey's gateway from its npm package (`build/start-server.js --port=… --headless`),
 * sent to the mock engine as an OpenAI provider at a custom host. Its package's
 * postinstall (patch-package) finds no patches in the published package, which ships
 * its build alone; the patches in its repository touch its error path and retries
 * (async-retry's third argument, an awaited response in @hono/node-server), which a
 * successful call does not reach. Its streamed calls fail on Node without
 * `portkey-stream-fix.mjs`, preloaded here (see its header); docs/performance.md says so.
 */
export async function startPortkeyUnderTest(engineUrl: string): Promise<ServerUnderTest> {
  const entry = path.join(path.dirname(createRequire(import.meta.url).resolve('@portkey-ai/gateway/package.json')), 'build/start-server.js');
  const port = await freePort();
  const streamFix = fileURLToPath(new URL('portkey-stream-fix.mjs', import.meta.url));
  const child = spawn(process.execPath, ['--import', streamFix, entry, `--port=${port}`, '--headless'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
  const baseUrl = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`Portkey's gateway exited (${child.exitCode}): ${stderr}`);
    if (await fetch(`${baseUrl}/`).then(() => true, () => false)) break;
    if (i > 200) throw new Error(`Portkey's gateway did not answer on ${baseUrl}: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    name: "Portkey's gateway",
    url: `${baseUrl}/v1/chat/completions`,
    headers: { 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${engineUrl}/v1`, authorization: 'Bearer sk-bench' },
    process: benchProcess(child, baseUrl),
  };
}
