/** The wire objects the pages read (the API's own shapes, snake_case). */
export type ProjectRole = 'owner' | 'admin' | 'member' | 'viewer';

export interface Session {
  /** `user`: signed in through the identity provider; their roles are in `projects`. */
  role: 'operator' | 'developer' | 'user';
  user?: { id: string; email: string; name: string | null; operator: boolean };
  projects?: Array<{ id: string; name: string; role: ProjectRole }>;
  project_id: string | null;
  key_id: string | null;
  expires_at: number;
  csrf_token: string;
  /** Where the MCP endpoint listens (`mcp.prefix`, default /mcp). */
  mcp_path: string;
}

export interface List<T> {
  object: 'list';
  data: T[];
  first_id?: string | null;
  last_id?: string | null;
  has_more?: boolean;
}

export interface Project {
  id: string;
  name: string;
  balance_usd: number;
  created_at: number;
}

export interface ApiKey {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  active: boolean;
  created_at: number;
  revoked_at: number | null;
  last_used_at?: number | null;
  /** The user who made the key in the console; null: an operator, the admin token or the CLI. */
  owner_user_id?: string | null;
  models: string[] | null;
  budget: { limit_usd: number; window: BudgetWindow } | null;
  rpm: number | null;
  tpm: number | null;
  expires_at: number | null;
  metadata: Record<string, string> | null;
  tags: string[] | null;
  previous_key_valid_until: number | null;
}

export type BudgetWindow = 'day' | 'week' | 'month' | 'total';

export interface UsageResult {
  group: string | null;
  requests: number;
  input_tokens: number;
  /** Of input_tokens, those read from an engine's prompt cache (absent from servers before it was reported). */
  input_cached_tokens?: number;
  /** Of input_tokens, those written to an engine's prompt cache. */
  input_cache_write_tokens?: number;
  output_tokens: number;
  cost_usd: number;
}

export interface UsageReport {
  bucket_width: string;
  group_by: string | null;
  start_time: number;
  end_time: number;
  data: Array<{ start_time: number; end_time: number; results: UsageResult[] }>;
}

export interface FileObject {
  id: string;
  bytes: number;
  created_at: number;
  filename: string;
  purpose: string;
  status?: string;
}

export interface Batch {
  id: string;
  endpoint: string;
  input_file_id: string;
  status: string;
  output_file_id: string | null;
  error_file_id: string | null;
  created_at: number;
  in_progress_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  expires_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  errors: { data: Array<{ code: string; message: string; line?: number | null }> } | null;
}

export interface DeploymentState {
  id: string;
  state: 'ready' | 'cooling_down' | 'unreachable';
  until: string | null;
  since: string | null;
  reason: string | null;
}

export interface CatalogModel {
  id: string;
  task: string;
  routes: string[];
  runtime: string;
  upstream: boolean;
  ready: boolean;
  /** An upstream model whose engine did not answer its last probe: since when (ISO 8601). */
  unreachable_since: string | null;
  unreachable_reason: string | null;
  /** The engines of a model that sluice.yaml gives several, and the state of each. */
  deployments?: DeploymentState[];
  detail: string | null;
  fixes: string[];
  context_length: number;
  price: { input_per_million_usd: number; output_per_million_usd: number };
}

export interface CreditGrant {
  id: string;
  project_id: string;
  amount_usd: number;
  reason: string | null;
  created_at: number;
}

export interface OutboxMessage {
  id: string;
  target_kind: string;
  idempotency_key: string;
  payload: unknown;
  state: 'pending' | 'delivered' | 'dead';
  attempts: number;
  last_error: string | null;
  next_attempt_at: number;
  created_at: number;
  delivered_at: number | null;
}

export interface Holder {
  kind: 'agent' | 'receipt';
  /** The agent id, or the SHA-256 of the receipt id (the receipt itself is never stored). */
  id: string;
}

export interface StorefrontPurchase {
  id: string;
  seller_id: string;
  holder: Holder;
  rail: 'x402' | 'mpp' | 'card' | null;
  amount_usd: number;
  payment_ref: string | null;
  detail: string | null;
  created_at: number;
}

export interface StorefrontAccount {
  id: string;
  seller_id: string;
  holder: Holder;
  balance_usd: number;
  purchased_usd: number;
  consumed_usd: number;
  status: 'active' | 'revoked';
  created_at: number;
  updated_at: number;
}

export interface RequestTokens {
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
}

/** One call in the request log (GET /v1/requests). */
export interface RequestSummary {
  id: string;
  object: 'request';
  created_at: number;
  project_id: string;
  key_id: string | null;
  route: string;
  wire: string;
  scope: string;
  model_requested: string;
  model: string | null;
  provider: string | null;
  deployment: string | null;
  status: number;
  error_code: string | null;
  stream: boolean;
  session_id: string | null;
  end_user: string | null;
  tags: string[];
  batch_id: string | null;
  usage: RequestTokens;
  cost_usd: number;
  latency_ms: { credit_wait: number | null; first_byte: number | null; engine: number | null; total: number };
  body_logged: boolean;
}

export interface RequestAttempt {
  deployment: string;
  provider: string | null;
  status: number | null;
  error_code: string | null;
  /** Milliseconds after the request began. */
  started_ms: number;
  duration_ms: number;
}

/** A call's whole record (GET /v1/requests/{id}). */
export interface RequestDetail extends RequestSummary {
  attempts: RequestAttempt[];
  fallback: boolean;
  tools_called: string[];
  hold_usd: number | null;
  settled_usd: number | null;
}

export interface RequestBody {
  object: 'request_body';
  id: string;
  mode: 'redacted' | 'full';
  request: unknown;
  response: unknown;
  truncated: boolean;
}

export interface RequestSession {
  object: 'request_session';
  id: string;
  requests: number;
  first_at: number;
  last_at: number;
  usage: RequestTokens;
  cost_usd: number;
  data: RequestSummary[];
}

export interface SignInOptions {
  object: 'sign_in_options';
  oidc: { provider_name: string; start_url: string } | null;
}

export interface ProjectMember {
  object: 'project_member';
  project_id: string;
  user_id: string;
  email: string;
  name: string | null;
  role: ProjectRole;
  created_at: number;
}

export interface AuditEntry {
  id: string;
  object: 'audit_entry';
  created_at: number;
  actor: { type: string; id: string | null; ip: string | null };
  action: string;
  target: { type: string; id: string | null };
  project_id: string | null;
  detail: Record<string, unknown>;
}
