/**
 * The console's only way to the server: same-origin fetches under /console/api, with the
 * session's CSRF token on every state-changing request and, for an operator, the chosen
 * project in `x-project-id` on the /v1 routes. Failures become ApiError with the API's
 * own message and request id, which the pages show as they are.
 */
export const API_BASE = '/console/api';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | null,
    readonly requestId: string | null,
    /** The request field the error names, when it names one (e.g. `budget.limit_usd`). */
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/**
 * A FastAPI `detail` (the decision route's 422s): its text, each listed failure as
 * `where: what` (`loc` after "body"), and the first failure's type as the code.
 */
function readDetail(detail: unknown): { message: string; code: string | null } | null {
  if (typeof detail === 'string') return { message: detail, code: null };
  if (!Array.isArray(detail) || detail.length === 0) return null;
  const items = detail as Array<{ loc?: unknown; msg?: unknown; type?: unknown }>;
  const message = items
    .map((d) => {
      const loc = Array.isArray(d.loc) ? d.loc.filter((part, i) => !(i === 0 && part === 'body')).join('.') : '';
      return loc ? `${loc}: ${String(d.msg)}` : String(d.msg);
    })
    .join('; ');
  return { message, code: typeof items[0]!.type === 'string' ? items[0]!.type : null };
}

/** The error an answer carries: the envelope's message and code (or FastAPI's detail), else the status line. */
export function errorFromAnswer(status: number, requestId: string | null, text: string): ApiError {
  let message = `The server answered ${status}`;
  let code: string | null = null;
  let param: string | null = null;
  try {
    const body = JSON.parse(text) as { error?: { message?: unknown; code?: unknown; param?: unknown }; detail?: unknown };
    if (typeof body.error?.message === 'string') message = body.error.message;
    if (typeof body.error?.code === 'string') code = body.error.code;
    if (typeof body.error?.param === 'string') param = body.error.param;
    const detail = body.error ? null : readDetail(body.detail);
    if (detail) ({ message, code } = detail);
  } catch {
    if (text.trim() !== '' && text.length < 300) message = text.trim();
  }
  return new ApiError(message, status, code, requestId, param);
}

interface ApiContext {
  csrfToken: string | null;
  /** The operator's chosen project; a developer's requests never send one. */
  projectId: string | null;
}

const context: ApiContext = { csrfToken: null, projectId: null };

export function setApiContext(next: Partial<ApiContext>): void {
  Object.assign(context, next);
}

/** The headers a request to `path` needs beyond its body's. */
export function requestHeaders(method: string, path: string, ctx: ApiContext = context): Record<string, string> {
  const headers: Record<string, string> = {};
  if (method !== 'GET' && method !== 'HEAD' && ctx.csrfToken) headers['x-csrf-token'] = ctx.csrfToken;
  if (path.startsWith('/v1/') && ctx.projectId) headers['x-project-id'] = ctx.projectId;
  return headers;
}

export interface RequestOptions {
  body?: unknown;
  signal?: AbortSignal;
}

/** The raw answer of a request (streams and downloads); throws ApiError unless 2xx. */
export async function apiFetch(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  const headers = requestHeaders(method, path);
  let body: BodyInit | undefined;
  if (options.body instanceof FormData) body = options.body;
  else if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await fetch(`${API_BASE}${path}`, { method, headers, body, signal: options.signal, credentials: 'same-origin' });
  if (!response.ok) throw errorFromAnswer(response.status, response.headers.get('x-request-id'), await response.text());
  return response;
}

export async function api<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const response = await apiFetch(method, path, options);
  return (await response.json()) as T;
}

export const get = <T>(path: string, signal?: AbortSignal) => api<T>('GET', path, { signal });
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, { body });
export const patch = <T>(path: string, body: unknown) => api<T>('PATCH', path, { body });
export const del = <T>(path: string) => api<T>('DELETE', path);

/** A query string from the defined values of `params`. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

/** Saves a download through the API (the request needs the session's headers, so not a plain link). */
export async function download(path: string, filename: string): Promise<void> {
  const blob = await (await apiFetch('GET', path)).blob();
  saveBlob(blob, filename);
}

export function saveBlob(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
