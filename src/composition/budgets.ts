/**
 * Composition of key budgets and tokens per minute: the ledger that keeps budgets and the
 * counters of keys' tokens per minute (shared by replicas through Redis when REDIS_URL is
 * set, else in this process's memory), and the meter of calls by API keys, which checks
 * a key's tpm, then holds its budget beside its project's credit.
 */
import type { Config } from '../config/schema.js';
import type { CreditMeter } from '../domain/billing/credit-meter.js';
import { KeyBudgetMeter } from '../domain/billing/key-budget-meter.js';
import { KeyTokenRates } from '../domain/billing/key-token-rates.js';
import { LocalTokenWindows } from '../domain/billing/local-token-windows.js';
import { TokenRateMeter } from '../domain/billing/token-rate-meter.js';
import { KeyBudgets } from '../domain/billing/key-budgets.js';
import { LocalBudgetLedger } from '../domain/billing/local-budget-ledger.js';
import type { BillingService } from '../domain/billing/billing.service.js';
import type { Clock } from '../domain/shared/clock.js';
import type { TokenWindows } from '../domain/billing/token-windows.port.js';
import type { Database } from '../storage/db/database.js';
import { KeySpendRepository } from '../storage/db/repositories/key-spend.repository.js';
import { RedisBudgetLedger } from '../storage/budget/redis-budget-ledger.js';
import { RedisTokenWindows } from '../storage/rate-limit/redis-token-windows.js';

export interface BudgetsDeps {
  config: Readonly<Config>;
  database: Database;
  clock: Clock;
  billing: BillingService;
  creditMeter: CreditMeter;
}

export function createKeyBudgets(deps: BudgetsDeps): { keyMeter: TokenRateMeter; close(): Promise<void> } {
  const { config } = deps;
  const spends = new KeySpendRepository(deps.database);
  const local = new LocalBudgetLedger(spends);
  const shared = config.redisUrl
    ? new RedisBudgetLedger(config.redisUrl, { prefix: config.budgets.redisPrefix, holdTtlMs: config.budgets.holdTtlMs, spends, fallback: local })
    : null;
  const budgets = new KeyBudgets(shared ?? local, (model, input, output) => deps.billing.costOf(model, input, output), deps.clock, config.billing);
  const tokens = createTokenWindows(config, deps.clock);
  const rates = new KeyTokenRates(tokens.windows, deps.clock, config.billing);
  const overheads = deps.creditMeter.overheads;
  return {
    keyMeter: new TokenRateMeter(new KeyBudgetMeter(deps.creditMeter, budgets), rates, (call) => overheads.estimateOf(call)),
    close: async () => {
      await shared?.close();
      await tokens.close();
    },
  };
}

/** Keys' tokens per minute: counted in Redis beside the rate limiter's counters when REDIS_URL is set, else in memory. */
function createTokenWindows(config: Readonly<Config>, clock: Clock): { windows: TokenWindows; close(): Promise<void> } {
  const local = new LocalTokenWindows(() => clock.nowMs());
  const shared = config.redisUrl ? new RedisTokenWindows(config.redisUrl, { prefix: config.rateLimit.redisPrefix, fallback: local }) : null;
  return {
    windows: shared ?? local,
    close: async () => {
      local.close();
      await shared?.close();
    },
  };
}
