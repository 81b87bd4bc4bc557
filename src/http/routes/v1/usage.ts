/**
 * The caller's own project: `GET /v1/project` (name and balance), `GET /v1/project/credits`
 * (its credit grants) and `GET /v1/usage` (requests, tokens and cost per time bucket, by
 * model or key). What the console's usage
 * page reads; any API key may read its own project's.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ProjectsService } from '../../../domain/projects/projects.service.js';
import type { Clock } from '../../../domain/shared/clock.js';
import { readUsageReportQuery } from '../../../domain/billing/usage-report.js';
import { principalOf } from '../../auth/caller-auth.js';
import { usageReportToWire } from '../../mappers/usage-report.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { CreditGrantList, ProjectObject } from '../../schemas/admin.js';
import { UsageReport, UsageReportQuerySchema } from '../../schemas/usage-report.js';
import { grantToWire, projectToWire } from '../admin/mappers.js';

export function registerUsageRoutes(plain: FastifyInstance, { projects, clock }: { projects: ProjectsService; clock: Clock }): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['usage'];

  scope.get('/project', { schema: { tags, summary: "The caller's project and its balance", response: { 200: ProjectObject } }, ...serializeAsBefore }, async (request) =>
    projectToWire(await projects.getProject(principalOf(request).projectId)),
  );

  scope.get('/project/credits', { schema: { tags, summary: "The caller's project's credit grants, newest first", response: { 200: CreditGrantList } }, ...serializeAsBefore }, async (request) => ({
    object: 'list' as const,
    data: (await projects.listGrants(principalOf(request).projectId)).map(grantToWire),
  }));

  const reportSchema = { tags, summary: "The caller's project's usage per time bucket", querystring: UsageReportQuerySchema, response: { 200: UsageReport } };
  scope.get('/usage', { schema: reportSchema, ...serializeAsBefore }, async (request) => {
    const query = readUsageReportQuery(request.query, principalOf(request).projectId, clock.nowMs());
    return usageReportToWire(query, await projects.usageReport(query));
  });
}
