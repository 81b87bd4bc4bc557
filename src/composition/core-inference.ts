/**
 * The core's inference part: the model registry and its backends, the inference services
 * and speech to text, the inference routes of /v1 (and those other scopes mount too), the
 * batch endpoints they serve, and the upstreams' and runtimes' state for /readyz.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import { routingMetricsOf, type Metrics } from '../observability/metrics.js';
import type { Readiness } from '../http/routes/ops.js';
import { traceBackendFactories } from '../observability/trace-decorators.js';
import { traceAttempts } from '../observability/genai-tracing.js';
import { createInferenceServices, type InferenceServices } from '../wire/inference-services.js';
import { createReasoningSeal, reasoningSecrets } from '../adapters/crypto/reasoning-seal.js';
import type { BatchEndpoint } from '../domain/batches/batch-endpoints.js';
import { BACKEND_FACTORIES, ModelRegistry } from '../inference/registry.js';
import { createOnnxBackend } from '../inference/backends/onnx/index.js';
import { createUpstreamBackend } from '../inference/upstream/upstream-backend.js';
import type { UpstreamProtocolEntry } from '../inference/upstream/protocol.js';
import { UPSTREAM_PROTOCOLS } from '../inference/upstream/protocols.js';
import { TranscriptionService } from '../domain/audio/transcription.service.js';
import { FfmpegDecoder } from '../adapters/ffmpeg/ffmpeg-decoder.js';
import { bindRoutes, type BoundRoutes } from '../http/route-module.js';
import type { BoundWireRoute } from '../http/routes/v1/wire-route.js';
import { registerModelsRoutes } from '../http/routes/v1/models.js';
import { registerAudioRoutes } from '../http/routes/v1/audio.js';
import { registerCatalogRoute } from '../http/routes/v1/catalog.js';
import type { CoreInfrastructure, CorePart } from './core-infrastructure.js';
import { lateBinding, type LateBinding } from './late-binding.js';
import { wireBatchEndpoints, wireRouteOf, wireRoutes } from './wire-formats.js';
import { bindWireSocketRoutes } from '../http/routes/v1/wire-socket-route.js';
import { SocketRegistry } from '../http/socket/socket-registry.js';
import { WIRE_FORMATS } from '../wire/formats.js';
import type { WireFormat, WireServices } from '../wire/wire-format.js';
import type { RequestLogSink } from '../domain/request-log/request-log.port.js';
import { chatCompletionsWire } from '../wire/chat-completions/index.js';
import { MESSAGES_WIRES } from '../wire/messages/index.js';

export interface CoreInference {
  /** Model id → configuration and backend. */
  registry: ModelRegistry;
  inference: InferenceServices;
  /** The service of each endpoint a batch may use, by url: the wire formats' (features register theirs). */
  batchEndpoints: Map<string, BatchEndpoint>;
  /** Speech to text (the audio transcription and translation routes). */
  transcription: TranscriptionService;
  /** Core route modules that other scopes mount too: every wire format's (the gateway), and chat's and Anthropic's messages' (the storefront). */
  routes: { wire: readonly BoundWireRoute[]; chatCompletions: BoundRoutes; messages: BoundRoutes };
  /** The service POST /v1/responses answers through: bound by the responses feature, which stores, continues and queues. */
  storedResponsesService: LateBinding<WireServices['responses']>;
  /** Where every route's calls are logged: bound by the request-log feature. */
  requestLog: LateBinding<RequestLogSink>;
  /** The inference routes of /v1. */
  apiRoutes: readonly BoundRoutes[];
  /**
   * The WebSocket of each wire format that has one: mounted on the `/v1` scope alone, never
   * shared with the scopes that mount the API's routes (a browser sends a session cookie
   * with an upgrade from any page, and an upgrade is a GET, which CSRF checks let pass).
   */
  socketRoutes: readonly BoundRoutes[];
  /** The WebSockets open on this replica (per key, for their limit; told when the app closes). */
  sockets: SocketRegistry;
  /** Per upstream model: `reachable` or `unreachable since …`, for /readyz. */
  upstreams(): Promise<Pick<Readiness, 'upstreams' | 'deployments'>>;
  /** The in-process runtimes pulled models need and this install lacks. */
  missingRuntimes(): Promise<Record<string, string>>;
}

export interface InferenceOverrides {
  /** The upstream protocols models may speak (default: this build's). */
  upstreamProtocols?: readonly UpstreamProtocolEntry[];
  /** The inbound wire formats served (default: src/wire/formats.ts's list). */
  wireFormats?: readonly WireFormat[];
}

export function createInference(infra: CoreInfrastructure, overrides: InferenceOverrides = {}): CorePart<CoreInference> {
  const { config, logger, clock, metrics } = infra;
  const registry = createRegistry(config, logger, metrics, infra.traced, overrides.upstreamProtocols);
  const inference = createInferenceServices(
    { registry, clock, logger, hygiene: config.agents },
    { hostedTools: config.responses.hostedTools, reasoning: createReasoningSeal(config.responses.reasoningKeys, config.dataDir) },
    // Thinking blocks are signed under the same server secrets as sealed reasoning (each with its own derived key).
    { serverTools: config.messages.serverTools, thinkingSecrets: () => reasoningSecrets(config.responses.reasoningKeys, config.dataDir) },
  );
  const transcription = new TranscriptionService({
    registry,
    decoder: new FfmpegDecoder(),
    onAudio: (model, route, seconds) => metrics.audioSeconds.inc({ model, route }, seconds),
  });
  const storedResponsesService = lateBinding<WireServices['responses']>('the stored-responses service of POST /v1/responses');
  const wireFormats = overrides.wireFormats ?? WIRE_FORMATS;
  // A route's /v1/responses stores, continues and runs in the background; a batch line's does not.
  const routeServices: WireServices = { ...inference, get responses() { return storedResponsesService.value; } };
  const requestLog = lateBinding<RequestLogSink>('the request log');
  const wire = wireRoutes(wireFormats, routeServices, requestLog);
  // Looked up when mounted: a list without chat fails only where a scope mounts chat.
  const routes = {
    wire,
    chatCompletions: (scope: FastifyInstance) => wireRouteOf(wire, chatCompletionsWire)(scope),
    // Anthropic's Messages routes, where a scope serves chat (the storefront).
    messages: (scope: FastifyInstance) => {
      for (const format of MESSAGES_WIRES) wireRouteOf(wire, format)(scope);
    },
  };
  const sockets = new SocketRegistry((delta) => (metrics.websocketsOpen += delta));
  const socketLimits = { ...config.responses.websocket, recheckMs: recheckIntervalMs(config.auth.cacheTtlMs) };
  const socketRoutes = bindWireSocketRoutes(wireFormats, routeServices, socketLimits, sockets, requestLog);
  const apiRoutes = [
    ...wire.map((route) => route.routes),
    bindRoutes(registerModelsRoutes, { registry }),
    bindRoutes(registerAudioRoutes, { transcription }),
    bindRoutes(registerCatalogRoute, { registry }),
  ];
  return {
    services: {
      registry, inference, transcription, routes, storedResponsesService, requestLog, apiRoutes, socketRoutes, sockets,
      batchEndpoints: wireBatchEndpoints(wireFormats, inference, registry),
      upstreams: () => upstreamReadiness(registry),
      missingRuntimes: () => missingRuntimes(registry),
    },
    close: () => registry.close(),
  };
}

/**
 * How often an open WebSocket checks its key: half the key cache's TTL (at least 100 ms,
 * at most 5 s), so a revocation this replica has seen closes its sockets within the TTL.
 */
const recheckIntervalMs = (cacheTtlMs: number): number => Math.min(5_000, Math.max(100, Math.floor(cacheTtlMs / 2)));

function createRegistry(config: Readonly<Config>, logger: Logger, metrics: Metrics, traced: boolean, protocols?: readonly UpstreamProtocolEntry[]): ModelRegistry {
  const backendFactories: typeof BACKEND_FACTORIES = {
    ...BACKEND_FACTORIES,
    onnx: (deps) => createOnnxBackend(deps, { onEmbeddingBatch: (model, size) => metrics.embeddingBatchSize.observe({ model }, size) }),
    upstream: (deps) => createUpstreamBackend(deps, { metrics: routingMetricsOf(metrics) }),
  };
  if (!traced) return new ModelRegistry(config, logger, { factories: backendFactories, protocols });
  const genAi = config.tracing.genAi;
  return new ModelRegistry(config, logger, {
    factories: traceBackendFactories(backendFactories, genAi),
    protocols: genAi ? tracedAttempts(protocols ?? UPSTREAM_PROTOCOLS) : protocols,
  });
}

/** The protocols with a span per attempt (GenAI conventions). */
const tracedAttempts = (protocols: readonly UpstreamProtocolEntry[]): UpstreamProtocolEntry[] =>
  protocols.map((entry) => ({ name: entry.name, create: (deps) => traceAttempts(entry.create(deps)) }));

/** What the last probe of each upstream model found (probing the stale ones first), and the state of each deployment of the models that list several. */
async function upstreamReadiness(registry: ModelRegistry): Promise<Pick<Readiness, 'upstreams' | 'deployments'>> {
  await registry.refreshUpstreams();
  const upstreams: Record<string, string> = {};
  const deployments: Record<string, string> = {};
  for (const model of registry.list()) {
    if (!model.binding.upstream || !model.binding.baseUrl) continue;
    const status = await registry.status(model);
    upstreams[model.id] = status.unreachable ? `unreachable since ${status.unreachable.since} (${status.unreachable.reason})` : 'reachable';
    if (model.binding.deployments.length < 2) continue;
    for (const d of status.deployments ?? []) {
      deployments[d.id] = d.state === 'cooling_down' ? `cooling down until ${d.until}` : d.state === 'unreachable' ? `unreachable since ${d.since} (${d.reason})` : 'ready';
    }
  }
  return { upstreams, deployments };
}

/** The runtimes that stand between a pulled in-process model and its first call, e.g. `gguf: GGUF runtime not installed: run …`. */
async function missingRuntimes(registry: ModelRegistry): Promise<Record<string, string>> {
  const missing: Record<string, string> = {};
  for (const model of registry.list()) {
    if (model.binding.upstream) continue;
    const status = await registry.status(model);
    if (status.missingRuntime) missing[status.missingRuntime] = `${status.publicDetail ?? status.detail}: ${status.remedy ?? 'see the server log'}`;
  }
  return missing;
}
