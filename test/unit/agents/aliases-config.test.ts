/** The aliases' start-up refusals, each naming its key, and how names resolve in the registry. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/load.js';
import { ModelRegistry } from '../../../src/inference/registry.js';
import { tempDir } from '../../helpers/databases.js';

const ENGINE = 'http://127.0.0.1:9/v1';

function load(yaml: string) {
  const dir = tempDir('sluice-aliases-');
  writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
  return loadConfig({ SLUICE_CONFIG: 'sluice.yaml', DATA_DIR: dir }, dir);
}

function problemsOf(yaml: string): string[] {
  try {
    load(yaml);
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems;
  }
}

const models = (aliases = '[]') => `models:\n  big-coder: { base_url: ${ENGINE}, aliases: ${aliases} }\n  small-coder: { base_url: ${ENGINE} }\n`;

describe('alias refusals at start-up', () => {
  it.each([
    [`${models('[small-coder]')}`, 'models.big-coder.aliases[0]: small-coder is already the name of the model small-coder; an alias must be a name of its own'],
    [`${models('[gpt-oss-120b]')}`, 'models.big-coder.aliases[0]: gpt-oss-120b is already the name of the model gpt-oss-120b; an alias must be a name of its own'],
    [`${models('[all-MiniLM-L6-v2]')}`, 'models.big-coder.aliases[0]: all-MiniLM-L6-v2 is already the name of the model all-minilm-l6-v2'],
    [`${models()}aliases:\n  Big-Coder: small-coder\n`, 'aliases.Big-Coder: Big-Coder is already the name of the model big-coder'],
    [`${models('[claude-x]')}aliases:\n  claude-x: small-coder\n`, 'aliases.claude-x: claude-x is already an alias (models.big-coder.aliases[0])'],
    [`${models()}aliases:\n  claude-*: no-such-model\n`, 'aliases.claude-*: no-such-model is not a model (an alias names a model id)'],
    [`${models()}aliases:\n  sonnet: no-such-model\n`, 'aliases.sonnet: no-such-model is not a model'],
    [`${models('["a/b"]')}`, 'models.big-coder.aliases[0]: a model id starts with a letter or digit'],
    [`${models()}aliases:\n  "claude/*": big-coder\n`, 'aliases."claude/*": a glob alias has only letters, digits'],
  ])('refuses %#', (yaml, problem) => {
    const problems = problemsOf(yaml);
    expect(problems.some((p) => p.startsWith(problem)), problems.join('\n')).toBe(true);
  });

  it('accepts a glob that a model id also matches (the id wins)', () => {
    expect(problemsOf(`${models()}aliases:\n  "*-coder": big-coder\n`)).toEqual([]);
  });
});

describe('resolving names', () => {
  const config = load(`${models('[claude-sonnet-4-6]')}aliases:\n  claude-*haiku*: small-coder\n  claude-*: big-coder\n  "*-coder": big-coder\n  sonnet: big-coder\n`);
  const registry = new ModelRegistry(config, pino({ level: 'silent' }));

  it('ids first, then exact aliases, then globs in file order', () => {
    expect(registry.find('small-coder')!.id).toBe('small-coder');
    expect(registry.isAlias('small-coder')).toBe(false);
    expect(registry.find('claude-sonnet-4-6')!.id).toBe('big-coder');
    expect(registry.find('SONNET')!.id).toBe('big-coder');
    expect(registry.find('claude-3-5-haiku-latest')!.id).toBe('small-coder');
    expect(registry.find('claude-opus-4-7')!.id).toBe('big-coder');
    expect(registry.isAlias('claude-opus-4-7')).toBe(true);
    expect(registry.find('claude')).toBeUndefined();
    expect(registry.find('gpt-7')).toBeUndefined();
  });

  it('lists the exact aliases, then the globs in order', () => {
    expect(registry.aliases().map((a) => [a.pattern, a.model.id, a.glob])).toEqual([
      ['claude-sonnet-4-6', 'big-coder', false],
      ['sonnet', 'big-coder', false],
      ['claude-*haiku*', 'small-coder', true],
      ['claude-*', 'big-coder', true],
      ['*-coder', 'big-coder', true],
    ]);
  });

  it('a name longer than any id is no glob match', () => {
    expect(registry.find(`claude-${'x'.repeat(200)}`)).toBeUndefined();
  });
});
