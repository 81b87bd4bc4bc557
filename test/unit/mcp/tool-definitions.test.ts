/**
 * The tool definitions the MCP endpoint registers: what `tools/list` advertises, and the
 * lighter registration a `tools/call`'s server gets, which differs only by an input schema of
 * "an object". That is safe because no advertised schema declares an `x-mcp-header` (the
 * only thing the SDK reads a schema for on a call); the arguments are checked the same way.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { offersOf } from '../../../src/domain/mcp/tool-catalogue.js';
import { toolDefinitions, type McpToolServices } from '../../../src/http/routes/mcp/tools.js';

const config = loadConfig({ DATA_DIR: '/nonexistent-sluice-data' }, '/');
// Every model of the built-in catalogue ready: every tool offered. Nothing here runs a tool; batch_create's schema names the batchable urls.
const schemaServices: Pick<McpToolServices, 'batchable'> = { batchable: () => ['/v1/chat/completions'] };
const unusedLog = { get value(): never { throw new Error('nothing here calls a tool') } };
const definitions = toolDefinitions(offersOf(Object.values(config.models)), schemaServices as McpToolServices, unusedLog);

const jsonOf = (schema: { '~standard': unknown }) =>
  (schema['~standard'] as { jsonSchema: { input(options: object): unknown } }).jsonSchema.input({ target: 'draft-2020-12' });
const validate = (schema: { '~standard': unknown }, value: unknown) =>
  (schema['~standard'] as { validate(value: unknown): unknown }).validate(value);

describe('MCP tool definitions', () => {
  it('offers all nine tools, none of whose advertised schemas declares an x-mcp-header', () => {
    expect(definitions.map((d) => d.name)).toEqual(['chat', 'embed', 'moderate', 'classify', 'extract', 'transcribe', 'decide', 'batch_create', 'batch_get']);
    for (const d of definitions) {
      const json = JSON.stringify(jsonOf(d.config.inputSchema));
      expect(json.length).toBeGreaterThan(20);
      expect(json).not.toContain('x-mcp-header');
    }
  });

  it("registers a tools/call's tool with the same title, description and price, its schema only \"an object\"", () => {
    for (const d of definitions) {
      const { inputSchema, ...rest } = d.callConfig;
      const { inputSchema: advertised, ...advertisedRest } = d.config;
      expect(rest).toEqual(advertisedRest);
      expect(jsonOf(inputSchema)).toEqual({ type: 'object' });
      // The same check on a call either way: an object passes as is, anything else is refused.
      for (const schema of [inputSchema, advertised]) {
        expect(validate(schema, { model: 'x' })).toEqual({ value: { model: 'x' } });
        expect(validate(schema, [1])).toEqual({ issues: [{ message: 'arguments must be an object' }] });
      }
    }
  });
});
