import { mkdtempSync } from 'node:fs';
import { openDatabase, CompiledQueries } from '../src/storage/db/database.ts';
import { migrateToLatest } from '../src/storage/db/migrate.ts';
import { OutboxRepository, outboxInsert } from '../src/storage/db/repositories/outbox.repository.ts';
import { newOutboxEntry } from '../src/domain/outbox/outbox.types.ts';
const db = openDatabase({ kind: 'sqlite', path: mkdtempSync('/tmp/dl-') + '/s.db' });
await migrateToLatest(db);
const cache = new CompiledQueries();
const repo = new OutboxRepository(db);
const payload = () => ({ events: ['input_tokens', 'output_tokens'].map((m) => ({ requestId: 'gwreq_' + crypto.randomUUID(), agentId: 'agt_1', service: 'gpt-oss-120b', meter: m, quantity: 12, timestamp: new Date().toISOString(), idempotencyKey: 'gwreq_x:' + m })) });
for (let round = 0; round < 8; round++) {
  for (let i = 0; i < 10; i++) db.sync!.transaction([outboxInsert(db.db, Array.from({ length: 10 }, () => newOutboxEntry({ targetKind: 'intermediary', idempotencyKey: 'gwreq_' + crypto.randomUUID(), payload: payload() }, Date.now())), cache)!]);
  let t = performance.now();
  const claimed = await repo.claimDue('me', Date.now(), 60000, 100);
  const c = performance.now() - t; t = performance.now();
  const s = JSON.stringify({ events: claimed.flatMap((e: any) => e.payload.events) }).length;
  const j = performance.now() - t; t = performance.now();
  await repo.markDeliveredMany(claimed.map((e) => e.id), 'me', Date.now());
  const m = performance.now() - t;
  const per = (x: number) => (x * 1000 / claimed.length).toFixed(1);
  console.log(`n=${claimed.length} claim ${per(c)} stringify ${per(j)} mark ${per(m)} µs/entry`);
}
await db.close();
process.exit(0);
