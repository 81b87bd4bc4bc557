/**
 * Reads a chat completion stream (server-sent events) into content deltas and the final
 * usage. The parser is fed text as it arrives, so an event split across reads is kept
 * until its blank line.
 */
export interface ChatStreamEvent {
  delta: string;
  usage: { prompt_tokens: number; completion_tokens: number } | null;
  done: boolean;
}

export class SseParser {
  #buffer = '';

  /** The events completed by `text`. */
  push(text: string): ChatStreamEvent[] {
    this.#buffer += text.replaceAll('\r\n', '\n');
    const events: ChatStreamEvent[] = [];
    let end = this.#buffer.indexOf('\n\n');
    while (end !== -1) {
      const block = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data !== '') events.push(readEvent(data));
      end = this.#buffer.indexOf('\n\n');
    }
    return events;
  }
}

function readEvent(data: string): ChatStreamEvent {
  if (data === '[DONE]') return { delta: '', usage: null, done: true };
  const chunk = JSON.parse(data) as {
    choices?: Array<{ delta?: { content?: string | null } }>;
    usage?: { prompt_tokens: number; completion_tokens: number } | null;
    error?: { message?: string };
  };
  if (chunk.error) throw new Error(chunk.error.message ?? 'The stream ended with an error');
  return { delta: chunk.choices?.[0]?.delta?.content ?? '', usage: chunk.usage ?? null, done: false };
}
