/**
 * Whether a Messages engine answers: `GET {base_url}/models` (Anthropic's models list;
 * vLLM and llama.cpp serve it too) with the key and `anthropic-version` (models-probe.ts).
 */
import type { ProbeTarget } from '../../protocol.js';
import { probeModels } from '../../models-probe.js';

export function probeMessagesEngine(target: ProbeTarget): Promise<string | null> {
  const headers: Record<string, string> = { 'anthropic-version': '2023-06-01' };
  if (target.apiKey) headers['x-api-key'] = target.apiKey;
  return probeModels(target, headers);
}
