/** Shared by the request-log suites: reading the log through the routes, and the entries' rows straight from the database. */
import { ADMIN_TOKEN, call, type TestServer } from '../../helpers/harness.js';

/** The log's writer flushes every 10 ms in these suites. */
export const FAST_FLUSH_YAML = `request_log:
  flush_interval_ms: 10
  batch_size: 50
`;

/** Writes what the log holds now (the writer's flush, as its interval would). */
export async function flushLog(server: TestServer): Promise<void> {
  await server.features.requestLog.services.writer.flush();
}

export const admin = (server: TestServer, method: string, path: string, body?: unknown) =>
  call(server.baseUrl, method, `/admin/v1${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, ...(body === undefined ? {} : { body }) });

export async function setBodies(server: TestServer, projectId: string, bodies: 'off' | 'redacted' | 'full'): Promise<void> {
  const res = await admin(server, 'PATCH', `/projects/${projectId}/logging`, { bodies });
  if (res.status !== 200) throw new Error(`PATCH logging: ${res.status} ${JSON.stringify(res.body)}`);
}

/** Every text the database holds for these request ids: the log's rows and body rows, as JSON. */
export async function storedTextOf(server: TestServer, ids: readonly string[]): Promise<string> {
  const { db } = server.core.database;
  const rows = await db.selectFrom('request_log').selectAll().where('id', 'in', ids).execute();
  const bodies = await db.selectFrom('request_log_bodies').selectAll().where('id', 'in', ids).execute();
  return JSON.stringify({ rows, bodies });
}
