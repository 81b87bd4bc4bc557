/**
 * A toy upstream protocol and an engine that speaks it, to prove that a protocol is one
 * folder and one registration: the router, cooldowns, fallbacks and usage records work
 * for it as they do for OpenAI's.
 *
 * The protocol: `POST {base_url}/say` with `{"voice": <upstream model>, "words": <the last
 * message>}`; the engine answers `{"said": <text>, "heard": <input tokens>, "spoke":
 * <output tokens>}`, or a status ≥ 500 when it is failing. Chat only: a model bound to it
 * is refused on every other capability.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import type { ChatOutput, ChatParams } from '../../src/domain/models/inference-backend.port.js';
import { AppError } from '../../src/domain/shared/errors.js';
import type { UpstreamAttempt, UpstreamProtocol, UpstreamProtocolEntry } from '../../src/inference/upstream/protocol.js';

class ToyProtocol implements UpstreamProtocol {
  async chat(params: ChatParams, { model, deployment }: UpstreamAttempt): Promise<ChatOutput> {
    const words = params.messages.at(-1)?.content ?? '';
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(`${deployment.baseUrl}/say`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ voice: deployment.upstreamModel ?? model.id, words }),
        signal: params.signal,
      });
    } catch (err) {
      // Retryable, with the connection code as its cause: the router takes the engine out and moves on.
      throw new AppError('upstream', `Upstream for model ${model.id} failed: the toy engine is unreachable`, { code: 'upstream_error', retryable: true, cause: err });
    }
    if (response.statusCode >= 500) {
      await response.body.dump();
      throw new AppError('upstream', `Upstream for model ${model.id} failed: the toy engine answered ${response.statusCode}`, {
        code: 'upstream_error',
        retryable: true,
        upstreamStatus: response.statusCode,
      });
    }
    const answer = (await response.body.json()) as { said: string; heard: number; spoke: number };
    return { content: answer.said, reasoning: null, finishReason: 'stop', usage: { inputTokens: answer.heard, outputTokens: answer.spoke } };
  }

  async close(): Promise<void> {}
}

export const toyProtocol: UpstreamProtocolEntry = { name: 'toy', create: () => new ToyProtocol() };

export interface ToyEngine {
  readonly baseUrl: string;
  /** The `voice` of every call received, in order. */
  readonly voices: string[];
  /** While true, every call answers 503. */
  failing: boolean;
  close(): Promise<void>;
}

/** A toy engine on loopback. */
export async function startToyEngine(): Promise<ToyEngine> {
  const voices: string[] = [];
  const engine = { failing: false };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(raw) as { voice: string; words: string };
      voices.push(body.voice);
      if (engine.failing || req.url !== '/v1/say') {
        res.writeHead(engine.failing ? 503 : 404).end();
        return;
      }
      const said = `${body.voice} says: ${body.words}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ said, heard: body.words.split(' ').length, spoke: said.split(' ').length }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(engine, {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    voices,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
