/**
 * OpenAI's request fields → their Messages equivalents: `max_tokens` (required there:
 * the model's default cap when the client set none), `temperature`, `top_p`, `top_k`,
 * `stop` → `stop_sequences`, `tools` → `{name, description, input_schema}`, `tool_choice`
 * (`required` → `any`, a named function → `tool`), `parallel_tool_calls: false` →
 * `disable_parallel_tool_use`, `response_format: json_schema` → `output_config.format`,
 * `reasoning_effort` → `thinking` with a token budget, `user` → `metadata.user_id`.
 * Anthropic's own `thinking` passes as sent. Any other field with a value that asks for
 * something is refused (or dropped, unsupported.ts); neutral values (null, `n: 1`,
 * `logprobs: false`, zero penalties) say nothing and are left out.
 */
import type { ModelSpec } from '../../../../domain/models/model-spec.types.js';
import type { Unsupported } from './unsupported.js';

type Json = Record<string, unknown>;

const obj = (v: unknown): Json | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : null);

/** Thinking budgets for OpenAI's reasoning efforts (the smallest budget Messages takes is 1024). */
const THINKING_BUDGETS: Readonly<Record<string, number>> = { low: 1024, medium: 4096, high: 16_384 };
const MIN_THINKING_BUDGET = 1024;

/** Fields whose value says nothing to Messages: Sluice's own, or the OpenAI default. */
function isNeutral(name: string, value: unknown): boolean {
  if (value === null || value === undefined) return true;
  switch (name) {
    case 'stream_options':
    case 'metadata':
      return true;
    case 'n':
      return value === 1;
    case 'logprobs':
    case 'store':
      return value === false;
    case 'presence_penalty':
    case 'frequency_penalty':
      return value === 0;
    case 'parallel_tool_calls':
      return value === true;
    default:
      return false;
  }
}

function mapTool(raw: unknown, unsupported: Unsupported): Json | null {
  const tool = obj(raw);
  const fn = obj(tool?.function);
  if (tool?.type !== 'function' || !fn) {
    unsupported.refuse(`tools[].type ${String(tool?.type)}`);
    return null;
  }
  const out: Json = { name: fn.name, input_schema: fn.parameters ?? { type: 'object', properties: {} } };
  if (typeof fn.description === 'string') out.description = fn.description;
  if (fn.strict === true) out.strict = true;
  return out;
}

function mapToolChoice(value: unknown, unsupported: Unsupported): Json | null {
  if (value === 'auto') return { type: 'auto' };
  if (value === 'none') return { type: 'none' };
  if (value === 'required') return { type: 'any' };
  const name = obj(obj(value)?.function)?.name;
  if (typeof name === 'string') return { type: 'tool', name };
  unsupported.refuse('tool_choice');
  return null;
}

function mapResponseFormat(value: unknown, body: Json, unsupported: Unsupported): void {
  const format = obj(value);
  if (format?.type === 'text') return;
  const schema = obj(format?.json_schema)?.schema;
  if (format?.type === 'json_schema' && obj(schema)) body.output_config = { format: { type: 'json_schema', schema } };
  else unsupported.refuse(`response_format.type ${String(format?.type)}`);
}

function mapEffort(value: unknown, body: Json, unsupported: Unsupported): void {
  if (value === 'none' || value === 'minimal') return;
  const budget = typeof value === 'string' ? THINKING_BUDGETS[value] : undefined;
  const maxTokens = body.max_tokens as number;
  if (budget === undefined || maxTokens <= MIN_THINKING_BUDGET) {
    unsupported.refuse(budget === undefined ? `reasoning_effort ${String(value)}` : 'reasoning_effort with max_tokens of 1024 or less');
    return;
  }
  body.thinking = { type: 'enabled', budget_tokens: Math.min(budget, maxTokens - 1) };
}

/** Writes the Messages equivalents of `sampling` into `body`. */
export function mapSampling(sampling: Json, body: Json, model: ModelSpec, unsupported: Unsupported): void {
  // The smaller of the two caps: billing lowers `max_tokens` to what the payer's credit grants.
  const caps = [sampling.max_completion_tokens, sampling.max_tokens].filter((n): n is number => typeof n === 'number');
  body.max_tokens = caps.length > 0 ? Math.min(...caps) : model.maxOutputTokens;
  for (const [name, value] of Object.entries(sampling)) {
    if (isNeutral(name, value)) continue;
    switch (name) {
      case 'max_tokens':
      case 'max_completion_tokens':
        break;
      case 'temperature':
      case 'top_p':
      case 'top_k':
      case 'thinking':
        body[name] = value;
        break;
      case 'stop':
        body.stop_sequences = Array.isArray(value) ? value : [value];
        break;
      case 'tools':
        if (Array.isArray(value)) body.tools = value.map((t) => mapTool(t, unsupported)).filter((t) => t !== null);
        break;
      case 'tool_choice': {
        const choice = mapToolChoice(value, unsupported);
        if (choice) body.tool_choice = Object.assign(obj(body.tool_choice) ?? {}, choice);
        break;
      }
      case 'parallel_tool_calls':
        body.tool_choice = Object.assign({ type: 'auto' }, obj(body.tool_choice), { disable_parallel_tool_use: true });
        break;
      case 'response_format':
        mapResponseFormat(value, body, unsupported);
        break;
      case 'reasoning_effort':
        mapEffort(value, body, unsupported);
        break;
      case 'user':
        if (typeof value === 'string') body.metadata = { user_id: value };
        break;
      default:
        unsupported.refuse(name);
    }
  }
  // `tool_choice: none` with no tools, or a choice without tools: Messages wants tools beside it.
  if (body.tool_choice && !body.tools) delete body.tool_choice;
}
