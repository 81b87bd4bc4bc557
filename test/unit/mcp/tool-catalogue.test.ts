/**
 * The MCP tool catalogue: tools follow the ready models (a tool with no ready model is not
 * offered; batch_get always is), prices are the models' configured token prices, the list
 * is the same object while nothing changed, and a change is announced once.
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import type { ModelConfig } from '../../../src/config/schema.js';
import { McpToolCatalogue, mcpUsageRoute } from '../../../src/domain/mcp/tool-catalogue.js';

const config = loadConfig({ DATA_DIR: '/nonexistent-sluice-data' }, '/');
const models = Object.values(config.models);

function registryWith(ready: Set<string>) {
  return { list: () => models, status: async (m: ModelConfig) => ({ ready: ready.has(m.id) }) };
}

describe('McpToolCatalogue', () => {
  it('offers a tool per route with a ready model, priced per model, and batch_get always', async () => {
    const catalogue = new McpToolCatalogue(registryWith(new Set(['gpt-oss-120b', 'bge-small-en-v1.5'])));
    const offers = await catalogue.offers();
    const gpt = config.models['gpt-oss-120b']!.price;
    const chatTasks = new Map([['gpt-oss-120b', 'chat']]);
    const tokenPrice = expect.objectContaining({ unit: 'usd_per_million_tokens' });
    expect(offers).toEqual([
      { name: 'chat', models: ['gpt-oss-120b'], tasks: chatTasks, price: { unit: 'usd_per_million_tokens', models: { 'gpt-oss-120b': { input: gpt.inputPerMillionUsd, output: gpt.outputPerMillionUsd } } } },
      { name: 'embed', models: ['bge-small-en-v1.5'], tasks: new Map([['bge-small-en-v1.5', 'embeddings']]), price: tokenPrice },
      // A chat model extracts JSON by a schema.
      { name: 'extract', models: ['gpt-oss-120b'], tasks: chatTasks, price: tokenPrice },
      { name: 'batch_create', models: ['gpt-oss-120b'], tasks: chatTasks, price: tokenPrice },
      { name: 'batch_get', models: [], tasks: new Map(), price: { unit: 'usd_per_call', amount: 0 } },
    ]);
  });

  it('offers classify over classification models, extract over GLiNER and chat models, transcribe over speech models', async () => {
    const ready = new Set(['zlm-v1-iab-classify-edge', 'deberta-v3-small', 'gliner2-base-v1', 'gliner-multi-pii-v1', 'whisper-tiny', 'zlm-v1-moderation-edge', 'gpt-oss-120b']);
    const offers = await new McpToolCatalogue(registryWith(ready)).offers();
    const byName = new Map(offers.map((o) => [o.name, o]));
    expect(byName.get('classify')!.models).toEqual(['deberta-v3-small', 'zlm-v1-iab-classify-edge']);
    expect(byName.get('extract')!.models).toEqual(['gpt-oss-120b', 'gliner2-base-v1', 'gliner-multi-pii-v1']);
    expect(byName.get('extract')!.tasks.get('gliner2-base-v1')).toBe('extraction');
    expect(byName.get('transcribe')!.models).toEqual(['whisper-tiny']);
    expect(byName.get('moderate')!.models).toEqual(['zlm-v1-moderation-edge']);
  });

  it('keeps the same list while the ready models stay, and announces a change once', async () => {
    const ready = new Set(['gpt-oss-120b']);
    let now = 0;
    let changes = 0;
    const catalogue = new McpToolCatalogue(registryWith(ready), () => changes++, () => now);
    const first = await catalogue.offers();
    now += 5_000;
    expect(await catalogue.offers()).toBe(first);
    expect(changes).toBe(0);
    ready.add('bge-small-en-v1.5');
    // Within the reuse window the list is not recomputed.
    expect(await catalogue.offers()).toBe(first);
    now += 5_000;
    const second = await catalogue.offers();
    expect(second.map((o) => o.name)).toEqual(['chat', 'embed', 'extract', 'batch_create', 'batch_get']);
    expect(changes).toBe(1);
  });

  it('treats a model whose status cannot be read as not ready', async () => {
    const catalogue = new McpToolCatalogue({ list: () => models, status: async () => Promise.reject(new Error('probe failed')) });
    expect((await catalogue.offers()).map((o) => o.name)).toEqual(['batch_get']);
  });

  it('names usage records mcp/<tool>', () => {
    expect(mcpUsageRoute('decide')).toBe('mcp/decide');
  });
});
