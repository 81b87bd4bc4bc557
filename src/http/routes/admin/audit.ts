/**
 * `/admin/v1/audit`: the audit log, newest first, filtered by project, actor, action and
 * time, a page at a time; `/admin/v1/audit/export` streams every entry the filter selects
 * as NDJSON or CSV. There is no route that changes an entry. A project admin reads their
 * project's entries (naming it with `project_id`); everything else is for operators.
 */
import { Readable } from 'node:stream';
import type { Static } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AuditLog } from '../../../domain/audit/audit-log.js';
import type { AuditEntry, AuditFilter } from '../../../domain/audit/audit.types.js';
import { toUnixSeconds } from '../../../domain/shared/clock.js';
import { invalidRequest } from '../../../domain/shared/errors.js';
import { projectInQuery } from '../../auth/project-access.js';
import { readChoice } from '../../mappers/files-batches.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { AuditExport, AuditExportQuery, AuditList, AuditQuery } from '../../schemas/people.js';

export const auditEntryToWire = (e: AuditEntry) => ({
  id: e.id,
  object: 'audit_entry' as const,
  created_at: toUnixSeconds(e.createdAtMs),
  actor: { type: e.actor.type, id: e.actor.id, ip: e.actor.ip },
  action: e.action,
  target: { type: e.targetType, id: e.targetId },
  project_id: e.projectId,
  detail: e.detail,
});

function readSeconds(raw: string | undefined, param: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,11}$/.test(raw)) throw invalidRequest(`${param} must be a Unix time in seconds`, param, 'invalid_time');
  return Number(raw) * 1000;
}

function readFilter(query: { project_id?: string; actor?: string; action?: string; since?: string; until?: string }): AuditFilter {
  return {
    ...(query.project_id !== undefined && { projectId: query.project_id.toLowerCase() }),
    ...(query.actor !== undefined && { actorId: query.actor }),
    ...(query.action !== undefined && { action: query.action }),
    ...(query.since !== undefined && { sinceMs: readSeconds(query.since, 'since') }),
    ...(query.until !== undefined && { untilMs: readSeconds(query.until, 'until') }),
  };
}

const CSV_COLUMNS = ['id', 'created_at', 'actor_type', 'actor_id', 'ip', 'action', 'target_type', 'target_id', 'project_id', 'detail'] as const;

/** A CSV field: quoted when it must be, and a leading formula character defused for spreadsheets. */
function csvField(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const csvLine = (e: AuditEntry): string =>
  [e.id, new Date(e.createdAtMs).toISOString(), e.actor.type, e.actor.id, e.actor.ip, e.action, e.targetType, e.targetId, e.projectId, JSON.stringify(e.detail)].map(csvField).join(',') + '\r\n';

async function* exportLines(entries: AsyncIterable<AuditEntry>, format: 'ndjson' | 'csv'): AsyncGenerator<string> {
  if (format === 'csv') yield CSV_COLUMNS.join(',') + '\r\n';
  for await (const entry of entries) yield format === 'csv' ? csvLine(entry) : JSON.stringify(auditEntryToWire(entry)) + '\n';
}

export function registerAuditAdmin(plain: FastifyInstance, { audit }: { audit: AuditLog }): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['admin'];

  scope.get('/audit', { schema: { tags, querystring: AuditQuery, response: { 200: AuditList } }, ...serializeAsBefore, ...projectInQuery('manage') }, async (request) => {
    const filter = readFilter(request.query);
    return toListPage(await audit.list(filter, readLimit(request.query.limit, 100, 20), request.query.after), auditEntryToWire);
  });

  const exportSchema = { tags, summary: 'Every matching audit entry, streamed (NDJSON or CSV)', querystring: AuditExportQuery, response: { 200: AuditExport } };
  // On the plain instance: the answer is a stream, not the documented string the type provider would ask for.
  plain.get<{ Querystring: Static<typeof AuditExportQuery> }>('/audit/export', { schema: exportSchema, ...serializeAsBefore, ...projectInQuery('manage') }, async (request, reply) => {
    const filter = readFilter(request.query);
    const format = readChoice(request.query.format, ['ndjson', 'csv'] as const, 'format', 'invalid_format') ?? 'ndjson';
    reply.header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson');
    reply.header('content-disposition', `attachment; filename="sluice-audit.${format === 'csv' ? 'csv' : 'ndjson'}"`);
    return reply.send(Readable.from(exportLines(audit.entries(filter), format)));
  });
}
