import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';
const answer = JSON.stringify({ id: 'x', object: 'chat.completion', created: 1, model: 'm', choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 } });
const up = spawn(process.execPath, ['-e', `require('node:http').createServer((q,s)=>{q.resume();q.on('end',()=>{s.writeHead(200,{'content-type':'application/json'});s.end(${JSON.stringify(answer)})})}).listen(0,'127.0.0.1',function(){console.log(this.address().port)})`], { stdio: ['ignore', 'pipe', 'inherit'] });
const upPort = await new Promise<number>((r) => up.stdout!.once('data', (d) => r(Number(String(d).trim()))));
const cpu = (pid: number) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' '); return (Number(f[11]) + Number(f[12])) * 10; };
const body = JSON.stringify({ model: 'gpt-oss-120b', messages: [{ role: 'user', content: 'hi' }] });
for (const mode of process.argv.slice(2)) {
  const srv = spawn(process.execPath, [...(process.env.PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof-inference'] : []), '--import', 'tsx', '.bench-tmp-server.ts', mode, String(upPort)], { stdio: ['pipe', 'pipe', 'inherit'] });
  const { url, key } = await new Promise<any>((r) => srv.stdout!.once('data', (d) => r(JSON.parse(String(d)))));
  const get = process.env.GET === '1';
  const opts = get ? { url: `${url}/v1/models`, method: 'GET' as const, headers: { 'x-api-key': key }, connections: 32 } : { url: `${url}/v1/chat/completions`, method: 'POST' as const, headers: { 'content-type': 'application/json', 'x-api-key': key }, body, connections: 32 };
  await autocannon({ ...opts, amount: 3000 });
  if (process.env.PROF2) srv.stdin!.write('start\n');
  const c0 = cpu(srv.pid!); const t0 = Date.now();
  const r = await autocannon({ ...opts, amount: 20000 });
  const c1 = cpu(srv.pid!);
  console.log(mode.padEnd(6), 'µs cpu/req', ((c1 - c0) * 1000 / r.requests.total).toFixed(0), 'rps', (r.requests.total / ((Date.now() - t0) / 1000)).toFixed(0), 'non2xx', r.non2xx);
  if (process.env.PROF2) { srv.stdin!.write('stop\n'); await new Promise((r) => srv.stdout!.once('data', r)); }
  srv.kill('SIGINT'); await new Promise((r) => srv.once('exit', r));
}
up.kill();
