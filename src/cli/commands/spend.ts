/** `sluice spend`: the spend report (by key, model, tag, end user or day), straight on the database. */
import type { Command } from 'commander';
import { readSpendQuery } from '../../domain/billing/spend-report.js';
import { spendFormatOf, spendLines, spendReportToWire } from '../../http/mappers/spend-report.js';
import { printJson, withAssembly } from '../context.js';

interface SpendOptions {
  groupBy: string;
  since?: string;
  until?: string;
  project?: string;
  format: string;
}

export function registerSpendCommand(program: Command): void {
  program
    .command('spend')
    .description("requests, tokens and cost per group over a range (default: this UTC month so far); every project's unless --project")
    .requiredOption('--group-by <group>', 'key, model, tag, end_user or day')
    .option('--since <time>', 'Unix seconds or an ISO 8601 date (2026-01-31) or date-time, inclusive')
    .option('--until <time>', 'exclusive (default: now)')
    .option('--project <project-id>', 'one project')
    .option('--format <format>', 'json, csv or ndjson (csv and ndjson are written as they are read)', 'json')
    .action(async (options: SpendOptions) =>
      withAssembly(async ({ core: c }) => {
        const format = spendFormatOf(options.format);
        const params = { group_by: options.groupBy, ...(options.since ? { since: options.since } : {}), ...(options.until ? { until: options.until } : {}) };
        const query = readSpendQuery(params, options.project?.toLowerCase() ?? null, c.clock.nowMs());
        const rows = await c.projects.spendReport(query);
        if (format === 'json') return printJson(await spendReportToWire(query, rows));
        for await (const line of spendLines(format, rows)) {
          if (!process.stdout.write(line)) await new Promise((resolve) => process.stdout.once('drain', resolve));
        }
      }),
    );
}
