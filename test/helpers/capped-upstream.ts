/**
 * A chat upstream that honours max_tokens as a real one does: it would write `words`
 * tokens, stops at the cap, reports `promptTokens` of input and what it wrote, answers
 * after `delayMs`, and counts the calls it has in flight at once.
 */
import { handler, type FakeUpstream } from './fake-upstream.js';

export interface CappedUpstreamOptions {
  promptTokens: number;
  words: number;
  delayMs?: number;
}

export function cappedUpstream(upstream: FakeUpstream, { promptTokens, words, delayMs = 0 }: CappedUpstreamOptions): { maxInFlight: () => number } {
  let inFlight = 0;
  let max = 0;
  upstream.setDefault(
    '/chat/completions',
    handler(async (req, res) => {
      inFlight += 1;
      max = Math.max(max, inFlight);
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      inFlight -= 1;
      const written = Math.min(words, typeof req.body?.max_tokens === 'number' ? req.body.max_tokens : Infinity);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-capped',
          object: 'chat.completion',
          created: 1_700_000_000,
          model: String(req.body?.model),
          choices: [{ index: 0, message: { role: 'assistant', content: 'word '.repeat(written).trim() }, finish_reason: written < words ? 'length' : 'stop' }],
          usage: { prompt_tokens: promptTokens, completion_tokens: written, total_tokens: promptTokens + written },
        }),
      );
    }),
  );
  return { maxInFlight: () => max };
}
