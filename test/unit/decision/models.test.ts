/** Which model a decision request names: aliases, the configured default, 400 and 404; and its config. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load.js';
import { DecisionService } from '../../../src/domain/decision/decision.service.js';
import type { DecisionScorer } from '../../../src/domain/decision/scorer.port.js';
import { AppError } from '../../../src/domain/shared/errors.js';
import { ModelRegistry } from '../../../src/inference/registry.js';
import { tempDir } from '../../helpers/databases.js';
import pino from 'pino';

const unusedScorer: DecisionScorer = {
  open: () => {
    throw new Error('not reached');
  },
};

function service(env: Record<string, string> = {}) {
  const dir = tempDir();
  const config = loadConfig({ DATA_DIR: dir, ...env }, dir);
  return new DecisionService(new ModelRegistry(config, pino({ level: 'silent' })), unusedScorer, config.decision);
}

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a refusal');
};

describe('decision models', () => {
  it('aliases are 404 model_not_found when no default is configured', () => {
    const err = refusal(() => service().resolveModel('jev-latest'));
    expect([err.kind, err.code, err.param, err.message]).toEqual(['not_found', 'model_not_found', 'model', 'The model `jev-latest` does not exist']);
  });

  it('aliases (configured names, any case, and versioned jev ids) resolve to the default', () => {
    const s = service({ DECISION_DEFAULT_MODEL: 'zlm-v1-moderation-edge' });
    for (const name of ['jev-latest', 'JEV', 'jev-1.13.0']) expect(s.resolveModel(name).id).toBe('zlm-v1-moderation-edge');
    expect(s.resolveModel('zlm-v1-iab-classify-edge').id).toBe('zlm-v1-iab-classify-edge');
  });

  it('a known model that does not decide is 400 model_not_supported', () => {
    const err = refusal(() => service().resolveModel('all-minilm-l6-v2'));
    expect([err.kind, err.code]).toEqual(['invalid_request', 'model_not_supported']);
  });

  it('the configured default must be a decision model', () => {
    const dir = tempDir();
    expect(() => loadConfig({ DATA_DIR: dir, DECISION_DEFAULT_MODEL: 'all-minilm-l6-v2' }, dir)).toThrow(
      'decision.default_model (DECISION_DEFAULT_MODEL): all-minilm-l6-v2 is not a decision model (one of zlm-v1-iab-classify-edge, zlm-v2-iab-classify-edge-enriched, zlm-v1-iab-domain-classifier, zlm-v1-moderation-edge)',
    );
  });
});
