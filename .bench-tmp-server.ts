import Fastify from 'fastify';
import { Pool } from 'undici';
import { startTestServer } from './test/helpers/harness.js';
const [mode, upstreamPort] = process.argv.slice(2);
if (mode === 'bare') {
  const pool = new Pool(`http://127.0.0.1:${upstreamPort}`, { connections: 256 });
  const app = Fastify({ logger: false });
  app.get('/v1/models', async () => ({ object: 'list', data: [{ id: 'gpt-oss-120b', object: 'model', created: 1, owned_by: 'sluice' }] }));
  app.post('/v1/chat/completions', async (request, reply) => {
    const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request.body) });
    return reply.code(res.statusCode).type('application/json').send(await res.body.text());
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  console.log(JSON.stringify({ url: `http://127.0.0.1:${(app.server.address() as any).port}`, key: 'x' }));
} else {
  const sluice = await startTestServer({ env: { RATE_LIMIT_RPM: '1000000000', LOG_LEVEL: 'silent' }, yaml: `models:\n  gpt-oss-120b: { backend: openai, base_url: "http://127.0.0.1:${upstreamPort}/v1" }\n` });
  const { key } = await sluice.newTenant({ balanceUsd: 100000 });
  if (mode === 'nodb') { (sluice.container.billing as any).record = async (x: any) => x; (sluice.container.billing as any).assertCanSpend = async () => {}; }
  if (mode === 'norec') { (sluice.container.billing as any).record = async (x: any) => x; }
  console.log(JSON.stringify({ url: sluice.baseUrl, key }));
}
process.on('SIGINT', () => process.exit(0));
import inspector from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
const session = new inspector.Session();
session.connect();
process.stdin.setEncoding('utf8');
process.stdin.on('data', async (line: string) => {
  if (line.startsWith('start')) { await session.post('Profiler.enable'); await session.post('Profiler.start'); }
  if (line.startsWith('stop')) { const { profile } = await session.post('Profiler.stop'); writeFileSync(`/tmp/prof-inference/${mode}.cpuprofile`, JSON.stringify(profile)); console.log('written'); }
});
