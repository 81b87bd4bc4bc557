/** The MeterResolver (a batch line's meter by its batch's payer), the line's principal, and the credit meter's payer guard. */
import { describe, expect, it } from 'vitest';
import { MeterResolver, type LineMeter } from '../../src/domain/billing/meter-resolver.js';
import { BillingService } from '../../src/domain/billing/billing.service.js';
import { CreditMeter, CollectingMeter } from '../../src/domain/billing/credit-meter.js';
import { ReservationBook } from '../../src/domain/billing/reservations.js';
import type { PayerRef } from '../../src/domain/identity/payer.types.js';
import type { Principal } from '../../src/domain/identity/caller.js';
import { AppError } from '../../src/domain/shared/errors.js';
import { linePrincipal } from '../../src/worker/line-executor.js';
import type { BatchRunInfo } from '../../src/domain/batches/batch.types.js';

/** Stores the guard must never reach. */
const unreachable = () => {
  throw new Error('the store was reached');
};
const billing = new BillingService(
  { balancesOf: unreachable, balanceNow: unreachable },
  { recordAndDebit: unreachable, recordAndDebitMany: unreachable },
  () => ({ inputPerMillionUsd: 1, outputPerMillionUsd: 1 }),
  { nowMs: () => 0 },
);
const credit = new CreditMeter(billing, new ReservationBook());

const toyLineMeter = (payer: PayerRef): LineMeter & { payer: PayerRef } => ({
  payer,
  records: [],
  outbox: [],
  admit: () => ({ settle: async () => ({ record: null, headers: null }), release: () => {} }),
  finish: () => {},
});

const run = (payer: PayerRef): BatchRunInfo => ({
  id: 'batch_1', projectId: 'proj_1', createdByKeyId: 'key_1', payer, endpoint: '/v1/chat/completions', inputFileId: 'file-1', inputBlobKey: 'files/1',
  status: 'in_progress', expiresAtMs: 1, traceParent: null,
});

describe('MeterResolver', () => {
  const resolver = new MeterResolver([['project', () => credit.collecting()]]);
  resolver.register('intermediary', toyLineMeter);

  it('gives a project batch a collecting credit meter, and an intermediary batch the meter registered for intermediaries', () => {
    expect(resolver.lineMeter({ kind: 'project', id: 'proj_1' })).toBeInstanceOf(CollectingMeter);
    const meter = resolver.lineMeter({ kind: 'intermediary', id: 'int_1' }) as ReturnType<typeof toyLineMeter>;
    expect(meter.payer).toEqual({ kind: 'intermediary', id: 'int_1' });
    // A fresh meter per line.
    expect(resolver.lineMeter({ kind: 'intermediary', id: 'int_1' })).not.toBe(meter);
  });

  it('refuses a kind nobody registered (or a stored kind it does not know) with an internal error that says which', () => {
    for (const kind of ['agent', 'storefront', '__proto__', 'constructor']) {
      let error: unknown;
      try {
        resolver.lineMeter({ kind, id: 'x' } as PayerRef);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ kind: 'internal', message: `No meter is registered for batch lines paid by a payer of kind "${kind}"` });
    }
  });
});

describe('a batch line runs as its batch', () => {
  it('its principal is the batch project, the creating key and the batch payer', () => {
    expect(linePrincipal(run({ kind: 'intermediary', id: 'int_1' }))).toEqual({
      kind: 'batch_line', projectId: 'proj_1', keyId: 'key_1', subject: null, payer: { kind: 'intermediary', intermediaryId: 'int_1' },
    });
    expect(linePrincipal(run({ kind: 'project', id: 'proj_1' })).payer).toEqual({ kind: 'project', projectId: 'proj_1' });
  });
});

describe('the credit meter', () => {
  it('refuses a payer other than a project as a programming error, before reading any balance', async () => {
    const principal: Principal = { kind: 'gateway_agent', projectId: 'proj_1', keyId: null, subject: 'a', payer: { kind: 'intermediary', intermediaryId: 'int_1' } };
    const call = { model: 'm', route: 'r', requestId: 'req_1', inputTokens: 1, maxOutputTokens: 1 };
    await expect(credit.admit(principal, call)).rejects.toMatchObject({
      kind: 'internal',
      message: 'the credit meter charges project payers only, and was given a payer of kind "intermediary"',
    });
    await expect(credit.collecting().admit(principal, call)).rejects.toMatchObject({ kind: 'internal' });
  });
});
