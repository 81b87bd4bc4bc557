/**
 * A Sluice whose models are served by the `bedrock` protocol against fake Bedrock
 * runtimes on loopback (test/helpers/fake-bedrock.ts), with the AWS credential chain fed
 * from the environment (static test keys; no instance metadata, no shared files), and
 * every log line kept for the tests that look for secrets in it.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startTestServer, type TestServer } from '../../helpers/harness.js';
import { deadEngineUrl } from '../../helpers/engine-process.js';
import { startFakeBedrock, TEST_AWS_ENV, type FakeBedrock } from '../../helpers/fake-bedrock.js';

export const CLAUDE_ID = 'anthropic.claude-sonnet-4-5-20250929-v1:0';

export interface BedrockEnv {
  server: TestServer;
  bedrock: FakeBedrock;
  key: string;
  projectId: string;
  logs: string[];
  /** Every span recorded so far, as JSON text (names, attributes, events, status). */
  traces(): string;
  close(): Promise<void>;
}

const deployment = (id: string, url: string, model: string, region = 'us-east-1') => `        - { id: ${id}, region: ${region}, base_url: ${url}, upstream_model: '${model}' }\n`;

function yaml(url: string, dead: string): string {
  return `routing:
  retries: 2
models:
  claude-bedrock:
    kind: chat
    price: { input_per_million_usd: 3, output_per_million_usd: 15 }
    upstream:
      protocol: bedrock
      deployments:
${deployment('bedrock-use1', url, CLAUDE_ID)}
  claude-pair:
    kind: chat
    price: { input_per_million_usd: 0, output_per_million_usd: 0 }
    upstream:
      protocol: bedrock
      deployments:
${deployment('pair-east', url, 'pair-east')}${deployment('pair-west', url, 'pair-west', 'us-west-2')}
  claude-drop:
    kind: chat
    price: { input_per_million_usd: 0, output_per_million_usd: 0 }
    drop_params: [logit_bias, presence_penalty]
    upstream:
      protocol: bedrock
      deployments:
${deployment('drop-use1', url, 'drop')}
  ctx-short:
    kind: chat
    price: { input_per_million_usd: 0, output_per_million_usd: 0 }
    context_window_fallbacks: [claude-bedrock]
    upstream:
      protocol: bedrock
      deployments:
${deployment('short-use1', url, 'short')}
  local-llm:
    kind: chat
    price: { input_per_million_usd: 1, output_per_million_usd: 1 }
    deployments:
      - { id: gpu-local, base_url: ${dead} }
    fallbacks: [claude-bedrock]
`;
}

/** Sets the AWS credential environment for the SDK's default chain; returns the undo. */
export function useTestAwsEnv(): () => void {
  const saved = new Map<string, string | undefined>();
  const env: Record<string, string> = { ...TEST_AWS_ENV, AWS_CONFIG_FILE: '/nonexistent/aws-config', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/aws-credentials' };
  for (const [name, value] of Object.entries(env)) {
    saved.set(name, process.env[name]);
    process.env[name] = value;
  }
  return () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

export async function startBedrockEnv(): Promise<BedrockEnv> {
  const restoreEnv = useTestAwsEnv();
  const bedrock = await startFakeBedrock();
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logs.push(chunk.toString('utf8'));
      done();
    },
  });
  const exporter = new InMemorySpanExporter();
  const server = await startTestServer({
    yaml: yaml(bedrock.url, await deadEngineUrl()),
    env: { RATE_LIMIT_RPM: '1000000', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' },
    overrides: { logger: pino({ level: 'debug' }, sink), spanProcessors: [new SimpleSpanProcessor(exporter)] },
  });
  const { key, projectId } = await server.newTenant({ balanceUsd: 100 });
  return {
    server,
    bedrock,
    key,
    projectId,
    logs,
    traces: () => JSON.stringify(exporter.getFinishedSpans().map((span) => ({ name: span.name, attributes: span.attributes, events: span.events, status: span.status }))),
    async close() {
      await server.close();
      await bedrock.close();
      restoreEnv();
    },
  };
}
