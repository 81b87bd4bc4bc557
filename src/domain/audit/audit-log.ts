/**
 * The audit log: every change to keys, projects, credit, users and members, and every
 * console sign-in, with who made it, from where and when. Entries are only appended;
 * nothing edits or deletes them. A change's detail never holds a secret: fields whose
 * name says they hold one are dropped before it is stored.
 */
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import type { Page } from '../shared/pagination.js';
import type { Actor, AuditChange, AuditEntry, AuditFilter, AuditStore } from './audit.types.js';

const SECRET_FIELD = /key$|secret|token|password|hash|credential|verifier|code$/i;

/** A copy of `detail` without secret-named fields, at any depth. */
export function withoutSecrets(detail: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(detail)) {
    if (SECRET_FIELD.test(name)) continue;
    kept[name] = value !== null && typeof value === 'object' && !Array.isArray(value) ? withoutSecrets(value as Record<string, unknown>) : value;
  }
  return kept;
}

/** What other parts call to record a change: the lead's key update and rotation, budgets, policies. */
export interface AuditRecorder {
  record(actor: Actor, change: AuditChange): Promise<void>;
}

export class AuditLog implements AuditRecorder {
  constructor(private readonly deps: { store: AuditStore; clock: Clock }) {}

  async record(actor: Actor, change: AuditChange): Promise<void> {
    const nowMs = this.deps.clock.nowMs();
    await this.deps.store.append({ ...change, detail: withoutSecrets(change.detail), id: newId('audit_'), createdAtMs: nowMs, actor });
  }

  list(filter: AuditFilter, limit: number, after?: string): Promise<Page<AuditEntry>> {
    return this.deps.store.list(filter, limit, after);
  }

  /** Every entry the filter selects, newest first, a page at a time (for the export). */
  async *entries(filter: AuditFilter, pageSize = 500): AsyncGenerator<AuditEntry> {
    let after: string | undefined;
    for (;;) {
      const page = await this.deps.store.list(filter, pageSize, after);
      yield* page.items;
      if (!page.hasMore || page.items.length === 0) return;
      after = page.items[page.items.length - 1]!.id;
    }
  }
}
