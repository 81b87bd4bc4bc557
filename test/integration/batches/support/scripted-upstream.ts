/**
 * Scripts the fake upstream per batch line: the answer depends on the line's message
 * content and on how often that content was already seen, and answers can be held
 * behind a gate (a stalled upstream) until the test opens it.
 */
import { handler, type FakeUpstream } from '../../../helpers/fake-upstream.js';

export type Outcome = 'ok' | 'destroy' | { status: number; message?: string };

export class Gate {
  #open!: () => void;
  readonly #opened = new Promise<void>((resolve) => (this.#open = resolve));
  #isOpen = false;
  open(): void {
    this.#isOpen = true;
    this.#open();
  }
  get isOpen(): boolean {
    return this.#isOpen;
  }
  wait(): Promise<void> {
    return this.#opened;
  }
}

export const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

export function chatCompletion(model: string, content: string) {
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2)}`,
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: USAGE,
  };
}

export interface Script {
  /** Attempts seen per message content. */
  attempts: Map<string, number>;
}

/** Holds every call (a Gate) or the calls whose content it picks (a function), until opened. */
export type Holding = Gate | ((content: string) => Gate | null) | null;

/** Answers every chat call by `decide(content, attempt)`, once its gate (if any) opens. */
export function scriptUpstream(
  upstream: FakeUpstream,
  decide: (content: string, attempt: number) => Outcome = () => 'ok',
  gate: Holding = null,
): Script {
  const script: Script = { attempts: new Map() };
  upstream.setDefault(
    '/chat/completions',
    handler(async (req, res) => {
      const content = String(req.body?.messages?.[0]?.content ?? '');
      const attempt = (script.attempts.get(content) ?? 0) + 1;
      script.attempts.set(content, attempt);
      const held = typeof gate === 'function' ? gate(content) : gate;
      if (held) await held.wait();
      if (req.aborted) return;
      const outcome = decide(content, attempt);
      if (outcome === 'destroy') {
        res.socket?.destroy();
        return;
      }
      if (outcome === 'ok') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(chatCompletion(String(req.body?.model), `echo: ${content}`)));
        return;
      }
      res.writeHead(outcome.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: outcome.message ?? `failure ${outcome.status}`, type: 'invalid_request_error', code: null, param: null } }));
    }),
  );
  return script;
}
