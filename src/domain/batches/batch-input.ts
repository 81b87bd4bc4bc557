/**
 * The rules of a batch input line and of the create request, with the spec's messages
 * word for word ("Batch creation validation"), checked in the spec's order.
 */
import { AppError } from '../shared/errors.js';
import { MAX_JSON_DEPTH } from '../shared/json-depth.js';
import {
  BATCH_ENDPOINTS,
  COMPLETION_WINDOW,
  MAX_INPUT_BYTES,
  MAX_INPUT_LINES,
  MAX_LINE_BYTES,
  type BatchError,
} from './batch.types.js';

/** A create-validation failure: 400 with `line` when a line is meant. */
export const batchInvalid = (message: string, options: { line?: number; param?: string | null } = {}) =>
  new AppError('invalid_request', message, { code: 'invalid_request_error', param: options.param ?? null, line: options.line });

export const inputFileNotFound = (id: string) =>
  new AppError('not_found', `Input file not found: ${id}`, { code: 'file_not_found', param: 'input_file_id' });

export const inputObjectMissing = (id: string) =>
  new AppError('not_found', `Input file object missing: ${id}`, { code: 'file_object_missing', param: 'input_file_id' });

const INTERRUPTED_MESSAGE = 'Batch validation was interrupted; resubmit the batch';

/** The `errors` entry of a batch whose creating request died mid-validation (the sweep's verdict). */
export const VALIDATION_INTERRUPTED: BatchError = { code: 'validation_interrupted', message: INTERRUPTED_MESSAGE, line: null, param: null };

/** A creating request that outlived its heartbeat: the sweep has already failed its batch. */
export const validationInterrupted = () =>
  new AppError('internal', INTERRUPTED_MESSAGE, { code: 'validation_interrupted', expose: true });

export const noLines = () => batchInvalid('Input file contains no JSONL lines');
export const inputTooLarge = () => batchInvalid(`Input file exceeds maximum size of ${MAX_INPUT_BYTES} bytes`);
export const tooManyLines = () => batchInvalid(`Input file exceeds maximum of ${MAX_INPUT_LINES} lines`);
export const lineTooLarge = (line: number) =>
  batchInvalid(`Line ${line} exceeds maximum size of ${MAX_LINE_BYTES} bytes`, { line });
export const lineNotJson = (line: number) => batchInvalid(`Line ${line} is not valid JSON`, { line });
export const lineTooDeep = (line: number) =>
  batchInvalid(`Line ${line} nests deeper than ${MAX_JSON_DEPTH} levels, the limit for JSON bodies`, { line });

export interface CreateBatchInput {
  inputFileId: string;
  endpoint: string;
  completionWindow: string;
  metadata: Record<string, unknown>;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Reads the create body. Returns what could be read (for the failed record) and the
 * first violation, if any.
 */
export function parseCreateBody(body: unknown): { input: CreateBatchInput; error: AppError | null } {
  const b = isPlainObject(body) ? body : {};
  const input: CreateBatchInput = {
    inputFileId: typeof b.input_file_id === 'string' ? b.input_file_id : '',
    endpoint: typeof b.endpoint === 'string' ? b.endpoint : '',
    completionWindow: typeof b.completion_window === 'string' ? b.completion_window : COMPLETION_WINDOW,
    metadata: isPlainObject(b.metadata) ? b.metadata : {},
  };
  let error: AppError | null = null;
  if (typeof b.input_file_id !== 'string' || b.input_file_id === '') {
    error = batchInvalid('input_file_id is required', { param: 'input_file_id' });
  } else if (typeof b.endpoint !== 'string' || b.endpoint === '') {
    error = batchInvalid('endpoint is required', { param: 'endpoint' });
  } else if (b.completion_window !== undefined && b.completion_window !== COMPLETION_WINDOW) {
    error = batchInvalid('completion_window must be "24h"', { param: 'completion_window' });
  } else if (b.metadata !== undefined && b.metadata !== null && !isPlainObject(b.metadata)) {
    error = batchInvalid('metadata must be an object', { param: 'metadata' });
  }
  return { input, error };
}

/** What the line rules remember across lines. */
export interface LineRulesState {
  customIds: Set<string>;
  /** The url of the first line; every later line must use the same. */
  url: string | null;
}

export const newLineRulesState = (): LineRulesState => ({ customIds: new Set(), url: null });

/** Checks one parsed line; returns the violation or null. Remembers its custom_id and url. */
export function checkInputLine(value: unknown, line: number, state: LineRulesState): AppError | null {
  if (!isPlainObject(value)) return batchInvalid(`Line ${line} must be a JSON object`, { line });
  const { custom_id: customId, method, url, body } = value;
  if (typeof customId !== 'string' || customId === '') return batchInvalid(`Line ${line} is missing custom_id`, { line });
  if (state.customIds.has(customId)) {
    return batchInvalid(`Line ${line} duplicates custom_id ${JSON.stringify(customId)}`, { line });
  }
  if (typeof method !== 'string' || method.toUpperCase() !== 'POST') {
    return batchInvalid(`Line ${line} method must be "POST"`, { line });
  }
  if (typeof url !== 'string' || url === '') return batchInvalid(`Line ${line} is missing url`, { line });
  if (!BATCH_ENDPOINTS.includes(url)) {
    return batchInvalid(`Line ${line} url ${JSON.stringify(url)} is not an allowed batch endpoint`, { line });
  }
  if (state.url !== null && url !== state.url) {
    return batchInvalid(`Line ${line} url ${JSON.stringify(url)} does not match the batch endpoint ${JSON.stringify(state.url)}`, {
      line,
    });
  }
  if (!isPlainObject(body) || Object.keys(body).length === 0) return batchInvalid(`Line ${line} is missing body`, { line });
  if (body.stream === true) {
    return batchInvalid(`Line ${line} has stream=true; streaming is not supported in batch mode`, { line });
  }
  state.customIds.add(customId);
  state.url ??= url;
  return null;
}

/** The last check, once every line has passed. */
export function checkEndpointMatchesFile(endpoint: string, fileUrl: string): AppError | null {
  return endpoint === fileUrl
    ? null
    : batchInvalid(`endpoint ${JSON.stringify(endpoint)} does not match the url ${JSON.stringify(fileUrl)} used by the input file`, {
        param: 'endpoint',
      });
}
