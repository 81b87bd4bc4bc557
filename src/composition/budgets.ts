/**
 * Composition of key budgets: the ledger that keeps them (shared by replicas through
 * Redis when REDIS_URL is set, else in this process's memory), and the meter of calls by
 * API keys, which holds a key's budget beside its project's credit.
 */
import type { Config } from '../config/schema.js';
import type { CreditMeter } from '../domain/billing/credit-meter.js';
import { KeyBudgetMeter } from '../domain/billing/key-budget-meter.js';
import { KeyBudgets } from '../domain/billing/key-budgets.js';
import { LocalBudgetLedger } from '../domain/billing/local-budget-ledger.js';
import type { BillingService } from '../domain/billing/billing.service.js';
import type { Clock } from '../domain/shared/clock.js';
import type { Database } from '../storage/db/database.js';
import { KeySpendRepository } from '../storage/db/repositories/key-spend.repository.js';
import { RedisBudgetLedger } from '../storage/budget/redis-budget-ledger.js';

export interface BudgetsDeps {
  config: Readonly<Config>;
  database: Database;
  clock: Clock;
  billing: BillingService;
  creditMeter: CreditMeter;
}

export function createKeyBudgets(deps: BudgetsDeps): { keyMeter: KeyBudgetMeter; close(): Promise<void> } {
  const { config } = deps;
  const spends = new KeySpendRepository(deps.database);
  const local = new LocalBudgetLedger(spends);
  const shared = config.redisUrl
    ? new RedisBudgetLedger(config.redisUrl, { prefix: config.budgets.redisPrefix, holdTtlMs: config.budgets.holdTtlMs, spends, fallback: local })
    : null;
  const budgets = new KeyBudgets(shared ?? local, (model, input, output) => deps.billing.costOf(model, input, output), deps.clock, config.billing);
  return {
    keyMeter: new KeyBudgetMeter(deps.creditMeter, budgets),
    close: async () => shared?.close(),
  };
}
