/**
 * The inbound wire formats, listed once: the `/v1` routes, the gateway's, the batch
 * runner's endpoints and the OpenAPI document are all made from this list. Adding a wire
 * is its folder (src/wire/<format>/) and one line here. The app takes another list where
 * it is assembled (CoreOverrides `wireFormats`).
 */
import { chatCompletionsWire } from './chat-completions/index.js';
import { completionsWire } from './completions/index.js';
import { embeddingsWire } from './embeddings/index.js';
import { MESSAGES_WIRES } from './messages/index.js';
import { moderationsWire } from './moderations/index.js';
import { responsesWire } from './responses/index.js';
import type { WireFormat } from './wire-format.js';

/** In the order the routes are mounted (and the OpenAPI document lists them). */
export const WIRE_FORMATS: readonly WireFormat[] = [chatCompletionsWire, completionsWire, responsesWire, ...MESSAGES_WIRES, embeddingsWire, moderationsWire];
