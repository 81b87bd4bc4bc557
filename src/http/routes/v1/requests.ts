/**
 * The request log of the caller's project: `GET /v1/requests` (newest first, filtered and
 * paged), `GET /v1/requests/{request_id}` (a call's whole story), its body when the
 * project logs bodies, and `GET /v1/requests/sessions/{session_id}` (a session's calls,
 * oldest first, with their sums). Another project's call or session is not found.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { readRequestLogFilter, type RequestLogService } from '../../../domain/request-log/request-log.service.js';
import { principalOf } from '../../auth/caller-auth.js';
import { readLimit, toListPage } from '../../mappers/list-page.js';
import { requestBodyToWire, requestDetailToWire, requestSessionToWire, requestSummaryToWire } from '../../mappers/request-log.js';
import { serializeAsBefore } from '../../schemas/document-only.js';
import { RequestBody, RequestDetail, RequestIdParams, RequestList, RequestLogQuery, RequestSessionObject, SessionIdParams } from '../../schemas/request-log.js';

export const MAX_REQUEST_PAGE = 100;
export const DEFAULT_REQUEST_PAGE = 20;

export function registerRequestRoutes(plain: FastifyInstance, { reader }: { reader: RequestLogService }): void {
  const scope = plain.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['requests'];

  const listSchema = { tags, summary: "The project's calls, newest first", querystring: RequestLogQuery, response: { 200: RequestList } };
  scope.get('/requests', { schema: listSchema, ...serializeAsBefore }, async (request) => {
    const { limit, after, ...filters } = request.query;
    const filter = readRequestLogFilter(filters, principalOf(request).projectId);
    return toListPage(await reader.list(filter, readLimit(limit, MAX_REQUEST_PAGE, DEFAULT_REQUEST_PAGE), after), requestSummaryToWire);
  });

  const sessionSchema = { tags, summary: "A session's calls, oldest first, with their sums", params: SessionIdParams, response: { 200: RequestSessionObject } };
  scope.get('/requests/sessions/:session_id', { schema: sessionSchema, ...serializeAsBefore }, async (request) =>
    requestSessionToWire(await reader.session(request.params.session_id, principalOf(request).projectId)),
  );

  const detailSchema = { tags, summary: "A call's whole record, with its attempts", params: RequestIdParams, response: { 200: RequestDetail } };
  scope.get('/requests/:request_id', { schema: detailSchema, ...serializeAsBefore }, async (request) =>
    requestDetailToWire(await reader.get(request.params.request_id, principalOf(request).projectId)),
  );

  const bodySchema = { tags, summary: "A call's request and answer, when its project logs bodies", params: RequestIdParams, response: { 200: RequestBody } };
  scope.get('/requests/:request_id/body', { schema: bodySchema, ...serializeAsBefore }, async (request) =>
    requestBodyToWire(await reader.body(request.params.request_id, principalOf(request).projectId)),
  );
}
