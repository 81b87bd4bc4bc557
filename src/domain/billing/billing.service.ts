/**
 * The usage ledger behind every credit meter: prices calls, reads balances for admission
 * (at most one query per project and event-loop turn, balance-reader.ts) and writes usage
 * records with their debits (group-committed, usage-writer.ts). The credit rule itself
 * lives in credit-meter.ts.
 */
import { newId } from '../shared/ids.js';
import { costMicros, type CachedInput, type TokenPrice } from '../shared/money.js';
import type { Clock } from '../shared/clock.js';
import { payerRef, type Principal } from '../identity/caller.js';
import { outboxEntriesOf, type OutboxEntry, type OutboxHandlers, type OutboxIntake, type OutboxMessage } from '../outbox/outbox.types.js';
import type { MeteredCall, SettledUsage } from './meter.js';
import type { UsageRecord } from './usage.types.js';
import { UsageWriter } from './usage-writer.js';
import type { BalancesAfter, UsageStore } from './usage-store.port.js';
import { BalanceReader } from './balance-reader.js';
import type { BalanceStore } from './balance-store.port.js';
import { labelRecord } from './call-tags.js';

export type UsageObserver = (record: UsageRecord) => void;

/** Without a deliverer here, messages are written one entry each. */
const NO_HANDLERS: OutboxHandlers = new Map();

export interface BillingHooks {
  /** Sees every committed record (metrics). */
  observe?: UsageObserver;
  /** This process's outbox deliverer: leases the messages a write makes, and hears of their commit. */
  outbox?: OutboxIntake;
}

export interface UsageWriteOptions {
  /**
   * Settlement messages for third parties (an intermediary's usage report), written in
   * the record's transaction and delivered later by the outbox worker: a meter that
   * reports over the network adds no network wait to the call.
   */
  outbox?: readonly OutboxMessage[];
}

export class BillingService {
  /** Concurrent records share transactions; each is committed before write() resolves. */
  readonly #writer: UsageWriter;
  /** Concurrent credit checks share one balance query per event-loop turn. */
  readonly #balances: BalanceReader;
  #commits = 0;

  constructor(
    balances: BalanceStore,
    usage: UsageStore,
    private readonly priceOf: (model: string) => TokenPrice,
    private readonly clock: Clock,
    private readonly hooks: BillingHooks = {},
  ) {
    this.#balances = new BalanceReader(balances);
    this.#writer = new UsageWriter(usage, {
      entriesOf: (messages) => this.#entriesOf(messages),
      starting: () => this.#balances.generation,
      committed: (entries, balances, started) => this.#committed(entries, balances, started),
    });
  }

  /** The cost of a call; `cached` prices its cached input apart (a hold's worst case leaves it out: the uncached price). */
  costOf(model: string, inputTokens: number, outputTokens: number, cached?: CachedInput): number {
    return costMicros(this.priceOf(model), inputTokens, outputTokens, cached);
  }

  /**
   * How many usage transactions this process has committed: a balance read when this
   * count was n reflects the first n (a write that resolved was committed by then).
   */
  get commits(): number {
    return this.#commits;
  }

  /**
   * The project's balance as of this process's last commit (another replica's debits
   * within a moment, balance-reader.ts); undefined for an unknown project.
   */
  balanceOf(projectId: string): Promise<number | undefined> {
    return this.#balances.read(projectId);
  }

  /** The project's balance changed other than by usage (credit granted): the next read asks the database. */
  balanceChanged(projectId: string): void {
    this.#balances.forget(projectId);
  }

  /** The usage record of a call that ended with `usage`. */
  usageRecord(principal: Principal, call: MeteredCall, usage: SettledUsage): UsageRecord {
    const model = usage.model ?? call.model;
    const record: UsageRecord = {
      id: newId('usage_'),
      projectId: principal.projectId,
      keyId: principal.keyId,
      payer: payerRef(principal.payer),
      model,
      route: call.route,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      costMicros: usage.costMicros ?? this.costOf(model, usage.inputTokens, usage.outputTokens, usage),
      requestId: call.requestId,
      status: usage.status,
      createdAtMs: this.clock.nowMs(),
    };
    if (usage.cachedInputTokens) record.cachedInputTokens = usage.cachedInputTokens;
    if (usage.cacheWriteTokens) record.cacheWriteTokens = usage.cacheWriteTokens;
    if (usage.deployment !== undefined) record.deployment = usage.deployment;
    labelRecord(record, call);
    return record;
  }

  /** Writes the record, its debit (project payers only) and its outbox messages; resolves once committed. */
  async write(record: UsageRecord, options: UsageWriteOptions = {}): Promise<void> {
    await this.#writer.write(record, options.outbox);
    this.hooks.observe?.(record);
  }

  /** A transaction's outbox entries: made by this process's deliverer (combined, leased to it) when there is one. */
  #entriesOf(messages: readonly OutboxMessage[]): OutboxEntry[] {
    const nowMs = this.clock.nowMs();
    return this.hooks.outbox ? this.hooks.outbox.entriesFor(messages, nowMs) : outboxEntriesOf(messages, NO_HANDLERS, nowMs, null);
  }

  #committed(entries: readonly OutboxEntry[], balances: BalancesAfter, started: number): void {
    this.#commits++;
    this.#balances.invalidate(balances, started);
    if (entries.length > 0) this.hooks.outbox?.committed(entries);
  }

  /** Reports records (and whether outbox messages went with them) that a caller wrote in its own transaction (batch lines). */
  committed(records: readonly UsageRecord[], withOutbox = false): void {
    this.#commits++;
    this.#balances.invalidate();
    for (const record of records) this.hooks.observe?.(record);
    if (withOutbox) this.hooks.outbox?.committed([]);
  }
}
