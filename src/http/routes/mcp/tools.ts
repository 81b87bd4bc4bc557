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
import { mcpUsageRoute, type McpToolName, type ToolOffer, type ToolPrice } from '../../../domain/mcp/tool-catalogue.js';
import { PAYABLE_TOOLS, type CallRun, type McpPayments, type PaidCall } from '../../../domain/mcp/paid-calls.js';
import { AppError, isAppError } from '../../../domain/shared/errors.js';
import { openAIErrorEnvelope } from '../../../wire/openai-errors.js';
import { statusOfKind, type StatusOverrides } from '../../errors.js';
import { REST_TOOLS } from './rest-tools.js';
import { TASK_TOOLS } from './task-tools.js';
import { TRANSCRIBE_TOOL } from './transcribe-tool.js';
import type { McpToolServices, ToolCall, ToolSpec } from './tool-spec.js';
import { paymentAttemptOf, paymentRequiredResult, settlementMeta } from './x402.js';

export type { McpToolServices, ToolCall } from './tool-spec.js';

type ToolConfig = { title: string; description: string; inputSchema: StandardSchemaWithJSON; _meta: Record<string, unknown> };

export interface ToolDefinition {
  name: McpToolName;
  /** What `tools/list` advertises. */
  config: ToolConfig;
  /**
   * The same with an `inputSchema` of just "an object", for the server of a `tools/call`: there
   * the advertised schema's only reader is the SDK's scan for `x-mcp-header` declarations, which
   * walks the whole schema on every call (most of the SDK's own per-call work for `chat`) and has
   * nothing to find, since no tool's schema declares one; the arguments are checked by the route's
   * validator either way (`objectOnly`).
   */
  callConfig: ToolConfig;
  /** `meta`: the call's `params._meta` (a payment rides there). */
  run(args: Record<string, unknown>, call: ToolCall, meta?: Readonly<Record<string, unknown>>): Promise<CallToolResult>;
}

/** The `_meta` key of a tool's price. */
export const PRICE_META_KEY = 'sluice/price';

/** The routes' validators and the services word faults; the SDK only requires an object (the protocol's own rule). */
const objectOnly: jsonSchemaValidator = {
  getValidator: <T>() => (input: unknown) =>
    typeof input === 'object' && input !== null && !Array.isArray(input)
      ? { valid: true as const, data: input as T, errorMessage: undefined }
      : { valid: false as const, data: undefined, errorMessage: 'arguments must be an object' },
};

/** A tool call's arguments as the SDK sees them: an object. */
const ARGUMENTS_OBJECT = fromJsonSchema({ type: 'object' } as JsonSchemaType, objectOnly);

const TOOL_SPECS: Readonly<Record<McpToolName, ToolSpec>> = { ...REST_TOOLS, ...TASK_TOOLS, transcribe: TRANSCRIBE_TOOL };

/** A tool's answer: the REST answer as structured content, and its JSON as text. */
const answered = (spec: ToolSpec, value: unknown): CallToolResult => {
  const structured = spec.answer ? spec.answer(value) : (value as Record<string, unknown>);
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
};

/** A refusal as a tool result: the REST error envelope and status, so codes match the REST route's. */
export function refused(error: AppError, statuses?: StatusOverrides): CallToolResult {
  const envelope = openAIErrorEnvelope(error);
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
    const config: ToolConfig = {
      title: spec.title,
      description: `${spec.description} ${priceText(offer.price)}`,
      inputSchema: fromJsonSchema(spec.schema(offer.models, services) as JsonSchemaType, objectOnly),
      _meta: { [PRICE_META_KEY]: offer.price },
    };
    return {
      name: offer.name,
      config,
      callConfig: { ...config, inputSchema: ARGUMENTS_OBJECT },
      async run(args, call, meta) {
        const context = { call, route, offer };
        try {
          if (call.caller) return answered(spec, await spec.run(services, call.caller, args, context));
          if (!call.payments || !PAYABLE_TOOLS.has(offer.name)) return refused(credentialRequired());
          const { paid, challenge } = await paidCall(call.payments, offer.name, (caller) => spec.run(services, caller, args, context), meta);
          if (!paid) return challenge;
          return { ...answered(spec, paid.value), _meta: await settlementMeta(paid.headers, paid.receipt, meta) };
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
    return { paid: await payments.run(tool, run, await paymentAttemptOf(meta)) };
  } catch (err) {
    const challenge = isAppError(err) && err.code === 'payment_required' ? await paymentRequiredResult(err, refused(err)) : null;
    if (challenge) return { challenge };
    throw err;
  }
}

function priceText(price: ToolPrice): string {
  if (price.unit === 'usd_per_call') return price.amount === 0 ? 'Free.' : `USD ${price.amount} per call.`;
  const quotes = Object.entries(price.models).map(([id, p]) => `${id}: input ${p.input}, output ${p.output}`);
  return `Price, USD per million tokens: ${quotes.join('; ')}.`;
}
