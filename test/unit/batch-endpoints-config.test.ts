/** `batches.endpoints`: which endpoints a batch may use; each must be one the assembled app can batch. */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { assemble } from '../../src/composition/features.js';
import { tempDir } from '../helpers/databases.js';

function load(yaml: string | null) {
  const dir = tempDir('sluice-config-');
  if (yaml !== null) writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
  return loadConfig(yaml === null ? {} : { SLUICE_CONFIG: 'sluice.yaml' }, dir);
}

/** The configuration's problems, found where the app is assembled: which endpoints can be batched is the assembled app's. */
async function problemsOf(yaml: string): Promise<string[]> {
  try {
    const assembly = await assemble(load(yaml), { logger: pino({ level: 'silent' }) });
    await assembly.close();
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

describe('batches.endpoints', () => {
  it('defaults to the spec’s chat completions only; the file lists others', () => {
    expect(load(null).batches.endpoints).toEqual(['/v1/chat/completions']);
    expect(load('batches:\n  endpoints: [/v1/embeddings, /v1/systemone, /v1/embeddings]\n').batches.endpoints).toEqual(['/v1/embeddings', '/v1/systemone']);
    expect(load('batches:\n  endpoints: []\n').batches.endpoints).toEqual([]);
  });

  it('refuses an endpoint Sluice cannot batch, naming the ones it can (the wire formats\' in their list\'s order, then the features\')', async () => {
    expect(await problemsOf('batches:\n  endpoints: [/v1/chat/completions, /v1/images/generations]\n')).toEqual([
      'batches.endpoints: /v1/images/generations cannot be batched (one of /v1/chat/completions, /v1/completions, /v1/responses, /v1/messages, /v1/embeddings, /v1/moderations, /v1/systemone)',
    ]);
  });

  it('sluice.example.yaml enables every endpoint Sluice can batch', () => {
    const example = parseYaml(readFileSync(new URL('../../sluice.example.yaml', import.meta.url), 'utf8'));
    expect(example.batches.endpoints).toEqual(['/v1/chat/completions', '/v1/responses', '/v1/embeddings', '/v1/moderations', '/v1/completions', '/v1/systemone']);
  });
});
