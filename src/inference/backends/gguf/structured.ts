/**
 * Structured output on in-process GGUF chat, through node-llama-cpp's grammars (GBNF,
 * made from JSON Schema by `createGrammarForJsonSchema`): sampling can only produce what
 * the grammar allows, so the answer is valid by construction.
 *
 * - `response_format` `json_schema`: JSON valid against the schema; `json_object`: any JSON.
 * - `tools` with `tool_choice` `required` or a named function: a call
 *   `{"name": <a tool's name>, "arguments": <valid against its parameters>}`, answered as
 *   a `tool_calls` entry. `auto` (the default when tools are sent) lets the model choose
 *   between text and calls, which a grammar cannot decide for it: that is node-llama-cpp's
 *   function calling (functions.ts); `none` answers text.
 *
 * node-llama-cpp reads a subset of JSON Schema (types, properties, items, enum, const,
 * oneOf/anyOf, $defs); it emits every listed property and ignores keywords it does not
 * know (pattern, minLength, …).
 */
import { invalidRequest } from '../../../domain/shared/errors.js';
import { randomString } from '../../../domain/shared/ids.js';
import type { ChatParams, ToolCallOut } from '../../../domain/models/inference-backend.port.js';
import type { LlamaGrammar } from './llama-api.js';
import type { GgufModel } from './loader.js';

export type OutputForm =
  | { kind: 'text' }
  | { kind: 'json'; grammar: LlamaGrammar }
  | { kind: 'tool'; grammar: LlamaGrammar }
  | { kind: 'functions'; functions: FunctionDef[] };

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;
const TEXT: OutputForm = { kind: 'text' };

export interface FunctionDef {
  name: string;
  description: string | undefined;
  parameters: Json;
}

function functionOf(tool: unknown, param: string): FunctionDef {
  const fn = isObject(tool) && tool.type === 'function' && isObject(tool.function) ? tool.function : null;
  if (!fn) throw invalidRequest(`${param} must be {"type": "function", "function": {...}}`, param);
  if (typeof fn.name !== 'string' || !FUNCTION_NAME.test(fn.name)) {
    throw invalidRequest(`${param}.function.name must be 1 to 64 letters, digits, underscores or dashes`, `${param}.function.name`);
  }
  if (fn.parameters !== undefined && !isObject(fn.parameters)) throw invalidRequest(`${param}.function.parameters must be a JSON Schema object`, `${param}.function.parameters`);
  const description = typeof fn.description === 'string' && fn.description !== '' ? fn.description : undefined;
  return { name: fn.name, description, parameters: (fn.parameters as Json | undefined) ?? { type: 'object', properties: {} } };
}

/** The request's tools; two with one name are refused (a call names its function). */
function functionsOf(tools: readonly unknown[]): FunctionDef[] {
  const seen = new Set<string>();
  return tools.map((tool, i) => {
    const def = functionOf(tool, `tools[${i}]`);
    if (seen.has(def.name)) throw invalidRequest(`tools[${i}].function.name ${JSON.stringify(def.name)} is the name of an earlier tool`, `tools[${i}].function.name`);
    seen.add(def.name);
    return def;
  });
}

/** The tools a call must be made to under `tool_choice` `required` or a named function; refuses a name no tool has. */
function chosenTools(tools: FunctionDef[], choice: unknown): FunctionDef[] {
  if (choice === 'required') return tools;
  if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string') {
    const name = choice.function.name;
    const tool = tools.find((t) => t.name === name);
    if (!tool) throw invalidRequest(`tool_choice names function ${JSON.stringify(name)}, which is not in tools`, 'tool_choice');
    return [tool];
  }
  throw invalidRequest('tool_choice must be none, auto, required, or {"type": "function", "function": {"name": ...}}', 'tool_choice');
}

async function grammarFor(m: GgufModel, schema: Json, param: string, modelId: string): Promise<LlamaGrammar> {
  try {
    return await m.llama.createGrammarForJsonSchema(schema);
  } catch (err) {
    const reason = err instanceof Error ? err.message : 'unreadable';
    throw invalidRequest(`${param} is not supported by model ${modelId}: its JSON Schema cannot be made a grammar (${reason})`, param);
  }
}

/** What the answer must be, from `tools`/`tool_choice` and `response_format`; refuses what cannot be honoured. */
export async function outputFormOf(m: GgufModel, params: ChatParams): Promise<OutputForm> {
  const { tools, tool_choice: choice, response_format: format } = params.sampling;
  const modelId = params.model.id;
  if (Array.isArray(tools) && tools.length > 0 && choice !== 'none') {
    const defs = functionsOf(tools);
    if (choice === undefined || choice === 'auto') return { kind: 'functions', functions: defs };
    const chosen = chosenTools(defs, choice);
    const calls = chosen.map((t) => ({ type: 'object', properties: { name: { const: t.name }, arguments: t.parameters } }));
    return { kind: 'tool', grammar: await grammarFor(m, calls.length === 1 ? calls[0]! : { oneOf: calls }, 'tools', modelId) };
  }
  if (format === undefined || !isObject(format) || format.type === 'text') return TEXT;
  if (format.type === 'json_object') return { kind: 'json', grammar: await m.llama.getGrammarFor('json') };
  if (format.type !== 'json_schema') throw invalidRequest('response_format.type must be text, json_object or json_schema', 'response_format.type');
  const schema = isObject(format.json_schema) ? format.json_schema.schema : undefined;
  if (!isObject(schema)) throw invalidRequest('response_format.json_schema.schema must be a JSON Schema object', 'response_format.json_schema.schema');
  return { kind: 'json', grammar: await grammarFor(m, schema, 'response_format.json_schema.schema', modelId) };
}

/** The call a tool-form answer made; null when it is not one (generation stopped before the grammar completed). */
export function toolCallOf(text: string): ToolCallOut | null {
  let call: unknown;
  try {
    call = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(call) || typeof call.name !== 'string') return null;
  return { id: `call_${randomString(24, 'base64url')}`, name: call.name, arguments: JSON.stringify(call.arguments ?? {}) };
}
