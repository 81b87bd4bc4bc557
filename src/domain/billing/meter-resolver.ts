/**
 * Who pays for a batch line decides how it is metered. A batch stores its creator's
 * payer; each of its lines gets a LineMeter from the factory registered for that payer's
 * kind (project credit for `project`; a feature that lets another kind create batches
 * registers its own). The line's usage records, and any settlement messages its meter
 * enqueues, are written in the transaction that records the line's result.
 */
import { AppError } from '../shared/errors.js';
import type { PayerKind, PayerRef } from '../identity/payer.types.js';
import type { OutboxMessage } from '../outbox/outbox.types.js';
import type { Meter } from './meter.js';
import type { UsageRecord } from './usage.types.js';

/** The meter of one batch line: settling collects instead of writing. */
export interface LineMeter extends Meter {
  /** Usage records of the line's settled calls, to write with its result. */
  readonly records: readonly UsageRecord[];
  /** Settlement messages of those calls, to write in the same transaction. */
  readonly outbox: readonly OutboxMessage[];
  /** The collected writes were committed (or never will be): release whatever admission held. */
  finish(): void;
}

export type LineMeterFactory = (payer: PayerRef) => LineMeter;

export class MeterResolver {
  readonly #factories: Map<PayerKind, LineMeterFactory>;

  constructor(factories: Iterable<readonly [PayerKind, LineMeterFactory]> = []) {
    this.#factories = new Map(factories);
  }

  /** Lines of batches paid by a `kind` payer get meters from `factory` (the composition root registers them). */
  register(kind: PayerKind, factory: LineMeterFactory): void {
    this.#factories.set(kind, factory);
  }

  /** Whether a factory serves payers of `kind` (work run later on their behalf can be metered). */
  serves(kind: PayerKind): boolean {
    return this.#factories.has(kind);
  }

  /** The meter for a line paid by `payer`; an `internal` AppError when no factory serves its kind. */
  lineMeter(payer: PayerRef): LineMeter {
    const factory = this.#factories.get(payer.kind);
    if (!factory) {
      throw new AppError('internal', `No meter is registered for batch lines paid by a payer of kind "${payer.kind}"`, { expose: true });
    }
    return factory(payer);
  }
}
