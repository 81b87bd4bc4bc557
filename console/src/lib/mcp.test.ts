import { describe, expect, it } from 'vitest';
import { mcpJson, priceText, toolModels, toolsListRequest, toolsOf } from './mcp.js';

describe('the Connect an agent page', () => {
  it('writes the mcp.json of this server with the key header as a placeholder', () => {
    expect(JSON.parse(mcpJson('https://sluice.example', '/mcp'))).toEqual({
      mcpServers: { sluice: { url: 'https://sluice.example/mcp', headers: { Authorization: 'Bearer <your API key>' } } },
    });
  });

  it('asks tools/list on 2026-07-28 with its envelope and method header', () => {
    const { headers, body } = toolsListRequest();
    expect(headers['mcp-protocol-version']).toBe('2026-07-28');
    expect(headers['mcp-method']).toBe('tools/list');
    expect(JSON.parse(body)).toMatchObject({ jsonrpc: '2.0', method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } } });
  });

  it('reads the tools of a JSON or an event-stream answer, and throws an error answer', () => {
    const tools = [{ name: 'chat', inputSchema: { properties: { model: { enum: ['a', 'b'] } } } }];
    const json = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { tools } });
    expect(toolsOf(json, 'application/json')).toEqual(tools);
    expect(toolsOf(`event: message\ndata: ${json}\n\n`, 'text/event-stream')).toEqual(tools);
    expect(toolModels(tools[0]!)).toEqual(['a', 'b']);
    expect(() => toolsOf(JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found' } }), 'application/json')).toThrow('Method not found');
  });

  it('says prices in words', () => {
    expect(priceText({ unit: 'usd_per_call', amount: 0 })).toBe('free');
    expect(priceText({ unit: 'usd_per_million_tokens', models: { m: { input: 0.15, output: 0.6 } } })).toBe('per million tokens — m: $0.15 in / $0.6 out');
    expect(priceText(undefined)).toBe('not priced');
  });
});
