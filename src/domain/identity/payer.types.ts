/**
 * The payer's types, for stores and adapters that need only them: the kinds themselves are
 * registered in caller.ts (PayerKinds), where features add theirs.
 */
export type { Payer, PayerKind, PayerRef } from './caller.js';
