/** JSON request bodies parsed from bytes the caller already holds (raw-body scopes). */
import { AppError } from '../domain/shared/errors.js';

export function parseJsonBody(bytes: Buffer): unknown {
  if (bytes.length === 0) throw new AppError('invalid_request', 'Request body is empty; send a JSON object', { code: 'invalid_json' });
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new AppError('invalid_request', 'Invalid JSON body', { code: 'invalid_json' });
  }
}
