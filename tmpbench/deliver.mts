import { mkdtempSync } from 'node:fs';
import pino from 'pino';
import { openDatabase, kyselyQuery, CompiledQueries } from '../src/storage/db/database.ts';
import { migrateToLatest } from '../src/storage/db/migrate.ts';
import { OutboxRepository, outboxInsert } from '../src/storage/db/repositories/outbox.repository.ts';
import { newOutboxEntry } from '../src/domain/outbox/outbox.types.ts';
import { OutboxDeliverer } from '../src/worker/outbox-deliverer.ts';
const db = openDatabase({ kind: 'sqlite', path: mkdtempSync('/tmp/dl-') + '/s.db' });
await migrateToLatest(db);
const cache = new CompiledQueries();
const payload = () => ({ events: ['input_tokens', 'output_tokens'].map((m) => ({ requestId: 'gwreq_' + crypto.randomUUID(), agentId: 'agt_1', service: 'gpt-oss-120b', meter: m, quantity: 12, timestamp: new Date().toISOString(), idempotencyKey: 'gwreq_x:' + m })) });
let body = 0;
const handler = { deliver: async () => {}, deliverMany: async (entries: any[]) => { body += JSON.stringify({ events: entries.flatMap((e) => e.payload.events) }).length; } };
const d = new OutboxDeliverer({ store: new OutboxRepository(db), handlers: new Map([['intermediary', handler]]), clock: { nowMs: () => Date.now() }, logger: pino({ level: 'silent' }), maxAttempts: 5 });
for (let round = 0; round < 8; round++) {
  for (let i = 0; i < 10; i++) db.sync!.transaction([outboxInsert(db.db, Array.from({ length: 10 }, () => newOutboxEntry({ targetKind: 'intermediary', idempotencyKey: 'gwreq_' + crypto.randomUUID(), payload: payload() }, Date.now())), cache)!]);
  const t = performance.now();
  const r = await d.runOnce();
  console.log(`pass of ${r.delivered}: ${((performance.now() - t) * 1000 / r.delivered).toFixed(1)} µs per entry`);
}
await db.close();
process.exit(0);
