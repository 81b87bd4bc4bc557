/**
 * `batches.endpoints`: the endpoints a batch may use, each one Sluice can batch. Absent:
 * the spec's, chat completions only.
 */
import { BATCH_ENDPOINTS, BATCHABLE_ENDPOINTS } from '../domain/batches/batch.types.js';

export function resolveBatchEndpoints(listed: readonly string[] | undefined, problems: string[]): readonly string[] {
  if (listed === undefined) return BATCH_ENDPOINTS;
  for (const endpoint of listed) {
    if (!BATCHABLE_ENDPOINTS.includes(endpoint)) {
      problems.push(`batches.endpoints: ${endpoint} cannot be batched (one of ${BATCHABLE_ENDPOINTS.join(', ')})`);
    }
  }
  return [...new Set(listed.filter((e) => BATCHABLE_ENDPOINTS.includes(e)))];
}
