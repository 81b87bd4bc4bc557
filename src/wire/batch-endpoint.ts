/** A batch endpoint whose line body is a wire's request body, checked by the same compiled schema as its route. */
import type { Static, TSchema } from '@sinclair/typebox';
import type { Caller } from '../domain/identity/caller.js';
import type { BatchEndpoint, LineCallContext } from '../domain/batches/batch-endpoints.js';
import { parseBody } from './validate.js';

/** An endpoint whose body is a wire schema (src/wire), run by `run` with the body typed. */
export function wireEndpoint<T extends TSchema>(
  schema: T,
  run: (caller: Caller, body: Static<T>, context: LineCallContext) => Promise<object>,
  served?: () => boolean,
): BatchEndpoint {
  return {
    prepare(body) {
      const parsed = parseBody(schema, body);
      return async (caller, context) => ({ body: await run(caller, parsed, context) });
    },
    ...(served ? { served } : {}),
  };
}
