/**
 * Counting a prompt with an OpenAI-compatible engine's own tokenizer endpoint, `POST
 * /tokenize` at the server's root (beside `/v1`):
 *
 * - vLLM takes `{model, messages, tools, add_generation_prompt}` and renders the chat
 *   template, answering `{count, max_model_len, tokens}`;
 * - llama.cpp's server takes `{content}` (text) and answers `{tokens}`;
 * - SGLang takes `{model, prompt}` and answers `{tokens, count, max_model_len}`.
 *
 * A prompt with messages is sent as the chat form and the rendered text together (vLLM
 * reads the messages, llama.cpp the content); an engine that refuses it (400/422) is asked
 * again with `{model, prompt}`. A text alone is sent once as `{model, prompt, content}`
 * (vLLM and SGLang read the prompt, llama.cpp the content). An engine without the endpoint
 * (404, 405, 501), or one that answers no count, counts nothing: null, and the caller
 * estimates; a failure (5xx, transport) is thrown.
 */
import type { EngineCountContext, PromptToCount } from '../../../../domain/models/prompt-count.types.js';
import { isAppError } from '../../../../domain/shared/errors.js';
import type { UpstreamAttempt } from '../../protocol.js';
import type { UpstreamClient, UpstreamTarget } from '../../http-client.js';
import { targetOf, upstreamName, type HttpEndpoint } from '../../endpoint.js';

/** A count is a cheap call: never wait on it as long as on a generation. */
const TOKENIZE_TIMEOUT_MS = 10_000;
const ABSENT = new Set([404, 405, 501]);
const REFUSED = new Set([400, 422]);

type Asked = { count: number } | 'refused' | null;

/** The server's root: the base URL without its `/v1`. */
export const engineRoot = (baseUrl: string) => baseUrl.replace(/\/v1\/?$/, '');

function countOf(body: unknown): number | null {
  if (typeof body !== 'object' || body === null) return null;
  const { count, tokens } = body as { count?: unknown; tokens?: unknown };
  if (typeof count === 'number' && Number.isInteger(count) && count >= 0) return count;
  return Array.isArray(tokens) ? tokens.length : null;
}

async function ask(client: UpstreamClient, target: UpstreamTarget, body: unknown, context: EngineCountContext): Promise<Asked> {
  try {
    const answer = await client.postJson<unknown>(target, '/tokenize', body, context);
    const count = countOf(answer.body);
    return count === null ? null : { count };
  } catch (err) {
    const status = isAppError(err) ? err.upstreamStatus : undefined;
    if (status !== undefined && REFUSED.has(status)) return 'refused';
    if (status === undefined || !ABSENT.has(status)) throw err;
    return null;
  }
}

function chatMessages(prompt: PromptToCount) {
  return prompt.messages.map((m) => {
    const out: Record<string, unknown> = { role: m.role, content: m.wireContent !== undefined ? m.wireContent : m.content };
    if (m.tool_call_id !== undefined) out.tool_call_id = m.tool_call_id;
    if (m.tool_calls !== undefined) out.tool_calls = m.tool_calls;
    return out;
  });
}

/** The engine's count of `prompt`, or null (see the file header). Throws on transport and 5xx failures. */
export async function engineTokenize(
  client: UpstreamClient,
  prompt: PromptToCount,
  { model, deployment }: UpstreamAttempt,
  context: EngineCountContext,
  endpoint: Pick<HttpEndpoint, 'headers'>,
): Promise<number | null> {
  const base = targetOf(model, deployment, endpoint);
  const target: UpstreamTarget = { ...base, baseUrl: engineRoot(deployment.baseUrl), timeoutMs: Math.min(base.timeoutMs, TOKENIZE_TIMEOUT_MS), connectAttempts: 1 };
  const name = upstreamName(model, deployment);
  if (prompt.messages.length === 0) {
    const asked = await ask(client, target, { model: name, prompt: prompt.text, content: prompt.text }, context);
    return asked === 'refused' ? null : (asked?.count ?? null);
  }
  const chat: Record<string, unknown> = { model: name, messages: chatMessages(prompt), add_generation_prompt: true, content: prompt.text };
  if (prompt.tools && prompt.tools.length > 0) chat.tools = prompt.tools;
  const first = await ask(client, target, chat, context);
  if (first !== 'refused') return first?.count ?? null;
  const second = await ask(client, target, { model: name, prompt: prompt.text }, context);
  return second === 'refused' ? null : (second?.count ?? null);
}
