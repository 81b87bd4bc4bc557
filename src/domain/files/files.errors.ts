/** The "Files errors" table of the spec, one constructor per code. */
import { AppError } from '../shared/errors.js';
import { MAX_UPLOAD_BYTES } from './files.types.js';

export const invalidContentType = () =>
  new AppError('invalid_request', 'Uploads must be sent as multipart/form-data', { code: 'invalid_content_type' });

export const invalidMultipart = (detail: string) =>
  new AppError('invalid_request', `Could not parse the multipart body: ${detail}`, { code: 'invalid_multipart' });

export const invalidPurpose = (purpose: string | undefined) =>
  new AppError(
    'invalid_request',
    purpose === undefined ? 'purpose is required; the only supported value is "batch"' : `Invalid purpose ${JSON.stringify(purpose)}; the only supported value is "batch"`,
    { code: 'invalid_purpose', param: 'purpose' },
  );

export const missingFile = () =>
  new AppError('invalid_request', 'No file was uploaded; send it in the "file" field', { code: 'missing_file', param: 'file' });

export const emptyFile = () => new AppError('invalid_request', 'The uploaded file is empty', { code: 'empty_file', param: 'file' });

/** Our choice for a filename that is not `.jsonl` (the spec names no code for it). */
export const invalidFileType = (filename: string) =>
  new AppError('invalid_request', `Only .jsonl files are accepted; got ${JSON.stringify(filename)}`, {
    code: 'invalid_file_type',
    param: 'file',
  });

export const fileTooLarge = () =>
  new AppError('payload_too_large', `File exceeds the maximum size of ${MAX_UPLOAD_BYTES} bytes (100 MB)`, {
    code: 'file_too_large',
    param: 'file',
  });

export const fileNotFound = (id: string) => new AppError('not_found', `File ${id} not found`, { code: 'file_not_found' });

export const storageError = (cause?: unknown) =>
  new AppError('internal', 'Storage error; retry the request', { code: 'storage_error', cause, expose: true });
