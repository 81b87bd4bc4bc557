import autocannon from 'autocannon';
import http from 'node:http';
import { startTestServer } from './test/helpers/harness.js';
const answer = JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
// upstream in a child process to keep it off this loop
import { spawn } from 'node:child_process';
const child = spawn(process.execPath, ['-e', `require('node:http').createServer((q,s)=>{q.resume();q.on('end',()=>{s.writeHead(200,{'content-type':'application/json'});s.end(${JSON.stringify(answer)})})}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})`], { stdio: ['ignore', 'pipe', 'inherit'] });
const port: number = await new Promise((r) => child.stdout!.once('data', (d) => r(Number(String(d).trim()))));
void http;
const sluice = await startTestServer({ env: { RATE_LIMIT_RPM: '1000000000', LOG_LEVEL: 'silent' }, yaml: `models:\n  gpt-oss-120b: { backend: openai, base_url: "http://127.0.0.1:${port}/v1" }\n` });
const { key } = await sluice.newTenant({ balanceUsd: 100000 });
import Fastify from 'fastify';
import { Pool } from 'undici';
let target = `${sluice.baseUrl}/v1/chat/completions`;
if (process.env.BARE) {
  const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 256 });
  const app = Fastify({ logger: false });
  app.post('/v1/chat/completions', async (request, reply) => {
    const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request.body) });
    return reply.code(res.statusCode).type('application/json').send(await res.body.text());
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  target = `http://127.0.0.1:${(app.server.address() as any).port}/v1/chat/completions`;
}
if (process.env.NODB) { (sluice.container.billing as any).record = async (x: any) => x; (sluice.container.billing as any).assertCanSpend = async () => {}; }
const sizes: number[] = []; const times: number[] = [];
{ const u = sluice.container.repositories.usage as any; const one = u.recordAndDebit.bind(u); const many = u.recordAndDebitMany.bind(u);
  u.recordAndDebit = async (r: any) => { sizes.push(1); const t = performance.now(); await one(r); times.push(performance.now() - t); };
  u.recordAndDebitMany = async (r: any) => { sizes.push(r.length); const t = performance.now(); await many(r); times.push(performance.now() - t); }; }
process.on('exit', () => { console.log('batches', sizes.length, 'avg size', sizes.reduce((a, b) => a + b, 0) / sizes.length, 'avg ms', times.reduce((a, b) => a + b, 0) / times.length, 'max ms', Math.max(...times)); });
if (process.env.NOREC) { (sluice.container.billing as any).record = async (x: any) => x; }
import inspector from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
const body = JSON.stringify({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'hi' }] });
await autocannon({ url: target, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body, connections: 32, duration: 2, workers: 1 });
const session = new inspector.Session(); session.connect();
if (process.env.PROFILE) { await session.post('Profiler.enable'); await session.post('Profiler.start'); }
const elu0 = performance.eventLoopUtilization();
const r = await autocannon({ url: target, method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'hi' }] }), connections: 32, duration: 5, workers: 1 });
const elu = performance.eventLoopUtilization(elu0);
console.log('rps', r.requests.average, 'non2xx', r.non2xx, 'lat', r.latency.average, 'active µs/req', (elu.active * 1000 / r.requests.total).toFixed(0), 'util', elu.utilization.toFixed(2));
if (process.env.PROFILE) { const { profile } = await session.post('Profiler.stop');
writeFileSync('/tmp/prof-inference/steady.cpuprofile', JSON.stringify(profile)); }
await sluice.close();
child.kill();
