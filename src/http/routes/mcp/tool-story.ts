/**
 * A model called as an MCP tool is one entry of the request log, as the same call on its
 * REST route is: route `mcp/<tool>` (its usage record's), wire `mcp`, scope `mcp`, opened
 * when the tool runs for a caller (an API key's, an agent token's, or the seller's meter
 * of a call paid per call) and submitted when the tool answers, with the status its
 * result carries. The batch tools run no model (their lines are logged as they run).
 */
import type { FastifyRequest } from 'fastify';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { CallStory } from '../../../domain/request-log/call-story.js';
import type { RequestLogSink } from '../../../domain/request-log/request-log.port.js';
import type { Caller } from '../../../domain/identity/caller.js';
import type { McpToolName } from '../../../domain/mcp/tool-catalogue.js';
import { openCallStory, type StoryRoute } from '../../call-story.js';

const UNLOGGED_TOOLS: ReadonlySet<McpToolName> = new Set(['batch_create', 'batch_get']);

/** Where a tool's calls are logged; null for a tool that runs no model. */
export function toolStoryRoute(tool: McpToolName, usageRoute: string): StoryRoute | null {
  return UNLOGGED_TOOLS.has(tool) ? null : { route: usageRoute, wire: 'mcp', scope: 'mcp' };
}

/** Opens the story of a tool call on its caller (the meter and the router tell it the rest). */
export function openToolStory(log: RequestLogSink, where: StoryRoute, request: FastifyRequest, caller: Caller, args: Record<string, unknown>): CallStory {
  return openCallStory(log, where, { id: request.id, request, caller, body: args, stream: false });
}

/**
 * Submits the story with the status of the tool's result: 200, or the refusal's (its
 * structured content's `status` and code, else, for an x402 quote, the error's that the
 * story saw: 402 `payment_required`).
 */
export function submitToolStory(log: RequestLogSink, story: CallStory, result: CallToolResult): void {
  if (result.isError === true) {
    const content = result.structuredContent as { status?: unknown; error?: { code?: unknown } } | undefined;
    const status = typeof content?.status === 'number' ? content.status : (story.errorStatus ?? 500);
    const code = content?.error?.code;
    if (typeof code === 'string') story.failed(code);
    else if (story.errorCode === null) story.failed(null);
    log.submit(story, status);
    return;
  }
  log.submit(story, 200);
}
