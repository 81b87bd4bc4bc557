/** The account a call's cost is charged to. */
export type Payer =
  | { kind: 'project'; projectId: string }
  | { kind: 'intermediary'; intermediaryId: string }
  | { kind: 'agent'; agentId: string }
  | { kind: 'receipt'; receiptId: string };

export type PayerKind = Payer['kind'];

/** A payer as stored: its kind and the id of the account of that kind. */
export interface PayerRef {
  kind: PayerKind;
  id: string;
}
