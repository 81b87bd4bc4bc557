/** The stored payer of a usage record or a batch (migration 0006). */
import type { PayerKind, PayerRef } from '../../../domain/identity/payer.types.js';

/**
 * A NULL payer_id is a row written before payers were stored (or by a replica of the
 * previous release): its project paid. The kind is passed on as stored; code that acts
 * on it (the MeterResolver) looks it up in a Map, so an unknown kind is refused there.
 */
export const payerOfRow = (row: { payer_kind: string; payer_id: string | null; project_id: string }): PayerRef => ({
  kind: row.payer_kind as PayerKind,
  id: row.payer_id ?? row.project_id,
});
