/**
 * What every backend factory is built with, and the factory's type: the registry makes
 * the deps, each backend (./backends/*, ./upstream) takes them. Apart from the registry
 * so that a backend imports nothing that imports it back.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { InferenceBackend } from '../domain/models/inference-backend.port.js';
import type { TokenCounter } from './token-counter.js';
import type { UpstreamProtocolEntry } from './upstream/protocol.js';

export interface BackendDeps {
  config: Readonly<Config>;
  logger: Logger;
  tokens: TokenCounter;
  /** The upstream protocols models may be bound to (the upstream backend's; the in-process runtimes ignore them). */
  protocols: readonly UpstreamProtocolEntry[];
}

export type BackendFactory = (deps: BackendDeps) => InferenceBackend;
