/**
 * The tables as Kysely sees them: one interface per table, named as the migrations
 * (src/storage/db/migrations) create them.
 */
import type { Generated } from 'kysely';

export interface ProjectsTable {
  id: string;
  name: string;
  balance_micros: number;
  created_at: number;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
  /** The key's policy (migration 0016); NULL: not set. `models`, `metadata`, `tags` are JSON. */
  models: string | null;
  budget_limit_micros: number | null;
  budget_window: string | null;
  rpm: number | null;
  tpm: number | null;
  expires_at: number | null;
  metadata: string | null;
  tags: string | null;
  /** The secret a rotation replaced, valid until `previous_valid_until` (epoch ms). */
  previous_key_hash: string | null;
  previous_valid_until: number | null;
}

export interface UsageRecordsTable {
  id: string;
  project_id: string;
  key_id: string | null;
  /** Who paid (migration 0006; defaults to `project`); NULL payer_id: the project (a row from before it). */
  payer_kind: Generated<string>;
  payer_id: string | null;
  model: string;
  route: string;
  input_tokens: number;
  output_tokens: number;
  cost_micros: number;
  request_id: string;
  status: number;
  created_at: number;
  /** The deployment that served the call (migration 0011); NULL for in-process models. */
  deployment: string | null;
  /** The coding agent's session (X-Claude-Code-Session-Id, migration 0014); NULL without one. */
  session_id: string | null;
  /** Of input_tokens, those read from / written to the engine's prompt cache (migration 0015). */
  cached_input_tokens: Generated<number>;
  cache_write_tokens: Generated<number>;
  /** The call's tags, comma-joined (migration 0018); NULL without any. */
  tags: string | null;
  /** The end user the client named (migration 0018); NULL without one. */
  end_user: string | null;
}

/** One row per usage record and tag, with the record's time and sums (migration 0018): the spend report by tag. */
export interface UsageTagsTable {
  project_id: string;
  created_at: number;
  tag: string;
  usage_id: string;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  cost_micros: number;
}

/** A day's sums of one project's usage per key, model, tag or end user (migration 0022): the spend report's rollups. */
export interface UsageRollupsTable {
  dimension: string;
  project_id: string;
  day: number;
  /** The key id, model, tag or end user; '' for calls made with no key or naming no end user. */
  label: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  cost_micros: number;
}

/** One row (id 1): the start of the first UTC day not rolled up yet (migration 0022). */
export interface UsageRollupStateTable {
  id: number;
  rolled_until: number;
}

/** Uploads and batch outputs (migration 0002). `deleted_at` is the soft delete. */
export interface FilesTable {
  id: string;
  project_id: string;
  purpose: string;
  filename: string;
  bytes: number;
  blob_key: string;
  is_error: number;
  status: string;
  batch_id: string | null;
  created_at: number;
  expires_at: number | null;
  deleted_at: number | null;
  /** The blob of this deleted or expired record is gone (migration 0003). */
  purged_at: number | null;
}

/** Batches; `input_blob_key` lets a batch outlive its soft-deleted input record. */
export interface BatchesTable {
  id: string;
  project_id: string;
  created_by_key_id: string | null;
  endpoint: string;
  input_file_id: string;
  input_blob_key: string | null;
  completion_window: string;
  status: string;
  metadata: string;
  errors: string | null;
  total_lines: number;
  completed_lines: number;
  failed_lines: number;
  shards_total: number;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  expires_at: number;
  in_progress_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  /** Refreshed while the creating request validates the input (migration 0003). */
  validation_heartbeat_at: number | null;
  /** W3C traceparent of the creating request, when tracing was on (migration 0005). */
  trace_parent: string | null;
  /** Who pays for the batch's lines (migration 0006; defaults to `project`); NULL payer_id: the project. */
  payer_kind: Generated<string>;
  payer_id: string | null;
  /** The model the lines name (migration 0012). */
  model: string | null;
  /** `output_expires_after.seconds` (migration 0012); NULL: the files' default retention. */
  output_expires_after: number | null;
  /** Usage summed over the lines, written when the batch ends (migration 0012). */
  input_tokens: Generated<number>;
  cached_tokens: Generated<number>;
  output_tokens: Generated<number>;
  reasoning_tokens: Generated<number>;
}

/** A leased unit of batch work: the input lines in bytes [start_byte, end_byte). */
export interface BatchShardsTable {
  id: string;
  batch_id: string;
  shard_no: number;
  first_line: number;
  last_line: number;
  start_byte: number;
  end_byte: number;
  line_count: number;
  state: string;
  lease_owner: string | null;
  lease_expires_at: number | null;
  claims: number;
}

/** One row per finished batch line, keyed (batch_id, line_no): the exactly-once record. */
export interface BatchLineResultsTable {
  batch_id: string;
  line_no: number;
  ok: number;
  error_code: string | null;
  line_json: string;
  created_at: number;
  /** What the line's call used (migration 0012). */
  input_tokens: Generated<number>;
  cached_tokens: Generated<number>;
  output_tokens: Generated<number>;
  reasoning_tokens: Generated<number>;
}

/** Console sign-in sessions (migration 0009); the id itself is never stored. */
export interface ConsoleSessionsTable {
  id_hash: string;
  role: string;
  project_id: string | null;
  key_id: string | null;
  created_at: number;
  expires_at: number;
  /** The user's session (migration 0017); NULL for the admin token's or an API key's. */
  user_id: string | null;
}

/** Credit given or taken by an operator, with its reason (migration 0009). */
export interface CreditGrantsTable {
  id: string;
  project_id: string;
  amount_micros: number;
  reason: string | null;
  created_at: number;
}

/** The settlement outbox (migration 0007); payload is JSON text. */
export interface OutboxTable {
  id: string;
  target_kind: string;
  idempotency_key: string;
  payload: string;
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_expires_at: number | null;
  last_error: string | null;
  created_at: number;
  delivered_at: number | null;
}

/** Storefront credit of an agent or a receipt (migration 0008); rebuilt from the ledger. */
export interface StorefrontAccountsTable {
  seller_id: string;
  holder_kind: string;
  holder_id: string;
  balance_micros: number;
  purchased_micros: number;
  consumed_micros: number;
  status: string;
  created_at: number;
  updated_at: number;
}

/** One credit movement; `payment_ref` is unique (migration 0008). */
export interface StorefrontLedgerTable {
  id: string;
  seller_id: string;
  holder_kind: string;
  holder_id: string;
  kind: string;
  amount_micros: number;
  payment_ref: string | null;
  rail: string | null;
  detail: string | null;
  created_at: number;
}

export interface StorefrontCheckoutsTable {
  id: string;
  seller_id: string;
  agent_id: string;
  plan_id: string;
  amount_micros: number;
  provider: string;
  created_at: number;
}

/** Every table; later migrations add theirs here. */
/** Stored and background responses (migration 0013); JSON columns are text. */
export interface ResponsesTable {
  id: string;
  project_id: string;
  owner: string;
  status: string;
  background: number;
  resource: string;
  input_items: string;
  conversation: string | null;
  created_at: number;
  expires_at: number;
  request: string | null;
  prior_items: string | null;
  key_id: string | null;
  payer_kind: string | null;
  payer_id: string | null;
  request_id: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  attempts: Generated<number>;
  event_count: Generated<number>;
  answer_started: Generated<number>;
  settled: Generated<number>;
}

/** A background response's stream events (migration 0013). */
export interface ResponseEventsTable {
  response_id: string;
  seq: number;
  event: string;
}

/** The request log (migration 0019): one row per call; tags, attempts and tools as JSON text; flags as 0/1. */
export interface RequestLogTable {
  id: string;
  project_id: string;
  key_id: string | null;
  created_at: number;
  route: string;
  wire: string;
  scope: string;
  model_requested: string;
  model: string | null;
  provider: string | null;
  deployment: string | null;
  status: number;
  error_code: string | null;
  stream: number;
  session_id: string | null;
  end_user: string | null;
  tags: string;
  batch_id: string | null;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cost_micros: number;
  credit_wait_ms: number | null;
  first_byte_ms: number | null;
  engine_ms: number | null;
  total_ms: number;
  attempts: string;
  fallback: number;
  tools_called: string;
  hold_micros: number | null;
  settled_micros: number | null;
  body_logged: number;
}

/** A logged call's bodies (migration 0019): inline JSON text, or a preview and `blob_key`. */
export interface RequestLogBodiesTable {
  id: string;
  project_id: string;
  mode: string;
  request: string;
  response: string;
  truncated: number;
  blob_key: string | null;
}

/** Each project's logging settings (migration 0019); a project without a row has the configured defaults. */
export interface RequestLogSettingsTable {
  project_id: string;
  bodies: string;
  retention_days: number;
}

/** Console users (migration 0017); `operator` is 0 or 1. */
export interface UsersTable {
  id: string;
  email: string;
  name: string | null;
  operator: number;
  /** 1 while the last OIDC sign-in's claims made the user an operator (migration 0025). */
  operator_mapped: Generated<number>;
  oidc_issuer: string | null;
  oidc_subject: string | null;
  created_at: number;
}

/** A user's role in a project (migration 0017). */
export interface ProjectMembersTable {
  project_id: string;
  user_id: string;
  role: string;
  created_at: number;
  /** `admin` or `mapping` (migration 0025). */
  granted_by: Generated<string>;
}

/** An OIDC sign-in between its start and its callback (migration 0017). */
export interface SignInFlowsTable {
  id_hash: string;
  state: string;
  nonce: string;
  code_verifier: string;
  redirect_url: string;
  expires_at: number;
}

/** The audit log (migration 0017): inserted, never updated or deleted; `detail` is JSON text. */
export interface AuditLogTable {
  id: string;
  created_at: number;
  actor_type: string;
  actor_id: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  project_id: string | null;
  detail: string;
  ip: string | null;
}

export interface Tables {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  usage_records: UsageRecordsTable;
  usage_tags: UsageTagsTable;
  usage_rollups: UsageRollupsTable;
  usage_rollup_state: UsageRollupStateTable;
  files: FilesTable;
  batches: BatchesTable;
  batch_shards: BatchShardsTable;
  batch_line_results: BatchLineResultsTable;
  console_sessions: ConsoleSessionsTable;
  credit_grants: CreditGrantsTable;
  outbox: OutboxTable;
  storefront_accounts: StorefrontAccountsTable;
  storefront_ledger: StorefrontLedgerTable;
  storefront_checkouts: StorefrontCheckoutsTable;
  responses: ResponsesTable;
  response_events: ResponseEventsTable;
  request_log: RequestLogTable;
  request_log_bodies: RequestLogBodiesTable;
  request_log_settings: RequestLogSettingsTable;
  users: UsersTable;
  project_members: ProjectMembersTable;
  sign_in_flows: SignInFlowsTable;
  audit_log: AuditLogTable;
}
