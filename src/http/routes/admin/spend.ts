/**
 * `GET /admin/v1/spend`: spend per key, model, tag, end user or day across every project
 * or one (`project_id`), as JSON or streamed as CSV or NDJSON (domain/billing/spend-report.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ProjectsService } from '../../../domain/projects/projects.service.js';
import type { Clock } from '../../../domain/shared/clock.js';
import { readSpendQuery } from '../../../domain/billing/spend-report.js';
import { sendSpendReport, spendFormatOf } from '../../mappers/spend-report.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { AdminSpendQuerySchema, SpendReport } from '../../schemas/spend-report.js';

export function registerAdminSpendRoute(plain: FastifyInstance, { projects, clock }: { projects: ProjectsService; clock: Clock }): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const schema = { tags: ['admin'], summary: 'Spend per key, model, tag, end user or day', querystring: AdminSpendQuerySchema, response: { 200: SpendReport } };
  scope.get('/spend', { schema, ...serializeAsBefore }, async (request, reply) => {
    const { project_id: projectId, format, ...params } = request.query;
    const exported = spendFormatOf(format);
    const query = readSpendQuery(params, projectId === undefined ? null : projectId.toLowerCase(), clock.nowMs());
    return sendSpendReport(reply, query, exported, await projects.spendReport(query));
  });
}
