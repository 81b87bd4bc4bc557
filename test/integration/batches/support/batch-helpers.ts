/**
 * Helpers shared by the files and batches suites: JSONL builders, multipart uploads over
 * real sockets, polling until a batch reaches a status, and the YAML that binds the
 * batch model to a fake OpenAI-compatible upstream.
 */
import http from 'node:http';
import { expect } from 'vitest';
import { call } from '../../../helpers/harness.js';

export const MODEL = 'llama-3.1-8b-instruct-fast';

/** Binds the batch model to the fake upstream; `batches` adds keys under `batches:`. */
export function upstreamYaml(baseUrl: string, batches: Record<string, number> = {}): string {
  const lines = [`models:`, `  ${MODEL}:`, `    backend: openai`, `    base_url: ${baseUrl}`, `    timeout_ms: 20000`];
  const entries = { retry_base_ms: 20, lease_seconds: 2, ...batches };
  lines.push('batches:', ...Object.entries(entries).map(([k, v]) => `  ${k}: ${v}`));
  return `${lines.join('\n')}\n`;
}

export interface InputLine {
  custom_id?: unknown;
  method?: unknown;
  url?: unknown;
  body?: unknown;
}

export function requestLine(customId: string, content = `say ${customId}`): InputLine {
  return { custom_id: customId, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, messages: [{ role: 'user', content }] } };
}

export function jsonl(lines: Array<InputLine | string>): string {
  return lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';
}

export function requestLines(n: number, prefix = 'req'): string {
  return jsonl(Array.from({ length: n }, (_, i) => requestLine(`${prefix}-${i + 1}`)));
}

/** POST /v1/files as multipart (purpose first, then file), via fetch's FormData. */
export async function uploadFile(
  baseUrl: string,
  key: string,
  content: string | Buffer,
  options: { filename?: string | null; purpose?: string | null; fileFirst?: boolean } = {},
) {
  const form = new FormData();
  const blob = new Blob([content]);
  const addPurpose = () => {
    if (options.purpose !== null) form.append('purpose', options.purpose ?? 'batch');
  };
  const addFile = () => {
    if (options.filename === null) form.append('file', blob);
    else form.append('file', blob, options.filename ?? 'input.jsonl');
  };
  if (options.fileFirst) {
    addFile();
    addPurpose();
  } else {
    addPurpose();
    addFile();
  }
  const response = await fetch(`${baseUrl}/v1/files`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

/** Uploads `content` and asserts success; returns the file id. */
export async function uploadOk(baseUrl: string, key: string, content: string): Promise<string> {
  const res = await uploadFile(baseUrl, key, content);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id as string;
}

export function createBatch(baseUrl: string, key: string, body: Record<string, unknown>) {
  return call(baseUrl, 'POST', '/v1/batches', { key, body });
}

/** Uploads and creates a batch; asserts the creation succeeded. */
export async function startBatch(baseUrl: string, key: string, content: string, metadata?: Record<string, unknown>) {
  const fileId = await uploadOk(baseUrl, key, content);
  const res = await createBatch(baseUrl, key, { input_file_id: fileId, endpoint: '/v1/chat/completions', completion_window: '24h', metadata });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { fileId, batch: res.body };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls GET /v1/batches/{id} until `done(batch)`; generous timeout for a loaded machine. */
export async function waitForBatch(baseUrl: string, key: string, id: string, done: (b: any) => boolean, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    const res = await call(baseUrl, 'GET', `/v1/batches/${id}`, { key });
    last = res.body;
    if (res.status === 200 && done(last)) return last;
    await sleep(100);
  }
  throw new Error(`batch ${id} did not reach the expected state; last seen: ${JSON.stringify(last)}`);
}

export const TERMINAL = ['completed', 'failed', 'expired', 'cancelled'];
export const isTerminal = (b: any) => TERMINAL.includes(b.status);

export async function download(baseUrl: string, key: string, fileId: string) {
  const response = await fetch(`${baseUrl}/v1/files/${fileId}/content`, { headers: { 'x-api-key': key } });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The lines of an output or error file, parsed. */
export async function fileLines(baseUrl: string, key: string, fileId: string | null): Promise<any[]> {
  if (!fileId) return [];
  const res = await download(baseUrl, key, fileId);
  expect(res.status).toBe(200);
  return res.text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l));
}

/** Output and error lines of a finished batch, and every custom_id with how often it appears. */
export async function resultsOf(baseUrl: string, key: string, batch: any) {
  const output = await fileLines(baseUrl, key, batch.output_file_id);
  const errors = await fileLines(baseUrl, key, batch.error_file_id);
  const seen = new Map<string, number>();
  for (const line of [...output, ...errors]) seen.set(line.custom_id, (seen.get(line.custom_id) ?? 0) + 1);
  return { output, errors, seen };
}

/**
 * A raw multipart POST with node:http, for bodies fetch cannot send (streamed past the
 * limit) and for reading an early answer while the body is still being written.
 */
export function rawUpload(
  baseUrl: string,
  key: string,
  headers: Record<string, string>,
  write: (req: http.ClientRequest) => Promise<void> | void,
): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}/v1/files`, { method: 'POST', headers: { 'x-api-key': key, ...headers } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : null });
      });
      res.on('error', reject);
    });
    // The server may answer and close while we are still writing: that is the point.
    req.on('error', (err) => {
      if (!req.writableEnded) return;
      reject(err);
    });
    Promise.resolve(write(req)).catch(() => {});
  });
}
