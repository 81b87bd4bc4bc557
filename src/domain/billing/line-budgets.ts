/**
 * The budget of the key a batch line runs for. A line's principal is rebuilt from its
 * batch (the creating key, not a presented secret), so it carries no policy: the key's
 * budget is looked up by id, and kept for the key cache's TTL (a change to the key's
 * budget reaches running batches within it, as it reaches keys on every replica).
 */
import type { ApiKeyStore } from '../identity/api-key.types.js';
import type { KeyBudget } from '../identity/key-policy.types.js';
import type { Clock } from '../shared/clock.js';

interface Known {
  budget: KeyBudget | undefined;
  atMs: number;
}

export class LineBudgets {
  readonly #known = new Map<string, Known>();

  constructor(
    private readonly keys: Pick<ApiKeyStore, 'findById'>,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  async budgetOf(keyId: string): Promise<KeyBudget | undefined> {
    const nowMs = this.clock.nowMs();
    const known = this.#known.get(keyId);
    if (known && nowMs - known.atMs < this.ttlMs) return known.budget;
    const budget = (await this.keys.findById(keyId))?.policy?.budget;
    // Expired entries go as they are replaced; a worker serves few keys at once.
    if (this.#known.size > 10_000) this.#known.clear();
    this.#known.set(keyId, { budget, atMs: nowMs });
    return budget;
  }
}
