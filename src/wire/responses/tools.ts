/**
 * The tools of POST /v1/responses: function tools, `namespace` tools (OpenAI's group of
 * function tools under one name, which Codex sends), and the hosted tools OpenAI runs on
 * its side (web search, file search, code interpreter, image generation, computer use,
 * remote MCP) that neither Sluice nor a chat engine runs. What the engine receives of
 * them is decided by the mapper (tool-plan.ts).
 */
import { Type } from '@sinclair/typebox';
import { OptionalString, typed } from '../fields.js';
import { FunctionTool, type FunctionToolIn } from './items.js';

/** Hosted tool types, with or without a date (`web_search_2025_08_26`, `web_search_preview_2025_03_11`). */
export const HOSTED_TOOL = /^(web_search|web_search_preview|file_search|code_interpreter|image_generation|computer_use|computer_use_preview|mcp)(_\d{4}_\d{2}_\d{2})?$/;

const TOOL_TYPE = new RegExp(`^(function|namespace)$|${HOSTED_TOOL.source}`);

export interface NamespaceToolIn {
  type: 'namespace';
  name: string;
  description?: string | null;
  tools: FunctionToolIn[];
}

/** A hosted tool: only its type is read (it is dropped or refused, never run). */
export interface HostedToolIn {
  type: string;
  [field: string]: unknown;
}

export type ToolIn = FunctionToolIn | NamespaceToolIn | HostedToolIn;

const NAME = typed('string', { pattern: '^[a-zA-Z0-9_-]{1,64}$' }, { default: '{param} must be 1 to 64 letters, digits, underscores or dashes', missing: '{param} is required' });

const whenType = (type: string, then: Record<string, unknown>) => ({ if: { required: ['type'], properties: { type: { const: type } } }, then });

export const Tool = typed<ToolIn>(
  'object',
  {
    allOf: [
      {
        required: ['type'],
        properties: {
          type: typed('string', { pattern: TOOL_TYPE.source }, {
            default: '{param} "{value}" is not supported; only function, namespace and hosted tools are',
            missing: '{param} is required',
          }),
        },
      },
      whenType('function', { ...(FunctionTool as unknown as Record<string, unknown>) }),
      whenType('namespace', {
        required: ['name', 'tools'],
        properties: {
          name: NAME,
          description: OptionalString(),
          tools: typed('array', { minItems: 1, items: FunctionTool }, { default: '{param} must be a non-empty array of function tools', missing: '{param} is required' }),
        },
      }),
    ],
    properties: { type: Type.Optional(Type.String()) },
  },
  { type: '{param} must be an object' },
);
