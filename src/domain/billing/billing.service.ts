/**
 * Credits and metering.
 *
 * The credit rule: a billable call is admitted only while its project's balance is
 * above zero, checked before any work; when the call ends, its usage record is written
 * and its cost debited in one transaction, unconditionally. A balance can therefore go
 * below zero only by the cost of calls that were already admitted (in flight) when it
 * crossed zero, never by more; the next call after that is refused.
 */
import { newId } from '../shared/ids.js';
import { insufficientQuota } from '../shared/errors.js';
import { costMicros, type TokenPrice } from '../shared/money.js';
import type { Clock } from '../shared/clock.js';
import type { Principal } from '../auth/authenticator.js';
import type { ProjectsRepository } from '../../storage/db/repositories/projects.repository.js';
import type { UsageRepository, UsageRecord } from '../../storage/db/repositories/usage.repository.js';
import { UsageWriter } from './usage-writer.js';
import { BalanceReader } from './balance-reader.js';

export interface UsageInput {
  principal: Principal;
  model: string;
  route: string;
  inputTokens: number;
  outputTokens: number;
  requestId: string;
  status: number;
  /** Overrides the model's price (e.g. audio billed per second). */
  costMicros?: number;
}

export type UsageObserver = (record: UsageRecord) => void;

export class BillingService {
  /** Concurrent records share transactions; each is committed before record() resolves. */
  readonly #writer: UsageWriter;
  /** Concurrent credit checks share one balance query per event-loop turn. */
  readonly #balances: BalanceReader;

  constructor(
    private readonly projects: ProjectsRepository,
    private readonly usage: UsageRepository,
    private readonly priceOf: (model: string) => TokenPrice,
    private readonly clock: Clock,
    private readonly observe: UsageObserver = () => {},
  ) {
    this.#balances = new BalanceReader(projects);
    this.#writer = new UsageWriter(usage, () => this.#balances.invalidate());
  }

  /** Throws `insufficient_quota` when the project has no balance left. */
  async assertCanSpend(projectId: string): Promise<void> {
    const balance = await this.#balances.read(projectId);
    if (balance === undefined || balance <= 0) throw insufficientQuota();
  }

  /**
   * Writes the call's usage record and debit, or, given `sink`, only pushes the record
   * there: the caller writes it in its own transaction (the batch runner writes a line's
   * usage with the line's result, so a line is billed once or not at all) and then calls
   * committed().
   */
  async record(input: UsageInput, sink?: UsageRecord[]): Promise<UsageRecord> {
    const record: UsageRecord = {
      id: newId('usage_'),
      projectId: input.principal.projectId,
      keyId: input.principal.keyId,
      model: input.model,
      route: input.route,
      inputTokens: input.inputTokens,
      outputTokens: input.outputTokens,
      costMicros: input.costMicros ?? costMicros(this.priceOf(input.model), input.inputTokens, input.outputTokens),
      requestId: input.requestId,
      status: input.status,
      createdAtMs: this.clock.nowMs(),
    };
    if (sink) {
      sink.push(record);
      return record;
    }
    await this.#writer.write(record);
    this.observe(record);
    return record;
  }

  /** Reports records that a caller given a sink has written. */
  committed(records: readonly UsageRecord[]): void {
    this.#balances.invalidate();
    for (const record of records) this.observe(record);
  }
}
