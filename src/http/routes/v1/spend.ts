/**
 * `GET /v1/spend`: the caller's own project's spend per key, model, tag, end user or day,
 * as JSON or streamed as CSV or NDJSON (domain/billing/spend-report.ts). Any API key may
 * read its own project's, as it may its usage.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ProjectsService } from '../../../domain/projects/projects.service.js';
import type { Clock } from '../../../domain/shared/clock.js';
import { readSpendQuery } from '../../../domain/billing/spend-report.js';
import { principalOf } from '../../auth/caller-auth.js';
import { sendSpendReport, spendFormatOf } from '../../mappers/spend-report.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { SpendQuerySchema, SpendReport } from '../../schemas/spend-report.js';

export function registerSpendRoute(plain: FastifyInstance, { projects, clock }: { projects: ProjectsService; clock: Clock }): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const schema = { tags: ['usage'], summary: "The caller's project's spend per key, model, tag, end user or day", querystring: SpendQuerySchema, response: { 200: SpendReport } };
  scope.get('/spend', { schema, ...serializeAsBefore }, async (request, reply) => {
    const { format, ...params } = request.query;
    const exported = spendFormatOf(format);
    const query = readSpendQuery(params, principalOf(request).projectId, clock.nowMs());
    return sendSpendReport(reply, query, exported, await projects.spendReport(query));
  });
}
