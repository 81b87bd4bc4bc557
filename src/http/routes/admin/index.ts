/**
 * The admin API's routes for projects, credits and usage (keys: keys.ts). Mounted at `/admin/v1`
 * (the admin token, only when SLUICE_ADMIN_TOKEN is set) and in the console for operator
 * sessions, beside the other admin route modules (the settlement outbox, the storefront's
 * purchases and accounts); the routes never know which. Each change is written to the
 * audit log; a route that serves one project declares the role a user needs there.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ProjectsService } from '../../../domain/projects/projects.service.js';
import type { Clock } from '../../../domain/shared/clock.js';
import { invalidRequest } from '../../../domain/shared/errors.js';
import { readUsageReportQuery } from '../../../domain/billing/usage-report.js';
import { usageReportToWire } from '../../mappers/usage-report.js';
import { AdminUsageReportQuerySchema, UsageReport } from '../../schemas/usage-report.js';
import { microsToUsd, usdToMicros } from '../../../domain/shared/money.js';
import type { AuditRecorder } from '../../../domain/audit/audit-log.js';
import { actorOf } from '../../auth/actor.js';
import { projectInPath, projectInQuery } from '../../auth/project-access.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import {
  CreditGrantList,
  CreditsBody,
  IdParams,
  NameBody,
  ProjectList,
  ProjectObject,
  UsageList,
  UsageQuery,
} from '../../schemas/admin.js';
import { grantToWire, projectToWire, usageToWire } from './mappers.js';

export interface AdminRouteDeps {
  projects: ProjectsService;
  clock: Clock;
  audit: AuditRecorder;
}

export function registerAdminRoutes(plain: FastifyInstance, { projects, clock, audit }: AdminRouteDeps): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['admin'];

  scope.post('/projects', { schema: { tags, body: NameBody, response: { 200: ProjectObject } }, ...serializeAsBefore }, async (request) => {
    const project = await projects.createProject(request.body.name);
    await audit.record(actorOf(request), { action: 'project.create', targetType: 'project', targetId: project.id, projectId: project.id, detail: { name: project.name } });
    return projectToWire(project);
  });

  scope.get('/projects', { schema: { tags, querystring: UsageQuery, response: { 200: ProjectList } }, ...serializeAsBefore }, async (request) =>
    toListPage(await projects.listProjects(readLimit(request.query.limit, 100, 20), request.query.after), projectToWire),
  );

  scope.get('/projects/:id', { schema: { tags, params: IdParams, response: { 200: ProjectObject } }, ...serializeAsBefore, ...projectInPath('read') }, async (request) =>
    projectToWire(await projects.getProject(request.params.id)),
  );

  const creditsSchema = { tags, params: IdParams, body: CreditsBody, response: { 200: ProjectObject } };
  scope.post('/projects/:id/credits', { schema: creditsSchema, ...serializeAsBefore, ...projectInPath('billing') }, async (request) => {
    const micros = usdToMicros(request.body.amount_usd);
    if (!Number.isSafeInteger(micros)) throw invalidRequest('amount_usd is out of range', 'amount_usd');
    const project = await projects.grantCredits(request.params.id, micros, request.body.reason ?? null);
    const detail = { amount_usd: request.body.amount_usd, reason: request.body.reason ?? null, balance_usd: microsToUsd(project.balanceMicros) };
    await audit.record(actorOf(request), { action: 'credit.grant', targetType: 'project', targetId: project.id, projectId: project.id, detail });
    return projectToWire(project);
  });

  scope.get('/projects/:id/credits', { schema: { tags, params: IdParams, response: { 200: CreditGrantList } }, ...serializeAsBefore, ...projectInPath('billing') }, async (request) => ({
    object: 'list' as const,
    data: (await projects.listGrants(request.params.id)).map(grantToWire),
  }));

  const usageSchema = { tags, params: IdParams, querystring: UsageQuery, response: { 200: UsageList } };
  scope.get('/projects/:id/usage', { schema: usageSchema, ...serializeAsBefore, ...projectInPath('read') }, async (request) => {
    const limit = readLimit(request.query.limit, 100, 20);
    const page = await projects.listUsage(request.params.id, limit, request.query.after);
    return toListPage(page, usageToWire);
  });

  const reportSchema = { tags, querystring: AdminUsageReportQuerySchema, response: { 200: UsageReport } };
  scope.get('/usage', { schema: reportSchema, ...serializeAsBefore, ...projectInQuery('read') }, async (request) => {
    const { project_id: projectId, ...params } = request.query;
    const query = readUsageReportQuery(params, projectId === undefined ? null : projectId.toLowerCase(), clock.nowMs());
    return usageReportToWire(query, await projects.usageReport(query));
  });

}
