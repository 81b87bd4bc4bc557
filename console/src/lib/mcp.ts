/**
 * The "Connect an agent" page's logic: the `mcp.json` an MCP client reads (this server's
 * endpoint and the key header, with a placeholder for the key: the console never holds
 * one), the `tools/list` request it sends (anonymous: discovery needs no credential, on
 * the 2026-07-28 revision, its protocol envelope in `params._meta` and its method in a
 * header, as the official client sends it), and each tool's price in words.
 */
export const MCP_VERSION = '2026-07-28';
const KEY_PLACEHOLDER = '<your API key>';

export interface McpTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: { properties?: Record<string, { enum?: unknown[] }>; required?: string[] };
  _meta?: Record<string, unknown>;
}

export type ToolPrice =
  | { unit: 'usd_per_million_tokens'; models: Record<string, { input: number; output: number }> }
  | { unit: 'usd_per_call'; amount: number };

/** The `mcp.json` entry for this server (Claude Desktop, Cursor, VS Code and others read it). */
export function mcpJson(origin: string, mcpPath: string): string {
  const config = { mcpServers: { sluice: { url: `${origin}${mcpPath}`, headers: { Authorization: `Bearer ${KEY_PLACEHOLDER}` } } } };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** The request of `tools/list`: headers and body. */
export function toolsListRequest(): { headers: Record<string, string>; body: string } {
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MCP_VERSION,
      'mcp-method': 'tools/list',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MCP_VERSION,
          'io.modelcontextprotocol/clientInfo': { name: 'sluice-console', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  };
}

/** The tools of a `tools/list` answer (JSON, or an event stream's one message); an error answer throws its message. */
export function toolsOf(text: string, contentType: string): McpTool[] {
  const json = contentType.startsWith('text/event-stream') ? (/^data: (.*)$/m.exec(text)?.[1] ?? '') : text;
  const message = JSON.parse(json) as { result?: { tools?: McpTool[] }; error?: { message?: string } };
  if (message.error) throw new Error(message.error.message ?? 'The MCP endpoint answered an error');
  return message.result?.tools ?? [];
}

/** The models a tool's `model` argument takes (none for tools without one). */
export const toolModels = (tool: McpTool): string[] => (tool.inputSchema.properties?.model?.enum ?? []).map(String);

/** A tool's price (`_meta["sluice/price"]`) in words. */
export function priceText(price: ToolPrice | undefined): string {
  if (!price) return 'not priced';
  if (price.unit === 'usd_per_call') return price.amount === 0 ? 'free' : `$${price.amount} per call`;
  const quotes = Object.entries(price.models).map(([id, p]) => `${id}: $${p.input} in / $${p.output} out`);
  return `per million tokens — ${quotes.join('; ')}`;
}

export const priceOf = (tool: McpTool): ToolPrice | undefined => tool._meta?.['sluice/price'] as ToolPrice | undefined;
