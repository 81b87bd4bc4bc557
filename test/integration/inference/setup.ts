/**
 * Shared setup of the inference suites: a fake upstream, and a Sluice whose models are
 * bound to it through the YAML config, the way an operator would bind vLLM or TEI.
 */
import http from 'node:http';
import { startFakeUpstream, type FakeUpstream } from '../../helpers/fake-upstream.js';
import { startTestServer, type TestServer } from '../../helpers/harness.js';

export interface InferenceEnv {
  upstream: FakeUpstream;
  server: TestServer;
  close(): Promise<void>;
}

type ModelYaml = Record<string, unknown>;

/** Models bound to the fake upstream (`base_url` added); everything else keeps its default backend. */
export const UPSTREAM_MODELS: Record<string, ModelYaml> = {
  'gpt-oss-120b': { upstream_model: 'openai/gpt-oss-120b' },
  'qwen3-30b-a3b-fp8': {},
  'llama-3.1-8b-instruct-fast': {},
  'deberta-v3-small': {},
  't5-small': {},
  'zlm-v1-iab-classify-edge': {},
  'all-minilm-l6-v2': { upstream_model: 'sentence-transformers/all-MiniLM-L6-v2' },
  'bge-small-en-v1.5': {},
  'zlm-v1-moderation-edge': {},
};

/** The `models:` section; `extra` entries are merged over the defaults (and may set their own base_url). */
export function inferenceYaml(baseUrl: string, extra: Record<string, ModelYaml> = {}): string {
  const lines = ['models:'];
  const ids = new Set([...Object.keys(UPSTREAM_MODELS), ...Object.keys(extra)]);
  for (const id of ids) {
    const entry = { backend: 'openai', base_url: baseUrl, ...UPSTREAM_MODELS[id], ...extra[id] };
    lines.push(`  ${id}: ${JSON.stringify(entry)}`);
  }
  return `${lines.join('\n')}\n`;
}

export async function startInferenceEnv(
  options: { extra?: Record<string, ModelYaml>; env?: Record<string, string>; yamlTail?: string } = {},
): Promise<InferenceEnv> {
  const upstream = await startFakeUpstream();
  const yaml = inferenceYaml(upstream.baseUrl, options.extra) + (options.yamlTail ?? '');
  const server = await startTestServer({ yaml, env: options.env });
  return {
    upstream,
    server,
    async close() {
      await server.close();
      await upstream.close();
    },
  };
}

/** The project's balance in micro-dollars, read from the database. */
export async function balanceOf(server: TestServer, projectId: string): Promise<number> {
  return (await server.core.repositories.projects.balanceOf(projectId))!;
}

export async function usageOf(server: TestServer, projectId: string) {
  return (await server.core.repositories.usage.listByProject(projectId, 100)).items;
}

/**
 * A POST on its own socket (node:http, no agent) that the test can cut off. fetch is not
 * used for disconnect tests: after an abort, undici opens a spare idle connection that
 * keeps the server's close() waiting for its headers timeout.
 */
export function rawPost(baseUrl: string, pathName: string, key: string, body: unknown) {
  const url = new URL(pathName, baseUrl);
  const request = http.request(url, { method: 'POST', agent: false, headers: { 'x-api-key': key, 'content-type': 'application/json' } });
  request.on('error', () => {});
  const response = new Promise<http.IncomingMessage>((resolve) => request.once('response', resolve));
  request.end(JSON.stringify(body));
  return {
    response,
    /** Each body chunk as it arrives, with its arrival time (ms, high resolution). */
    async *chunks(): AsyncGenerator<{ text: string; atMs: number }> {
      const res = await response;
      for await (const chunk of res) yield { text: (chunk as Buffer).toString('utf8'), atMs: performance.now() };
    },
    disconnect: () => request.destroy(),
  };
}
