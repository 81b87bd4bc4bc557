/** POST /v1/moderations. */
import type { FastifyInstance } from 'fastify';
import type { ModerationsService } from '../../../domain/completions/moderations.service.js';
import { MODERATIONS_ROUTE } from '../../../domain/completions/moderations.service.js';
import { callerOf } from '../../auth/caller-auth.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { ModerationResponse } from '../../schemas/moderations.js';
import { ModerationsBody, type ModerationsRequestBody } from '../../../wire/moderations.js';
import { wireValidatorCompiler } from '../../../wire/validate.js';
import { clientAbortSignal } from '../../sse.js';

const schema = {
  tags: ['inference'],
  summary: 'Classify text against the 13 moderation categories',
  body: ModerationsBody,
  response: { 200: ModerationResponse },
};

export function registerModerationsRoute(scope: FastifyInstance, { moderations: service }: { moderations: ModerationsService }): void {
  scope.post<{ Body: ModerationsRequestBody }>('/moderations', { schema, validatorCompiler: wireValidatorCompiler, ...serializeAsBefore }, async (request, reply) =>
    service.create(callerOf(request), request.body, { requestId: request.id, signal: clientAbortSignal(reply), route: MODERATIONS_ROUTE }),
  );
}
