/** `sluice requests export`: the request log's matching calls as NDJSON on stdout, straight from the database, a page at a time. */
import { once } from 'node:events';
import type { Command } from 'commander';
import { invalidRequest } from '../../domain/shared/errors.js';
import { readRequestLogFilter } from '../../domain/request-log/request-log.service.js';
import { requestDetailToWire } from '../../http/mappers/request-log.js';
import { withAssembly } from '../context.js';

interface ExportOptions {
  projectId?: string;
  keyId?: string;
  model?: string;
  status?: string;
  tag?: string;
  sessionId?: string;
  since?: string;
  until?: string;
  minCostUsd?: string;
  format: string;
}

export function registerRequestsCommands(program: Command): void {
  const requests = program.command('requests').description('the request log');
  requests
    .command('export')
    .description('print every matching call of the request log, newest first, one detail record per line (NDJSON)')
    .option('--format <format>', 'ndjson (the only format)', 'ndjson')
    .option('--project-id <id>', 'only this project')
    .option('--key-id <id>', 'only calls made with this API key')
    .option('--model <model>', 'only calls that asked for, or were served by, this model')
    .option('--status <status>', 'an HTTP status, or error for any of 400 or more')
    .option('--tag <tag>', 'only calls carrying this tag')
    .option('--session-id <id>', 'only calls of this session')
    .option('--since <unix-seconds>', 'calls from this time on')
    .option('--until <unix-seconds>', 'calls before this time')
    .option('--min-cost-usd <usd>', 'only calls that cost at least this much')
    .action(async (options: ExportOptions) =>
      withAssembly(async ({ features }) => {
        if (options.format !== 'ndjson') throw invalidRequest(`format must be ndjson, got "${options.format}"`);
        const filter = readRequestLogFilter(
          {
            key_id: options.keyId,
            model: options.model,
            status: options.status,
            tag: options.tag,
            session_id: options.sessionId,
            since: options.since,
            until: options.until,
            min_cost_usd: options.minCostUsd,
          },
          options.projectId ?? null,
        );
        for await (const entry of features.requestLog.services.reader.walk(filter)) {
          if (!process.stdout.write(`${JSON.stringify(requestDetailToWire(entry))}\n`)) await once(process.stdout, 'drain');
        }
      }),
    );
}
