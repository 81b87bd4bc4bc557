import { spawn } from 'node:child_process';
import { Pool } from 'undici';
import { startTestServer } from './test/helpers/harness.js';
const answer = JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
const up = spawn(process.execPath, ['-e', `require('node:http').createServer((q,s)=>{q.resume();q.on('end',()=>{s.writeHead(200,{'content-type':'application/json'});s.end(${JSON.stringify(answer)})})}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})`], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise<number>((r) => up.stdout!.once('data', (d) => r(Number(String(d).trim()))));
const sluice = await startTestServer({ env: { LOG_LEVEL: 'silent' }, yaml: `models:\n  gpt-oss-120b: { backend: openai, base_url: "http://127.0.0.1:${port}/v1" }\n` });
const t = await sluice.newTenant({ balanceUsd: 100000 });
const principal = { projectId: t.projectId, keyId: t.keyId };
const body = { model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'hi' }] };
const pool = new Pool(`http://127.0.0.1:${port}`, { connections: 256 });
const modes: Record<string, () => Promise<unknown>> = {
  raw: async () => { const r = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }); return r.body.json(); },
  service: () => sluice.container.inference.chatCompletions.create(principal, body, { requestId: 'req_x', signal: new AbortController().signal }),
};
if (process.env.NODB) { (sluice.container.billing as any).record = async (x: any) => x; (sluice.container.billing as any).assertCanSpend = async () => {}; }
if (process.env.NOBACKEND) {
  const reg = sluice.container.registry as any; const orig = reg.backendFor.bind(reg);
  const fake = { kind: 'openai', chat: async () => ({ content: 'Hello there', reasoning: null, finishReason: 'stop', usage: { inputTokens: 12, outputTokens: 7 } }) };
  reg.backendFor = async (m: any, c: any) => { await orig(m, c); return fake; };
}
if (process.env.NOCLIENTPARSE) {
  const reg = sluice.container.registry as any; const orig = reg.backendFor.bind(reg);
  reg.backendFor = async (m: any, c: any) => { await orig(m, c); return { kind: 'openai', chat: async (p: any) => { const r = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...p.sampling, model: 'x', messages: p.messages }), signal: p.signal }); const b: any = await r.body.json(); return { content: b.choices[0].message.content, reasoning: null, finishReason: 'stop', usage: { inputTokens: 12, outputTokens: 7 } }; } }; };
}
for (const name of process.argv.slice(2)) {
  const fn = modes[name]!;
  for (let round = 0; round < 2; round++) {
    const N = 20000; let done = 0;
    const c0 = process.cpuUsage();
    await Promise.all(Array.from({ length: 32 }, async () => { while (done < N) { done++; await fn(); } }));
    const c = process.cpuUsage(c0);
    if (round) console.log(name.padEnd(8), 'µs cpu/call', ((c.user + c.system) / N).toFixed(1));
  }
}
await sluice.close(); await pool.close(); up.kill();
