/** /v1/batches: create (input validated before the answer), list, retrieve, cancel. */
import type { FastifyInstance } from 'fastify';
import type { Static } from '@sinclair/typebox';
import type { BatchesService } from '../../../domain/batches/batches.service.js';
import { DEFAULT_BATCH_PAGE, MAX_BATCH_PAGE } from '../../../domain/batches/batch.types.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { principalOf } from '../../auth/caller-auth.js';
import { batchWire } from '../../mappers/files-batches.js';
import { notValidated } from '../../schemas/document-only.js';
import { answersErrors } from '../../openapi-document.js';
import { batchCreateBody, BatchIdParams, BatchList, BatchListQuery, BatchObject } from '../../schemas/files-batches.js';

const tags = ['batches'];

export interface BatchesRouteDeps {
  batches: BatchesService;
  /** The urls a batch can name (the assembled batch endpoints), for the documented body; read when the routes are mounted. */
  batchable(): readonly string[];
}

export function registerBatchesRoutes(scope: FastifyInstance, { batches, batchable }: BatchesRouteDeps): void {

  scope.post(
    '/batches',
    {
      schema: {
        tags,
        summary: 'Create a batch over an uploaded .jsonl file',
        body: batchCreateBody(batchable()),
        response: { 200: BatchObject },
        // 404: the input file does not exist.
        ...answersErrors('not_found'),
      },
      // Every body reaches the service, which answers with the spec's messages and records the refusal.
      ...notValidated,
    },
    async (request) => batchWire(await batches.create(principalOf(request), request.body)),
  );

  scope.get<{ Querystring: Static<typeof BatchListQuery> }>(
    '/batches',
    { schema: { tags, summary: 'List batches, newest first', querystring: BatchListQuery, response: { 200: BatchList } } },
    async (request) => {
      const limit = readLimit(request.query.limit, MAX_BATCH_PAGE, DEFAULT_BATCH_PAGE);
      const page = await batches.list(principalOf(request).projectId, limit, request.query.after);
      return toListPage(page, batchWire);
    },
  );

  scope.get<{ Params: Static<typeof BatchIdParams> }>(
    '/batches/:batch_id',
    { schema: { tags, summary: 'Retrieve a batch', params: BatchIdParams, response: { 200: BatchObject } } },
    async (request) => batchWire(await batches.retrieve(principalOf(request).projectId, request.params.batch_id)),
  );

  scope.post<{ Params: Static<typeof BatchIdParams> }>(
    '/batches/:batch_id/cancel',
    { schema: { tags, summary: 'Cancel a batch', params: BatchIdParams, response: { 200: BatchObject }, ...answersErrors('conflict') } },
    async (request) => batchWire(await batches.cancel(principalOf(request).projectId, request.params.batch_id)),
  );
}
