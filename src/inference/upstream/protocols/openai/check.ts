/**
 * `sluice providers check` for one OpenAI-compatible deployment: `GET {base_url}/models`
 * with its key (the cheapest authenticated call every such server has), and whether the
 * model it is asked for is in the list. Its failure in words: unreachable, the key
 * refused, no such path, no such model.
 */
import { request } from 'undici';
import type { UpstreamAttempt } from '../../protocol.js';
import { upstreamName } from './target.js';

const CHECK_TIMEOUT_MS = 10_000;
const LISTED_NAMES = 5;

export async function checkDeployment({ model, deployment }: UpstreamAttempt): Promise<string | null> {
  let status: number;
  let text: string;
  try {
    const response = await request(`${deployment.baseUrl}/models`, {
      method: 'GET',
      headers: deployment.apiKey ? { authorization: `Bearer ${deployment.apiKey}` } : {},
      signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
    });
    status = response.statusCode;
    text = await response.body.text();
  } catch (err) {
    const { code, name } = err as { code?: unknown; name?: unknown };
    if (name === 'TimeoutError') return `unreachable: no answer within ${CHECK_TIMEOUT_MS / 1000} s`;
    return `unreachable: ${typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'the connection failed'}`;
  }
  if (status === 401 || status === 403) return `bad key: the engine refused it (status ${status}); check api_key_env`;
  if (status === 404) return 'no /models at this base_url (status 404); check that it ends in /v1';
  if (status < 200 || status >= 300) return `the engine answered status ${status}`;
  const names = modelNames(text);
  const wanted = upstreamName(model, deployment);
  if (names && !names.includes(wanted)) {
    const listed = names.slice(0, LISTED_NAMES).join(', ') + (names.length > LISTED_NAMES ? ', …' : '');
    return `unknown model: the engine does not serve ${wanted} (it serves ${listed || 'none'})`;
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
