/**
 * The request log across projects, for operators: `GET /admin/v1/requests` (the /v1
 * filters and `project_id`), one call, its body, `GET /admin/v1/requests/export` (every
 * matching call's detail as NDJSON, streamed a page at a time), and each project's
 * logging settings (`GET`/`PATCH /admin/v1/projects/{id}/logging`).
 */
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Static } from '@sinclair/typebox';
import type { LoggingSettings } from '../../../domain/request-log/request-log.types.js';
import { readRequestLogFilter, type RequestLogQuery, type RequestLogService } from '../../../domain/request-log/request-log.service.js';
import { invalidRequest } from '../../../domain/shared/errors.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { requestBodyToWire, requestDetailToWire, requestSummaryToWire } from '../../mappers/request-log.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { IdParams } from '../../schemas/admin.js';
import {
  AdminRequestLogQuery,
  ExportQuery,
  LoggingSettingsBody,
  LoggingSettingsObject,
  RequestBody,
  RequestDetail,
  RequestExport,
  RequestIdParams,
  RequestList,
} from '../../schemas/request-log.js';
import { DEFAULT_REQUEST_PAGE, MAX_REQUEST_PAGE } from '../v1/requests.js';

export interface AdminRequestRouteDeps {
  reader: RequestLogService;
  /** A project's settings (its own, else the defaults); throws not found for an unknown project. */
  settingsOf(projectId: string): Promise<LoggingSettings>;
  saveSettings(projectId: string, settings: LoggingSettings): Promise<void>;
}

const PROJECT_ID = /^[\w.-]{1,64}$/;

function filterOf(query: RequestLogQuery & { project_id?: string }) {
  const { project_id: projectId, ...filters } = query;
  if (projectId !== undefined && !PROJECT_ID.test(projectId)) throw invalidRequest('project_id must be a project id', 'project_id');
  return readRequestLogFilter(filters, projectId ?? null);
}

const settingsToWire = (projectId: string, s: LoggingSettings) => ({
  object: 'project.logging' as const,
  project_id: projectId,
  bodies: s.bodies,
  retention_days: s.retentionDays,
});

export function registerAdminRequestRoutes(plain: FastifyInstance, { reader, settingsOf, saveSettings }: AdminRequestRouteDeps): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['admin'];

  scope.get('/requests', { schema: { tags, querystring: AdminRequestLogQuery, response: { 200: RequestList } }, ...serializeAsBefore }, async (request) => {
    const { limit, after, ...query } = request.query;
    return toListPage(await reader.list(filterOf(query), readLimit(limit, MAX_REQUEST_PAGE, DEFAULT_REQUEST_PAGE), after), requestSummaryToWire);
  });

  const exportSchema = { tags, summary: 'Every matching call, one detail record per line (NDJSON)', querystring: ExportQuery, response: { 200: RequestExport } };
  // On the plain instance: the answer is a stream, not the documented string the type provider would ask for.
  plain.get<{ Querystring: Static<typeof ExportQuery> }>('/requests/export', { schema: exportSchema, ...serializeAsBefore }, async (request, reply) => {
    const { limit: _limit, after: _after, format: _format, ...query } = request.query;
    const entries = reader.walk(filterOf(query));
    const lines = async function* () {
      for await (const entry of entries) yield `${JSON.stringify(requestDetailToWire(entry))}\n`;
    };
    return reply.type('application/x-ndjson').send(Readable.from(lines()));
  });

  scope.get('/requests/:request_id', { schema: { tags, params: RequestIdParams, response: { 200: RequestDetail } }, ...serializeAsBefore }, async (request) =>
    requestDetailToWire(await reader.get(request.params.request_id, null)),
  );

  scope.get('/requests/:request_id/body', { schema: { tags, params: RequestIdParams, response: { 200: RequestBody } }, ...serializeAsBefore }, async (request) =>
    requestBodyToWire(await reader.body(request.params.request_id, null)),
  );

  scope.get('/projects/:id/logging', { schema: { tags, params: IdParams, response: { 200: LoggingSettingsObject } }, ...serializeAsBefore }, async (request) =>
    settingsToWire(request.params.id, await settingsOf(request.params.id)),
  );

  const patchSchema = { tags, params: IdParams, body: LoggingSettingsBody, response: { 200: LoggingSettingsObject } };
  scope.patch('/projects/:id/logging', { schema: patchSchema, ...serializeAsBefore }, async (request) => {
    const current = await settingsOf(request.params.id);
    const next: LoggingSettings = { bodies: request.body.bodies ?? current.bodies, retentionDays: request.body.retention_days ?? current.retentionDays };
    await saveSettings(request.params.id, next);
    return settingsToWire(request.params.id, next);
  });
}
