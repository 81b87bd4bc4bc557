/**
 * Whether an engine answers: `GET {base_url}/models` (OpenAI-compatible engines and
 * Anthropic's Messages API both serve it) with the protocol's auth headers, bounded by a
 * short timeout. null when it answered (any status below 500); else why not, without
 * hosts, paths or the key.
 */
import { request } from 'undici';
import type { ProbeTarget } from './protocol.js';

const PROBE_TIMEOUT_MS = 2_000;

export async function probeModels(target: ProbeTarget, headers: Record<string, string>): Promise<string | null> {
  try {
    const response = await request(`${target.baseUrl}/models`, {
      method: 'GET',
      headers,
      headersTimeout: PROBE_TIMEOUT_MS,
      bodyTimeout: PROBE_TIMEOUT_MS,
      signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
    });
    await response.body.dump();
    return response.statusCode < 500 ? null : `GET /models answered ${response.statusCode}`;
  } catch (err) {
    const { code, name } = err as { code?: unknown; name?: unknown };
    if (name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') return 'no answer within 2 s';
    return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'connection failed';
  }
}
