/**
 * Models bound to an upstream: `upstream: {protocol, deployments}`, the older spellings
 * (`base_url`, `deployments`, `backend: openai`) read as before, and a protocol this build
 * does not speak refused at start-up with the ones it does.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { UPSTREAM_PROTOCOLS } from '../../src/inference/upstream/protocols.js';
import { toyProtocol } from '../helpers/toy-protocol.js';
import { tempDir } from '../helpers/databases.js';

function load(yaml: string) {
  const dir = tempDir('sluice-upstream-');
  writeFileSync(path.join(dir, 'sluice.yaml'), yaml);
  return loadConfig({ SLUICE_CONFIG: 'sluice.yaml' }, dir);
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

const A = 'http://127.0.0.1:9001/v1';
const B = 'http://127.0.0.1:9002/v1';
const silent = pino({ level: 'silent' });

describe('upstream bindings', () => {
  it('reads upstream: {protocol, deployments} as the model deployments under that protocol', () => {
    const config = load(`models:\n  m:\n    kind: chat\n    upstream:\n      protocol: toy\n      deployments: [{ id: a, base_url: ${A} }, { id: b, base_url: ${B}, weight: 3 }]\n`);
    const binding = config.models.m!.binding;
    expect(binding.backend).toBe('upstream');
    expect(binding.upstream?.protocol).toBe('toy');
    expect(binding.upstream?.deployments.map((d) => [d.id, d.weight])).toEqual([['a', 1], ['b', 3]]);
    expect(binding.deployments).toBe(binding.upstream?.deployments);
    expect(binding.baseUrl).toBe(A);
  });

  it.each([
    ['base_url', `models:\n  m: { kind: chat, base_url: ${A} }\n`],
    ['deployments', `models:\n  m: { kind: chat, deployments: [{ base_url: ${A} }] }\n`],
    ['backend: openai', `models:\n  gpt-oss-120b: { backend: openai, base_url: ${A} }\n`],
    ['upstream without a protocol', `models:\n  m: { kind: chat, upstream: { deployments: [{ base_url: ${A} }] } }\n`],
  ])('binds %s to an upstream speaking the default protocol', (_what, yaml) => {
    const model = Object.values(load(yaml).models).find((m) => m.binding.baseUrl === A)!;
    expect(model.binding).toMatchObject({ backend: 'upstream', upstream: { protocol: 'openai' } });
  });

  it('leaves in-process models unbound to any upstream, and catalog upstream models bound to one with no engine', () => {
    const config = load('');
    const inProcess = Object.values(config.models).find((m) => m.binding.backend === 'onnx')!;
    expect(inProcess.binding.upstream).toBeNull();
    expect(config.models['deepseek-v4-flash']!.binding.upstream).toEqual({ protocol: 'openai', deployments: [] });
  });

  it.each([
    ['engines given twice', `models:\n  m: { kind: chat, base_url: ${B}, upstream: { deployments: [{ base_url: ${A} }] } }\n`, 'models.m.upstream.deployments: give the engines once'],
    ['a protocol backend contradicts', `models:\n  gpt-oss-120b: { backend: openai, base_url: ${A}, upstream: { protocol: toy } }\n`, 'models.gpt-oss-120b.upstream.protocol: toy, but backend says openai'],
    ['an upstream without engines', 'models:\n  m: { kind: chat, upstream: { protocol: toy } }\n', 'models.m.base_url: required'],
  ])('refuses %s, naming the path', (_what, yaml, problem) => {
    expect(problemsOf(yaml).some((p) => p.startsWith(problem))).toBe(true);
  });

  it('refuses at start-up a protocol this build does not speak, naming the ones it does', () => {
    const config = load(`models:\n  m: { kind: chat, upstream: { protocol: toy, deployments: [{ base_url: ${A} }] } }\n`);
    expect(() => new ModelRegistry(config, silent)).toThrow('models.m.upstream.protocol: unknown protocol toy (known protocols: openai)');
    expect(() => new ModelRegistry(config, silent, { protocols: [...UPSTREAM_PROTOCOLS, toyProtocol] })).not.toThrow();
  });
});
