/**
 * A System One client written from the published wire format alone (TypeSafe's API
 * reference: `POST {base}/systemone` with `Authorization: Bearer`, `GET {base}/models`
 * read as `{models: [{name, description, release_date}]}`, errors read from `detail`
 * as a string, object or list, `x-typesafe-request-id` logged). It knows nothing of
 * Sluice: the tests point it at Sluice by base URL and key only.
 */
export type Question =
  | { type: 'noul'; instructions?: unknown; criteria?: { true?: unknown; false?: unknown } | null }
  | { type: 'choice'; instructions?: unknown; criteria: Record<string, unknown> }
  | { type: 'score'; instructions?: unknown; criteria: unknown[] };

export type Answer =
  | { type: 'noul'; noul: number }
  | { type: 'choice'; choice: string; confidence: number; probabilities: Record<string, number> }
  | { type: 'score'; score: number; confidence: number; legend: Record<string, string>; probabilities: Record<string, number> };

export interface Decision {
  model: string;
  answers: Record<string, Answer>;
  usage: { input_tokens: number; output_tokens: number };
  requestId: string | null;
}

export class SystemOneError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly requestId: string | null,
  ) {
    super(message);
  }
}

/** The SDKs' reading of an error body: `error.message`, `message`, or `detail` in any of its forms. */
function errorMessage(body: any): string {
  if (body?.error?.message) return String(body.error.message);
  if (body?.message) return String(body.message);
  const detail = body?.detail;
  if (typeof detail === 'string') return detail;
  if (Array.isArray(detail)) return detail.map((d) => `${(d.loc ?? []).join('.')}: ${d.msg}`).join('; ');
  if (detail && typeof detail === 'object') return String(detail.message ?? JSON.stringify(detail));
  return `HTTP error`;
}

export class SystemOneClient {
  readonly requestLog: string[] = [];

  constructor(
    private readonly options: { apiKey: string; baseUrl?: string; model?: string },
  ) {}

  get #base(): string {
    return (this.options.baseUrl ?? 'https://api.typesafe.ai/v1').replace(/\/+$/, '');
  }

  async #request(method: string, path: string, body?: unknown): Promise<{ body: any; requestId: string | null }> {
    const response = await fetch(`${this.#base}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.options.apiKey}`, 'content-type': 'application/json', accept: 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const requestId = response.headers.get('x-typesafe-request-id');
    if (requestId) this.requestLog.push(requestId);
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : null;
    if (!response.ok) throw new SystemOneError(response.status, errorMessage(parsed), requestId);
    return { body: parsed, requestId };
  }

  async decide(state: unknown, questions: Record<string, Question>, model?: string): Promise<Decision> {
    if (Object.keys(questions).length === 0) throw new Error('questions must not be empty');
    const { body, requestId } = await this.#request('POST', '/systemone', { model: model ?? this.options.model ?? 'jev-latest', state, questions });
    return { model: body.model, answers: body.answers, usage: body.usage, requestId };
  }

  async models(): Promise<Array<{ name: string; description: string; release_date: string }>> {
    return (await this.#request('GET', '/models')).body.models;
  }
}
