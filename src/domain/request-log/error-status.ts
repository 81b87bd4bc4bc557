/** The status a call that failed with `err` ends with, where no HTTP answer says it (a batch line): its kind's, else 500. */
import { isAppError, STATUS_OF_KIND } from '../shared/errors.js';

export const statusOfError = (err: unknown): number => (isAppError(err) ? STATUS_OF_KIND[err.kind] : 500);
