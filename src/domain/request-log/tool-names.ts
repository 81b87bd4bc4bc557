/**
 * The names of the tools a model called, read from an answer or a stream event of any
 * wire: chat completions' `tool_calls` (in a message or a chunk's delta), Responses'
 * `function_call` and `custom_tool_call` items (in `output`, or a `response.output_item.added`
 * event), and Messages' `tool_use` blocks (in `content`, or a `content_block_start` event).
 */
type Json = Record<string, unknown>;

/** What is told each name (a CallStory). */
export interface ToolNameSink {
  tool(name: string): void;
}

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const TOOL_ITEMS = new Set(['function_call', 'custom_tool_call', 'tool_use', 'server_tool_use', 'mcp_call']);

function itemName(item: unknown, into: ToolNameSink): void {
  if (isObject(item) && typeof item.type === 'string' && TOOL_ITEMS.has(item.type) && typeof item.name === 'string') into.tool(item.name);
}

function toolCalls(calls: unknown, into: ToolNameSink): void {
  if (!Array.isArray(calls)) return;
  for (const call of calls) if (isObject(call) && isObject(call.function) && typeof call.function.name === 'string') into.tool(call.function.name);
}

/** Tells `into` each tool name `value` (an answer or a stream event) names. */
export function toolNamesOf(value: unknown, into: ToolNameSink): void {
  if (!isObject(value)) return;
  if (Array.isArray(value.choices)) {
    for (const choice of value.choices) {
      if (!isObject(choice)) continue;
      if (isObject(choice.message)) toolCalls(choice.message.tool_calls, into);
      if (isObject(choice.delta)) toolCalls(choice.delta.tool_calls, into);
    }
  }
  for (const list of [value.output, value.content]) if (Array.isArray(list)) for (const item of list) itemName(item, into);
  if (isObject(value.response) && Array.isArray(value.response.output)) for (const item of value.response.output) itemName(item, into);
  itemName(value.item, into);
  itemName(value.content_block, into);
}
