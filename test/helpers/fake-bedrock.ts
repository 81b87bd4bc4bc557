/**
 * A fake Amazon Bedrock runtime on loopback that speaks Bedrock's wire (HTTP/1.1, as the
 * `bedrock` protocol's client speaks it), built from the
 * Converse API reference: `POST /model/{modelId}/converse` answers JSON, `POST
 * /model/{modelId}/converse-stream` answers the binary AWS event stream
 * (`application/vnd.amazon.eventstream`: prelude, headers, CRC32s, encoded with the SDK's
 * own @smithy event-stream codec). Every request must carry a SigV4 `Authorization` and
 * `x-amz-date`, signed with the test's credentials for service `bedrock` (the signature
 * is recomputed and compared); otherwise it is refused as AWS refuses it. Errors answer as
 * AWS's restJson protocol does: the status, `x-amzn-errortype` and `{"message": …}`.
 *
 *   const bedrock = await startFakeBedrock();
 *   // YAML: upstream: { protocol: bedrock, deployments: [{ region: us-east-1, base_url: ${bedrock.url}, upstream_model: anthropic.claude-x }] }
 *   bedrock.enqueue(answer([{ text: 'Hi' }], { usage: { inputTokens: 5, outputTokens: 1 } }));
 *   bedrock.enqueue(bedrockError(429, 'ThrottlingException', 'Too many requests'));
 *   bedrock.enqueue(streamException('throttlingException', 'slow down', 2)); // after two events
 *   bedrock.requests[0].body.messages; bedrock.requests[0].modelId;
 */
import { createHash, createHmac } from 'node:crypto';
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStreamCodec } from '@smithy/core/event-streams';
import { SignatureV4 } from '@smithy/signature-v4';

export const TEST_AWS = { accessKeyId: 'AKIDFAKEBEDROCK00001', secretAccessKey: 'fake/Secret+Key/For/Bedrock/Tests/000000', region: 'us-east-1' };

/** The environment Sluice's AWS credential chain reads in tests (and nothing else: no instance metadata). */
export const TEST_AWS_ENV = {
  AWS_ACCESS_KEY_ID: TEST_AWS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: TEST_AWS.secretAccessKey,
  AWS_EC2_METADATA_DISABLED: 'true',
};

type Json = Record<string, unknown>;

export interface BedrockAnswer {
  type: 'answer';
  content: Json[];
  stopReason: string;
  usage: Json;
}
export type BedrockReply =
  | BedrockAnswer
  | { type: 'error'; status: number; errorType: string; message: string }
  | { type: 'stream-exception'; exceptionType: string; message: string; afterEvents: number }
  /** Chooses the reply from the request's body. */
  | { type: 'dynamic'; reply: (body: Json) => BedrockReply };

export const DEFAULT_USAGE = { inputTokens: 11, outputTokens: 4, totalTokens: 15 };

export const answer = (content: Json[], options: { stopReason?: string; usage?: Json } = {}): BedrockAnswer => ({
  type: 'answer',
  content,
  stopReason: options.stopReason ?? (content.some((b) => b.toolUse) ? 'tool_use' : 'end_turn'),
  usage: options.usage ?? DEFAULT_USAGE,
});
export const bedrockError = (status: number, errorType: string, message: string): BedrockReply => ({ type: 'error', status, errorType, message });
export const streamException = (exceptionType: string, message: string, afterEvents: number): BedrockReply => ({ type: 'stream-exception', exceptionType, message, afterEvents });

/** A tool loop: a tool use until the conversation carries a tool result, then the text. */
export const toolLoop = (toolUse: { toolUseId: string; name: string; input: Json }, text: string): BedrockReply => ({
  type: 'dynamic',
  reply: (body) => {
    const messages = (body.messages ?? []) as Array<{ content: Json[] }>;
    const answered = messages.at(-1)?.content.some((b) => b.toolResult !== undefined) ?? false;
    return answered ? answer([{ text }]) : answer([{ toolUse }]);
  },
});

export interface BedrockRequest {
  operation: 'converse' | 'converse-stream';
  modelId: string;
  headers: IncomingHttpHeaders;
  body: Json;
}

export interface FakeBedrock {
  url: string;
  requests: BedrockRequest[];
  enqueue(...replies: BedrockReply[]): void;
  setDefault(reply: BedrockReply): void;
  /** Forgets the queued replies and the recorded requests. */
  reset(): void;
  close(): Promise<void>;
}

const codec = new EventStreamCodec(
  (bytes) => Buffer.from(bytes).toString('utf8'),
  (text) => Buffer.from(text, 'utf8'),
);

const str = (value: string) => ({ type: 'string' as const, value });

function frame(headers: Record<string, string>, body: unknown): Uint8Array {
  const encoded = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, str(v)]));
  return codec.encode({ headers: encoded, body: Buffer.from(JSON.stringify(body)) });
}

const event = (type: string, body: Json) => frame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, body);

/** An answer as ConverseStream's events: messageStart, each block's start/deltas/stop, messageStop, metadata. */
export function streamEvents(reply: BedrockAnswer): Uint8Array[] {
  const events = [event('messageStart', { role: 'assistant' })];
  reply.content.forEach((block, contentBlockIndex) => {
    if (typeof block.text === 'string') {
      for (const piece of block.text.split(/(?<= )/)) events.push(event('contentBlockDelta', { contentBlockIndex, delta: { text: piece } }));
    } else if (block.reasoningContent) {
      const reasoning = (block.reasoningContent as { reasoningText: { text: string; signature?: string } }).reasoningText;
      events.push(event('contentBlockDelta', { contentBlockIndex, delta: { reasoningContent: { text: reasoning.text } } }));
      events.push(event('contentBlockDelta', { contentBlockIndex, delta: { reasoningContent: { signature: reasoning.signature ?? 'sig' } } }));
    } else if (block.toolUse) {
      const use = block.toolUse as { toolUseId: string; name: string; input: unknown };
      events.push(event('contentBlockStart', { contentBlockIndex, start: { toolUse: { toolUseId: use.toolUseId, name: use.name } } }));
      const input = JSON.stringify(use.input);
      const half = Math.floor(input.length / 2);
      for (const piece of [input.slice(0, half), input.slice(half)]) events.push(event('contentBlockDelta', { contentBlockIndex, delta: { toolUse: { input: piece } } }));
    }
    events.push(event('contentBlockStop', { contentBlockIndex }));
  });
  events.push(event('messageStop', { stopReason: reply.stopReason }));
  events.push(event('metadata', { usage: reply.usage, metrics: { latencyMs: 7 } }));
  return events;
}

type SourceData = string | ArrayBuffer | ArrayBufferView;
const bytesOf = (data: SourceData): string | Uint8Array =>
  typeof data === 'string' ? data : data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);

/** SHA-256 and HMAC-SHA-256 from node:crypto, in the shape the SDK's signer takes. */
const sha256 = class {
  #hash = createHash('sha256');
  #hmac: ReturnType<typeof createHmac> | null;
  constructor(secret?: SourceData) {
    this.#hmac = secret === undefined ? null : createHmac('sha256', bytesOf(secret));
  }
  update(data: SourceData) {
    (this.#hmac ?? this.#hash).update(bytesOf(data));
  }
  async digest() {
    return new Uint8Array((this.#hmac ?? this.#hash).digest());
  }
  reset() {}
};

/** Whether the request carries a valid SigV4 signature by the test credentials; else AWS's refusal. */
async function checkSignature(req: IncomingMessage, body: Buffer, verify: boolean): Promise<{ errorType: string; message: string } | null> {
  const auth = req.headers.authorization ?? '';
  const date = req.headers['x-amz-date'];
  if (!auth.startsWith('AWS4-HMAC-SHA256 ') || typeof date !== 'string') return { errorType: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const credential = /Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request/.exec(auth);
  if (credential?.[1] !== TEST_AWS.accessKeyId) return { errorType: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  if (!verify) return null;
  const signed = /SignedHeaders=([^,]+)/.exec(auth)?.[1]?.split(';') ?? [];
  const headers: Record<string, string> = {};
  for (const name of signed) headers[name] = String(req.headers[name]);
  const signer = new SignatureV4({ credentials: TEST_AWS, region: credential[2]!, service: credential[3]!, sha256, uriEscapePath: true });
  const url = new URL(req.url ?? '/', 'http://x');
  const at = new Date(`${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`);
  const expected = await signer.sign({ method: req.method ?? 'POST', protocol: 'http:', hostname: url.hostname, path: url.pathname, headers, body: body.toString('utf8'), query: {} }, { signingDate: at });
  if (expected.headers.authorization !== auth) return { errorType: 'InvalidSignatureException', message: 'The request signature we calculated does not match the signature you provided.' };
  if (credential[3] !== 'bedrock') return { errorType: 'InvalidSignatureException', message: `Credential should be scoped to correct service: 'bedrock'.` };
  return null;
}

function sendError(res: ServerResponse, status: number, errorType: string, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': `${errorType}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'fake-req-1' });
  res.end(JSON.stringify({ message }));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * `knownModels`: answer ResourceNotFoundException for any other model id.
 * `verifySignatures: false` checks the signature's presence and credential only, not its
 * value (the bench: recomputing it costs the fake milliseconds that are not Sluice's).
 */
export async function startFakeBedrock(options: { knownModels?: readonly string[]; verifySignatures?: boolean } = {}): Promise<FakeBedrock> {
  const queue: BedrockReply[] = [];
  let fallback: BedrockReply = answer([{ text: 'Hello from Bedrock.' }]);
  const requests: BedrockRequest[] = [];
  const server = http.createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      const route = /^\/model\/([^/]+)\/(converse|converse-stream)$/.exec(new URL(req.url ?? '/', 'http://x').pathname);
      if (req.method !== 'POST' || !route) return sendError(res, 404, 'UnknownOperationException', 'Unknown operation');
      const refused = await checkSignature(req, raw, options.verifySignatures ?? true);
      if (refused) return sendError(res, 403, refused.errorType, refused.message);
      const modelId = decodeURIComponent(route[1]!);
      const operation = route[2] as BedrockRequest['operation'];
      requests.push({ operation, modelId, headers: req.headers, body: JSON.parse(raw.toString('utf8') || '{}') as Json });
      if (options.knownModels && !options.knownModels.includes(modelId)) return sendError(res, 404, 'ResourceNotFoundException', 'The provided model identifier is invalid.');
      const next = queue.shift() ?? fallback;
      const reply = next.type === 'dynamic' ? next.reply(requests.at(-1)!.body) : next;
      if (reply.type === 'error') return sendError(res, reply.status, reply.errorType, reply.message);
      if (operation === 'converse') return answerJson(res, reply);
      return answerStream(res, reply);
    })().catch((err: unknown) => {
      res.destroy(err as Error);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => queue.push(...replies),
    setDefault: (reply) => {
      fallback = reply;
    },
    reset: () => {
      queue.length = 0;
      requests.length = 0;
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function answerJson(res: ServerResponse, reply: BedrockReply): void {
  if (reply.type !== 'answer') return sendError(res, 500, 'InternalServerException', 'a stream exception cannot answer Converse');
  res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'fake-req-1' });
  res.end(JSON.stringify({ output: { message: { role: 'assistant', content: reply.content } }, stopReason: reply.stopReason, usage: reply.usage, metrics: { latencyMs: 7 } }));
}

function answerStream(res: ServerResponse, reply: BedrockReply): void {
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'fake-req-1' });
  if (reply.type === 'stream-exception') {
    const events = streamEvents(answer([{ text: 'Partial answer that never ends' }])).slice(0, reply.afterEvents);
    for (const e of events) res.write(e);
    res.end(frame({ ':exception-type': reply.exceptionType, ':content-type': 'application/json', ':message-type': 'exception' }, { message: reply.message }));
    return;
  }
  for (const e of streamEvents(reply as BedrockAnswer)) res.write(e);
  res.end();
}
