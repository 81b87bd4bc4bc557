/**
 * `sluice providers check` for one HTTP deployment: `GET` its models list with its auth
 * headers (the cheapest authenticated call OpenAI-compatible servers, Azure OpenAI and
 * the Messages API all have), and whether the model it is asked for is in the list. Its
 * failure in words: unreachable, the key refused, no such path, no such model.
 */
import { request } from 'undici';

const CHECK_TIMEOUT_MS = 10_000;
const LISTED_NAMES = 5;

export interface ModelsCheck {
  /** The models list's URL. */
  url: string;
  headers: Record<string, string>;
  /** The model the deployment is asked for; null: the list is not checked for it (it names dated ids only, and aliases work). */
  wanted: string | null;
  /** What to check on a 404 (e.g. that the base URL ends in /v1). */
  notFoundHint: string;
}

export async function checkModelsList(check: ModelsCheck): Promise<string | null> {
  let status: number;
  let text: string;
  try {
    const response = await request(check.url, { method: 'GET', headers: check.headers, signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
    status = response.statusCode;
    text = await response.body.text();
  } catch (err) {
    const { code, name } = err as { code?: unknown; name?: unknown };
    if (name === 'TimeoutError') return `unreachable: no answer within ${CHECK_TIMEOUT_MS / 1000} s`;
    return `unreachable: ${typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'the connection failed'}`;
  }
  if (status === 401 || status === 403) return `bad key: the engine refused it (status ${status}); check api_key_env or api_key_file`;
  if (status === 404) return `no models list at this base_url (status 404); ${check.notFoundHint}`;
  if (status < 200 || status >= 300) return `the engine answered status ${status}`;
  const names = modelNames(text);
  if (names && check.wanted !== null && !names.includes(check.wanted)) {
    const listed = names.slice(0, LISTED_NAMES).join(', ') + (names.length > LISTED_NAMES ? ', …' : '');
    return `unknown model: the engine does not serve ${check.wanted} (it serves ${listed || 'none'})`;
  }
  return null;
}

/** The ids of a `{data: [{id}]}` list; null when the body is not one (then the model is not checked). */
function modelNames(text: string): string[] | null {
  try {
    const data = (JSON.parse(text) as { data?: unknown }).data;
    return Array.isArray(data) ? data.map((m) => (m as { id?: unknown }).id).filter((id): id is string => typeof id === 'string') : null;
  } catch {
    return null;
  }
}
