/**
 * Spend report rows → the wire: one JSON object, or, streamed, CSV (a header line, then a
 * row per group) or NDJSON (an object per line). A CSV cell that a spreadsheet would read
 * as a formula (a tag or end user starting `=`, `+`, `-` or `@`) is prefixed with `'`.
 */
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { invalidRequest } from '../../domain/shared/errors.js';
import type { SpendQuery, SpendRow } from '../../domain/billing/usage-reports.port.js';
import { toUnixSeconds } from '../../domain/shared/clock.js';
import { microsToUsd } from '../../domain/shared/money.js';

export type SpendFormat = 'json' | 'csv' | 'ndjson';

export const SPEND_CONTENT_TYPES: Record<Exclude<SpendFormat, 'json'>, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

export const spendRowToWire = (row: SpendRow) => ({
  group: row.group,
  requests: row.requests,
  input_tokens: row.inputTokens,
  input_cached_tokens: row.cachedInputTokens,
  input_cache_write_tokens: row.cacheWriteTokens,
  output_tokens: row.outputTokens,
  cost_micros: row.costMicros,
  cost_usd: microsToUsd(row.costMicros),
});

export async function spendReportToWire(query: SpendQuery, rows: AsyncIterable<SpendRow>) {
  const data: Array<ReturnType<typeof spendRowToWire>> = [];
  for await (const row of rows) data.push(spendRowToWire(row));
  return {
    object: 'spend_report' as const,
    group_by: query.groupBy,
    since: toUnixSeconds(query.sinceMs),
    until: toUnixSeconds(query.untilMs),
    data,
  };
}

const CSV_COLUMNS = ['group', 'requests', 'input_tokens', 'input_cached_tokens', 'input_cache_write_tokens', 'output_tokens', 'cost_micros', 'cost_usd'] as const;

function csvCell(value: string | number | null): string {
  if (value === null) return '';
  if (typeof value === 'number') return String(value);
  const safe = /^[=+\-@]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** The report as lines of CSV or NDJSON, each written as its row is read. */
export async function* spendLines(format: Exclude<SpendFormat, 'json'>, rows: AsyncIterable<SpendRow>): AsyncGenerator<string> {
  if (format === 'csv') yield `${CSV_COLUMNS.join(',')}\n`;
  for await (const row of rows) {
    const wire = spendRowToWire(row);
    yield format === 'csv' ? `${CSV_COLUMNS.map((c) => csvCell(wire[c])).join(',')}\n` : `${JSON.stringify(wire)}\n`;
  }
}

/** The `format` a spend request asks for: json (absent), csv or ndjson. */
export function spendFormatOf(raw: string | undefined): SpendFormat {
  if (raw === undefined || raw === 'json' || raw === 'csv' || raw === 'ndjson') return raw ?? 'json';
  throw invalidRequest('format must be one of json, csv, ndjson', 'format');
}

/** Answers the report: one JSON object, or (sent here, resolving with nothing) its lines streamed as CSV or NDJSON, as a download. */
export async function sendSpendReport(reply: FastifyReply, query: SpendQuery, format: SpendFormat, rows: AsyncIterable<SpendRow>) {
  if (format === 'json') return spendReportToWire(query, rows);
  const name = `sluice-spend-by-${query.groupBy}-${new Date(query.sinceMs).toISOString().slice(0, 10)}.${format}`;
  reply.type(SPEND_CONTENT_TYPES[format]).header('content-disposition', `attachment; filename="${name}"`);
  await reply.send(Readable.from(spendLines(format, rows)));
  return undefined;
}
