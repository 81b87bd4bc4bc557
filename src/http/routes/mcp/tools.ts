/**
 * The MCP tools: each offer of the catalogue (domain/mcp/tool-catalogue.ts) becomes a tool
 * whose input schema is the REST route's own TypeBox body (one definition), narrowed to
 * the ready models, and whose handler calls the same domain service as the REST route,
 * with the caller the scope admitted, so a tool call is metered, held and recorded
 * exactly as the REST call (its usage record says `mcp/<tool>`).
 *
 * The arguments of the inference tools are checked by the REST route's own validator
 * (src/wire, as for batch lines) and the others by their services, so the SDK only checks
 * that arguments are an object, and a bad argument is answered with the REST route's code
 * and message.
 */
import { fromJsonSchema, type CallToolResult, type jsonSchemaValidator, type JsonSchemaType, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { TSchema } from '@sinclair/typebox';
import type { Caller } from '../../../domain/identity/caller.js';
import type { ChatCompletionsPort } from '../../../domain/completions/chat-completions.port.js';
import type { DecisionService } from '../../../domain/decision/decision.service.js';
import type { BatchesService } from '../../../domain/batches/batches.service.js';
import { mcpUsageRoute, type McpToolName, type ToolOffer, type ToolPrice } from '../../../domain/mcp/tool-catalogue.js';
import { PAYABLE_TOOLS, type CallRun, type McpPayments, type PaidCall } from '../../../domain/mcp/paid-calls.js';
import { AppError, isAppError } from '../../../domain/shared/errors.js';
import { errorEnvelope, statusOfKind, type StatusOverrides } from '../../errors.js';
import { DECISION_STATUSES } from '../v1/systemone.js';
import { batchWire } from '../../mappers/files-batches.js';
import { ChatCompletionBody } from '../../../wire/chat-completions.js';
import { EmbeddingsBody, type EmbeddingsRequestBody } from '../../../wire/embeddings.js';
import { ModerationsBody, type ModerationsRequestBody } from '../../../wire/moderations.js';
import { parseBody } from '../../../wire/validate.js';
import { WORDING_KEYWORD } from '../../../wire/wording.js';
import { DecisionBody } from '../../schemas/decision.js';
import { BatchCreateBody, BatchIdParams } from '../../schemas/files-batches.js';
import { paymentAttemptOf, paymentRequiredResult, settlementMeta } from './x402.js';

/** A service that takes a validated body on behalf of a caller, as the REST routes call it. */
interface BodyService<Body> {
  create(caller: Caller, body: Body, context: { requestId: string; signal: AbortSignal; route?: string }): Promise<unknown>;
}

/** Exactly the services the MCP tools call. */
export interface McpToolServices {
  chat: ChatCompletionsPort;
  embeddings: BodyService<EmbeddingsRequestBody>;
  moderations: BodyService<ModerationsRequestBody>;
  decision: Pick<DecisionService, 'decide'>;
  batches: Pick<BatchesService, 'create' | 'retrieve'>;
}

/** What one tool call runs with: the admitted caller (null when the request presented no credential). */
export interface ToolCall {
  caller: Caller | null;
  /** Per-call payment over x402 for callers with no credential; null when the storefront takes no x402. */
  payments: McpPayments | null;
  requestId: string;
  signal: AbortSignal;
  /** Reports a fault that is not an AppError (answered as an opaque internal error). */
  onFault(err: unknown): void;
}

export interface ToolDefinition {
  name: McpToolName;
  config: { title: string; description: string; inputSchema: StandardSchemaWithJSON; _meta: Record<string, unknown> };
  /** `meta`: the call's `params._meta` (an x402 payment rides there). */
  run(args: Record<string, unknown>, call: ToolCall, meta?: Readonly<Record<string, unknown>>): Promise<CallToolResult>;
}

/** The `_meta` key of a tool's price. */
export const PRICE_META_KEY = 'sluice/price';

/** The fields of a chat completion a tool call may set: an answer, never a stream. */
const CHAT_FIELDS = ['model', 'messages', 'max_tokens', 'temperature', 'response_format'] as const;

/** The routes' validators and the services word faults; the SDK only requires an object (the protocol's own rule). */
const objectOnly: jsonSchemaValidator = {
  getValidator: <T>() => (input: unknown) =>
    typeof input === 'object' && input !== null && !Array.isArray(input)
      ? { valid: true as const, data: input as T, errorMessage: undefined }
      : { valid: false as const, data: undefined, errorMessage: 'arguments must be an object' },
};

/** The JSON of a TypeBox schema without the wording annotations (they are the server's own). */
function plainSchema(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema, (key, value: unknown) => (key === WORDING_KEYWORD ? undefined : value))) as Record<string, unknown>;
}

/** `schema` with only `fields`, its `model` limited to the ready models. */
function narrowed(schema: TSchema, models: readonly string[], fields?: readonly string[]): Record<string, unknown> {
  const plain = plainSchema(schema);
  const properties = plain.properties as Record<string, Record<string, unknown>>;
  const kept = fields ? Object.fromEntries(fields.map((f) => [f, properties[f]!])) : { ...properties };
  if (kept.model) kept.model = { ...kept.model, enum: [...models] };
  const required = (plain.required as string[] | undefined)?.filter((r) => r in kept);
  return { ...plain, properties: kept, ...(required ? { required } : {}) };
}

const field = (args: Record<string, unknown>, name: string): unknown => (Object.hasOwn(args, name) ? args[name] : undefined);

const pick = (args: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> => {
  const picked: Record<string, unknown> = {};
  for (const name of fields) if (Object.hasOwn(args, name)) picked[name] = args[name];
  return picked;
};

type Runner = (services: McpToolServices, caller: Caller, args: Record<string, unknown>, call: ToolCall, route: string) => Promise<unknown>;

interface ToolSpec {
  title: string;
  description: string;
  /** The REST route's own statuses, where they differ from the default table. */
  statuses?: StatusOverrides;
  schema: (models: readonly string[]) => Record<string, unknown>;
  run: Runner;
}

const context = (call: ToolCall, route: string) => ({ requestId: call.requestId, signal: call.signal, route });

function batchIdOf(args: Record<string, unknown>): string {
  const id = field(args, 'batch_id');
  if (typeof id !== 'string' || id === '') throw new AppError('invalid_request', 'batch_id must be a non-empty string', { param: 'batch_id', code: 'invalid_request_error' });
  return id;
}

const TOOL_SPECS: Readonly<Record<McpToolName, ToolSpec>> = {
  chat: {
    title: 'Chat completion',
    description: 'Answer a conversation with a chat model (one answer, no stream). response_format {"type": "json_schema", "json_schema": {"name", "schema"}} asks for JSON by a schema.',
    schema: (models) => narrowed(ChatCompletionBody, models, CHAT_FIELDS),
    run: (s, caller, args, call, route) => s.chat.create(caller, parseBody(ChatCompletionBody, pick(args, CHAT_FIELDS)), context(call, route)),
  },
  embed: {
    title: 'Embeddings',
    description: 'One vector per input text.',
    schema: (models) => narrowed(EmbeddingsBody, models),
    run: (s, caller, args, call, route) => s.embeddings.create(caller, parseBody(EmbeddingsBody, args), context(call, route)),
  },
  moderate: {
    title: 'Moderation',
    description: 'Classify texts against the moderation categories.',
    schema: (models) => narrowed(ModerationsBody, models),
    run: (s, caller, args, call, route) => s.moderations.create(caller, parseBody(ModerationsBody, args), context(call, route)),
  },
  decide: {
    title: 'Decision',
    description: 'Answer up to 16 named yes/no (noul), choice and score questions about one state (the /v1/systemone questions).',
    statuses: DECISION_STATUSES,
    schema: (models) => narrowed(DecisionBody, models),
    run: (s, caller, args, call, route) => s.decision.decide(caller, args, context(call, route)),
  },
  batch_create: {
    title: 'Create a batch',
    description: 'Start a batch over an uploaded .jsonl file of purpose batch; its lines are paid as they run.',
    schema: () => plainSchema(BatchCreateBody),
    run: async (s, caller, args) => batchWire(await s.batches.create(caller.principal, args)),
  },
  batch_get: {
    title: 'Retrieve a batch',
    description: "A batch of the caller's project: its status, counts and output file.",
    schema: () => plainSchema(BatchIdParams),
    run: async (s, caller, args) => batchWire(await s.batches.retrieve(caller.principal.projectId, batchIdOf(args))),
  },
};

/** A tool's answer: the REST answer as structured content, and its JSON as text. */
const answered = (value: unknown): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
  structuredContent: value as Record<string, unknown>,
});

/** A refusal as a tool result: the REST error envelope and status, so codes match the REST route's. */
export function refused(error: AppError, statuses?: StatusOverrides): CallToolResult {
  const envelope = errorEnvelope(error);
  return {
    isError: true,
    content: [{ type: 'text', text: envelope.error.message }],
    structuredContent: { status: statuses?.[error.kind] ?? statusOfKind(error.kind), ...envelope },
  };
}

/** What a tool call with no credential needs where it cannot be paid per call. */
export const credentialRequired = () =>
  new AppError('authentication', 'This tool call needs a credential: an API key as "Authorization: Bearer <API key>" or "x-api-key: <API key>"', {
    code: 'missing_api_key',
  });

const INTERNAL = new AppError('internal', 'Internal server error', { code: 'internal_error' });

/** The tool definitions of the offers, with their schemas compiled once. */
export function toolDefinitions(offers: readonly ToolOffer[], services: McpToolServices): ToolDefinition[] {
  return offers.map((offer) => {
    const spec = TOOL_SPECS[offer.name];
    const route = mcpUsageRoute(offer.name);
    return {
      name: offer.name,
      config: {
        title: spec.title,
        description: `${spec.description} ${priceText(offer.price)}`,
        inputSchema: fromJsonSchema(spec.schema(offer.models) as JsonSchemaType, objectOnly),
        _meta: { [PRICE_META_KEY]: offer.price },
      },
      async run(args, call, meta) {
        try {
          if (call.caller) return answered(await spec.run(services, call.caller, args, call, route));
          if (!call.payments || !PAYABLE_TOOLS.has(offer.name)) return refused(credentialRequired());
          const { paid, challenge } = await paidCall(call.payments, offer.name, (caller) => spec.run(services, caller, args, call, route), meta);
          if (!paid) return challenge;
          return { ...answered(paid.value), _meta: settlementMeta(paid.headers, paid.receipt) };
        } catch (err) {
          if (isAppError(err)) {
            if (statusOfKind(err.kind) >= 500) call.onFault(err);
            return refused(err, spec.statuses);
          }
          call.onFault(err);
          return refused(INTERNAL);
        }
      },
    };
  });
}

/** Settles the call's payment, or answers the x402 challenge when it presents none. */
async function paidCall(
  payments: McpPayments,
  tool: McpToolName,
  run: CallRun<unknown>,
  meta?: Readonly<Record<string, unknown>>,
): Promise<{ paid: PaidCall<unknown>; challenge?: never } | { paid?: never; challenge: CallToolResult }> {
  try {
    return { paid: await payments.run(tool, run, paymentAttemptOf(meta)) };
  } catch (err) {
    const challenge = isAppError(err) && err.code === 'payment_required' ? paymentRequiredResult(err) : null;
    if (challenge) return { challenge };
    throw err;
  }
}

function priceText(price: ToolPrice): string {
  if (price.unit === 'usd_per_call') return price.amount === 0 ? 'Free.' : `USD ${price.amount} per call.`;
  const quotes = Object.entries(price.models).map(([id, p]) => `${id}: input ${p.input}, output ${p.output}`);
  return `Price, USD per million tokens: ${quotes.join('; ')}.`;
}
