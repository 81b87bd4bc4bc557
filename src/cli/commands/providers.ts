/**
 * `sluice providers check`: one cheap, authenticated request per configured upstream
 * deployment, with the protocol's own check (a models list, a one-token call), and what
 * failed said in words. Progress on stderr, the results on stdout (a table, or --json);
 * exits non-zero when any deployment failed.
 */
import type { Command } from 'commander';
import pino from 'pino';
import { loadConfig } from '../../config/load.js';
import type { Deployment, ModelSpec } from '../../domain/models/model-spec.types.js';
import { AppError } from '../../domain/shared/errors.js';
import { TokenCounter } from '../../inference/token-counter.js';
import type { UpstreamProtocol } from '../../inference/upstream/protocol.js';
import { UPSTREAM_PROTOCOLS } from '../../inference/upstream/protocols.js';
import { printJson } from '../context.js';

interface CheckResult {
  model: string;
  deployment: string;
  protocol: string;
  ok: boolean;
  /** What failed, in words; null when it passed. */
  problem: string | null;
}

async function checkOne(adapter: UpstreamProtocol, protocol: string, model: ModelSpec, deployment: Deployment): Promise<CheckResult> {
  let problem: string | null;
  try {
    problem = adapter.check ? await adapter.check({ model, deployment }) : `the ${protocol} protocol has no check`;
  } catch (err) {
    problem = err instanceof Error ? err.message : 'the check failed';
  }
  const result = { model: model.id, deployment: deployment.id, protocol, ok: problem === null, problem };
  process.stderr.write(`${model.id} ${deployment.id} (${protocol}): ${problem === null ? 'ok' : `FAILED: ${problem}`}\n`);
  return result;
}

async function checkProviders(options: { json?: boolean }): Promise<void> {
  const config = loadConfig();
  const logger = pino({ level: 'warn' }, pino.destination(2));
  const tokens = new TokenCounter();
  const adapters = new Map<string, UpstreamProtocol>();
  const checks: Promise<CheckResult>[] = [];
  try {
    for (const model of Object.values(config.models)) {
      const upstream = model.binding.upstream;
      if (!upstream) continue;
      let adapter = adapters.get(upstream.protocol);
      if (!adapter) {
        const entry = UPSTREAM_PROTOCOLS.find((p) => p.name === upstream.protocol);
        if (!entry) continue;
        adapter = entry.create({ logger, tokens });
        adapters.set(upstream.protocol, adapter);
      }
      for (const deployment of upstream.deployments) checks.push(checkOne(adapter, upstream.protocol, model, deployment));
    }
    if (checks.length === 0) process.stderr.write('no upstream deployment is configured\n');
    const results = await Promise.all(checks);
    if (options.json) printJson(results);
    else printTable(results);
    const failed = results.filter((r) => !r.ok).length;
    if (failed > 0) throw new AppError('unavailable', `${failed} of ${results.length} deployments failed the check`);
  } finally {
    await Promise.allSettled([...adapters.values()].map((a) => a.close()));
  }
}

function printTable(results: readonly CheckResult[]): void {
  const table = [['MODEL', 'DEPLOYMENT', 'PROTOCOL', 'RESULT'], ...results.map((r) => [r.model, r.deployment, r.protocol, r.problem ?? 'ok'])];
  const widths = table[0]!.map((_, col) => Math.max(...table.map((row) => row[col]!.length)));
  for (const row of table) process.stdout.write(`${row.map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]!))).join('  ')}\n`);
}

export function registerProvidersCommands(program: Command): void {
  const providers = program.command('providers').description('the upstream providers sluice.yaml configures');
  providers
    .command('check')
    .description('make one cheap authenticated request to every upstream deployment and say what failed')
    .option('--json', 'print JSON instead of a table')
    .action(checkProviders);
}
