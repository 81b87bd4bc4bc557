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
  MAX_OUTPUT_EXPIRY_SECONDS,
  MIN_OUTPUT_EXPIRY_SECONDS,
  type BatchError,
} from './batch.types.js';
import { describe } from '../shared/describe.js';

/** A create-validation failure: 400 with `line` when a line is meant. */
export const batchInvalid = (message: string, options: { line?: number; param?: string | null; code?: string } = {}) =>
  new AppError('invalid_request', message, { code: options.code ?? 'invalid_request_error', param: options.param ?? null, line: options.line });

/** An endpoint `batches.endpoints` allows but no model here serves: refused before the input is read. */
export const endpointNotServed = (endpoint: string) =>
  batchInvalid(`endpoint ${JSON.stringify(endpoint)} is not served by any model on this server`, { param: 'endpoint', code: 'endpoint_not_served' });

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
  /** `output_expires_after.seconds`, when given and valid. */
  outputExpiresAfterSeconds: number | null;
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
    outputExpiresAfterSeconds: null,
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
  } else if (b.output_expires_after !== undefined && b.output_expires_after !== null) {
    const expiry = readOutputExpiry(b.output_expires_after);
    if (typeof expiry === 'number') input.outputExpiresAfterSeconds = expiry;
    else error = expiry;
  }
  return { input, error };
}

const EXPIRY = 'output_expires_after';

/** `output_expires_after: {anchor: 'created_at', seconds}`, in OpenAI's words when it is refused. */
function readOutputExpiry(value: unknown): number | AppError {
  const invalid = (message: string, param: string, code: string) => batchInvalid(message, { param, code });
  if (!isPlainObject(value)) {
    return invalid(`Invalid type for '${EXPIRY}': expected an object, but got ${describe(value)} instead.`, EXPIRY, 'invalid_type');
  }
  const unknown = Object.keys(value).find((k) => k !== 'anchor' && k !== 'seconds');
  if (unknown !== undefined) return invalid(`Unknown parameter: '${EXPIRY}.${unknown}'.`, `${EXPIRY}.${unknown}`, 'unknown_parameter');
  const { anchor, seconds } = value;
  if (anchor === undefined) return invalid(`Missing required parameter: '${EXPIRY}.anchor'.`, `${EXPIRY}.anchor`, 'missing_required_parameter');
  if (typeof anchor !== 'string') {
    return invalid(`Invalid type for '${EXPIRY}.anchor': expected a string, but got ${describe(anchor)} instead.`, `${EXPIRY}.anchor`, 'invalid_type');
  }
  if (anchor !== 'created_at') {
    return invalid(`Invalid value: '${anchor}'. Supported values are: 'created_at'.`, `${EXPIRY}.anchor`, 'invalid_value');
  }
  const param = `${EXPIRY}.seconds`;
  if (seconds === undefined) return invalid(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
  if (typeof seconds !== 'number' || !Number.isInteger(seconds)) {
    const got = typeof seconds === 'number' ? 'a decimal' : describe(seconds);
    return invalid(`Invalid type for '${param}': expected an integer, but got ${got} instead.`, param, 'invalid_type');
  }
  if (seconds < MIN_OUTPUT_EXPIRY_SECONDS) {
    return invalid(
      `Invalid '${param}': integer below minimum value. Expected a value >= ${MIN_OUTPUT_EXPIRY_SECONDS}, but got ${seconds} instead.`,
      param,
      'integer_below_min_value',
    );
  }
  if (seconds > MAX_OUTPUT_EXPIRY_SECONDS) {
    return invalid(
      `Invalid '${param}': integer above maximum value. Expected a value <= ${MAX_OUTPUT_EXPIRY_SECONDS}, but got ${seconds} instead.`,
      param,
      'integer_above_max_value',
    );
  }
  return seconds;
}

/** What the line rules remember across lines. */
export interface LineRulesState {
  /** The endpoints a line may name (`batches.endpoints`). */
  allowed: ReadonlySet<string>;
  customIds: Set<string>;
  /** The url of the first line; every later line must use the same. */
  url: string | null;
  /** The first line's `body.model`, when it is a string: the batch's model. */
  model: string | null;
}

export const newLineRulesState = (allowed: ReadonlySet<string> = new Set(BATCH_ENDPOINTS)): LineRulesState => ({
  allowed,
  customIds: new Set(),
  url: null,
  model: null,
});

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
  if (!state.allowed.has(url)) {
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
  // A batch line is one self-contained call: a stored conversation or a background run
  // would change what the line means (and the Batch API runs lines in the background already).
  if (body.background === true) {
    return batchInvalid(`Line ${line} has background=true; background responses are not supported in batch mode`, { line });
  }
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) {
    return batchInvalid(`Line ${line} has previous_response_id; a batch line cannot continue a stored response`, { line });
  }
  if (state.url === null && typeof body.model === 'string') state.model = body.model;
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
