/** Which model a decision request names: aliases, the configured default or the one ready model, 400 and 404; and its config. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { DecisionService } from '../../../src/domain/decision/decision.service.js';
import type { DecisionScorer } from '../../../src/domain/decision/scorer.port.js';
import { AppError } from '../../../src/domain/shared/errors.js';
import { ModelRegistry } from '../../../src/inference/registry.js';
import { tempDir } from '../../helpers/databases.js';
import pino from 'pino';

/** A scorer port whose models `ready` names are ready; opening is not reached here. */
const scorerWith = (ready: readonly string[] = []): DecisionScorer => ({
  open: () => {
    throw new Error('not reached');
  },
  ready: async (model) => ready.includes(model.id),
});

function service(env: Record<string, string> = {}, ready: readonly string[] = []) {
  const dir = tempDir();
  const config = loadConfig({ DATA_DIR: dir, ...env }, dir);
  return new DecisionService(new ModelRegistry(config, pino({ level: 'silent' })), scorerWith(ready), config.decision);
}

const refusal = async (fn: () => Promise<unknown>) => {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a refusal');
};

describe('decision models', () => {
  it('aliases are 404 model_not_found naming the setting when no default is configured and no decision model is ready', async () => {
    const err = await refusal(() => service().resolveModel('jev-latest'));
    expect([err.kind, err.code, err.param, err.message]).toEqual([
      'not_found',
      'model_not_found',
      'model',
      'The model `jev-latest` is an alias and no decision model is ready: set DECISION_DEFAULT_MODEL (decision.default_model) to the model it answers with',
    ]);
  });

  it('with no default, aliases answer with the one decision model that is ready', async () => {
    const s = service({}, ['zlm-v1-moderation-edge', 'all-minilm-l6-v2']);
    for (const name of ['jev-latest', 'JEV', 'jev-1.13.0']) expect((await s.resolveModel(name)).id).toBe('zlm-v1-moderation-edge');
  });

  it('aliases (configured names, any case, and versioned jev ids) resolve to the default, ready or not', async () => {
    const s = service({ DECISION_DEFAULT_MODEL: 'zlm-v1-moderation-edge' }, ['zlm-v1-iab-classify-edge']);
    for (const name of ['jev-latest', 'JEV', 'jev-1.13.0']) expect((await s.resolveModel(name)).id).toBe('zlm-v1-moderation-edge');
    expect((await s.resolveModel('zlm-v1-iab-classify-edge')).id).toBe('zlm-v1-iab-classify-edge');
  });

  it('a known model that does not decide is 400 model_not_supported', async () => {
    const err = await refusal(() => service().resolveModel('all-minilm-l6-v2'));
    expect([err.kind, err.code]).toEqual(['invalid_request', 'model_not_supported']);
  });

  it('the configured default must be a decision model', () => {
    const dir = tempDir();
    expect(() => loadConfig({ DATA_DIR: dir, DECISION_DEFAULT_MODEL: 'all-minilm-l6-v2' }, dir)).toThrow(
      'decision.default_model (DECISION_DEFAULT_MODEL): all-minilm-l6-v2 is not a decision model (one of zlm-v1-iab-classify-edge, zlm-v2-iab-classify-edge-enriched, zlm-v1-iab-domain-classifier, zlm-v1-moderation-edge)',
    );
  });
});
