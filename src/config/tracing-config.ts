/**
 * Tracing from the standard OpenTelemetry variables: on when an OTLP endpoint is given
 * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces) or
 * OTEL_TRACES_EXPORTER=otlp; off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
 * Only OTLP over HTTP is supported, in either of its encodings: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL
 * or OTEL_EXPORTER_OTLP_PROTOCOL says `http/protobuf` (the default, as the OTLP exporter
 * specification has it) or `http/json`; any other value (`grpc`, a typo) refuses to start. Headers (OTEL_EXPORTER_OTLP_HEADERS) are read by the
 * exporter itself and never logged. OTEL_SEMCONV_STABILITY_OPT_IN (a comma-separated list)
 * with `gen_ai_latest_experimental` switches model calls to the GenAI conventions, as those
 * conventions ask of instrumentations that emitted something else before.
 */
import type { OtlpProtocol, TracingConfig } from './schema.js';

type Env = Readonly<Record<string, string | undefined>>;

export function resolveTracingConfig(env: Env, problems: string[]): TracingConfig {
  const serviceName = env.OTEL_SERVICE_NAME || 'sluice';
  const genAi = listOf(env.OTEL_SEMCONV_STABILITY_OPT_IN).includes(GEN_AI_OPT_IN);
  const protocol = protocolOf(env, problems);
  const off: TracingConfig = { enabled: false, endpoint: null, serviceName, protocol, genAi };
  if (env.OTEL_SDK_DISABLED === 'true') return off;
  const exporters = listOf(env.OTEL_TRACES_EXPORTER);
  if (exporters.includes('none')) return off;
  const unsupported = exporters.filter((e) => e !== 'otlp');
  if (unsupported.length > 0) problems.push(`OTEL_TRACES_EXPORTER: only "otlp" (or "none") is supported, got "${unsupported.join(',')}"`);
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const baseEndpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  const endpoint = tracesEndpoint || (baseEndpoint ? `${baseEndpoint.replace(/\/+$/, '')}/v1/traces` : null);
  if (endpoint && !/^https?:\/\//.test(endpoint)) problems.push('OTEL_EXPORTER_OTLP_ENDPOINT: must be an http:// or https:// URL');
  const enabled = endpoint !== null || exporters.includes('otlp');
  return { enabled, endpoint, serviceName, protocol, genAi };
}

const PROTOCOLS: readonly OtlpProtocol[] = ['http/protobuf', 'http/json'];

/** The encoding asked for (the traces variable wins over the general one); an unsupported one is a problem. */
function protocolOf(env: Env, problems: string[]): OtlpProtocol {
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const asked = env[name]?.trim();
  if (!asked) return 'http/protobuf';
  if ((PROTOCOLS as readonly string[]).includes(asked)) return asked as OtlpProtocol;
  problems.push(`${name}: only OTLP over HTTP is supported, "http/protobuf" (the default) or "http/json", got "${asked}"`);
  return 'http/protobuf';
}

/** The opt-in value of the GenAI conventions' transition plan: emit their latest version. */
const GEN_AI_OPT_IN = 'gen_ai_latest_experimental';

const listOf = (value: string | undefined): string[] => (value ?? '').split(',').map((e) => e.trim()).filter(Boolean);
