import { openDatabase } from '/work/main/src/storage/db/database.ts';
import { migrateToLatest } from '/work/main/src/storage/db/migrate.ts';
import { OutboxRepository, outboxInsert } from '/work/main/src/storage/db/repositories/outbox.repository.ts';
import { kyselyQuery } from '/work/main/src/storage/db/database.ts';
import { newOutboxEntry } from '/work/main/src/domain/outbox/outbox.types.ts';
import { mkdtempSync } from 'node:fs';
const db = openDatabase({ kind: 'sqlite', path: mkdtempSync('/tmp/claim-') + '/s.db' });
await migrateToLatest(db);
const repo = new OutboxRepository(db);
const payload = { events: [1, 2].map((i) => ({ requestId: 'gwreq_' + crypto.randomUUID(), agentId: 'agt_1', service: 'gpt-oss-120b', meter: i === 1 ? 'input_tokens' : 'output_tokens', quantity: 12, timestamp: new Date().toISOString(), idempotencyKey: 'k:' + i })) };
let now = Date.now();
for (let round = 0; round < 6; round++) {
  const N = 100;
  let t = performance.now();
  for (let i = 0; i < N; i++) await db.db.executeQuery(kyselyQuery(outboxInsert(db.db, [newOutboxEntry({ targetKind: 'intermediary', idempotencyKey: crypto.randomUUID(), payload }, now)])!));
  const ins = (performance.now() - t) * 1000 / N;
  t = performance.now();
  const claimed = await repo.claimDue('me', now + 1, 60000, 100);
  const claim = (performance.now() - t) * 1000;
  t = performance.now();
  await repo.markDeliveredMany(claimed.map((e) => e.id), 'me', now + 2);
  const mark = (performance.now() - t) * 1000;
  console.log(`insert ${ins.toFixed(0)} µs each; claim ${claimed.length} ${claim.toFixed(0)} µs; mark ${mark.toFixed(0)} µs`);
}
console.log(db.sync ? 'sync' : 'nosync');
const plan = await db.db.selectFrom('outbox').select('id').where('state','=','pending').where('next_attempt_at','<=',now).where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)])).orderBy('next_attempt_at').limit(200).compile();
const { sql } = await import('kysely');
console.log(await db.db.executeQuery(kyselyQuery({ sql: 'EXPLAIN QUERY PLAN ' + plan.sql, parameters: plan.parameters })).then(r => r.rows));
