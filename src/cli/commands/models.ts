/** `sluice models list` (what can run, and why not) and `sluice models pull <id>` (download from the Hub). */
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import pino from 'pino';
import { loadConfig } from '../../config/load.js';
import { AppError } from '../../domain/shared/errors.js';
import { ModelRegistry } from '../../inference/registry.js';
import { HubError } from '../../inference/hub/hub-client.js';
import { pullModel, type PullEvent, type PullOptions } from '../../inference/hub/pull.js';
import { printJson } from '../context.js';
import type { ModelSpec } from '../../domain/models/model-spec.types.js';
import type { DeploymentStatus } from '../../domain/models/inference-backend.port.js';
import { isPackModel } from '../../inference/classifier/manifest.js';
import { pullPack } from './packs.js';
import { offerGgufRuntime } from './runtimes.js';

const MB = 1024 * 1024;

/** A model's price as the table shows it: USD per million tokens in and out. */
const priceText = (model: ModelSpec): string => `$${model.price.inputPerMillionUsd}/$${model.price.outputPerMillionUsd}`;

/** An upstream model's engines: each one's id, its region (a regional protocol's), its state now. */
function deploymentRows(model: ModelSpec, states: readonly DeploymentStatus[] | undefined) {
  return model.binding.deployments.map((d) => {
    const state = states?.find((s) => s.id === d.id);
    return { id: d.id, ...(d.region && { region: d.region }), state: state?.state ?? 'ready', ...(state?.reason && { reason: state.reason }) };
  });
}

async function listModels(options: { json?: boolean }): Promise<void> {
  const config = loadConfig();
  const registry = new ModelRegistry(config, pino({ level: 'warn' }, pino.destination(2)));
  try {
    await registry.refreshUpstreams();
    const rows = [];
    for (const model of registry.list()) {
      const status = await registry.status(model);
      const detail = status.remedy ? `${status.detail}; ${status.remedy}` : status.detail;
      const deployments = model.binding.upstream && model.binding.deployments.length > 0 ? deploymentRows(model, status.deployments) : undefined;
      const price = { input_per_million_usd: model.price.inputPerMillionUsd, output_per_million_usd: model.price.outputPerMillionUsd };
      // An unreachable upstream is still called (it may be back), but it is not ready.
      rows.push({ id: model.id, task: model.entry.task, backend: status.backend, ready: status.ready && !status.unreachable, price, detail, ...(deployments && { deployments }) });
    }
    if (options.json) return printJson(rows);
    const table = [
      ['MODEL', 'TASK', 'BACKEND', 'READY', 'PRICE IN/OUT PER M', 'DETAIL'],
      ...rows.map((r, i) => [r.id, r.task, r.backend, r.ready ? 'yes' : 'no', priceText(registry.list()[i]!), r.detail]),
    ];
    const widths = table[0]!.map((_, col) => Math.max(...table.map((row) => row[col]!.length)));
    for (const row of table) process.stdout.write(`${row.map((cell, col) => (col === row.length - 1 ? cell : cell.padEnd(widths[col]!))).join('  ')}\n`);
  } finally {
    await registry.close();
  }
}

/** A byte progress bar on a terminal; one line per file otherwise (logs, CI). */
function progressReporter(): { onEvent: (e: PullEvent) => void; stop: () => void } {
  if (!process.stderr.isTTY) {
    return {
      onEvent: (e) => {
        if (e.type === 'plan') console.error(`${e.repo} → ${e.dir}: ${e.files.length} files, ${(e.totalBytes / MB).toFixed(1)} MB`);
        if (e.type === 'file') console.error(`${e.outcome === 'present' ? 'already present' : 'downloaded'}: ${e.file}`);
      },
      stop: () => {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: '{bar} {percentage}% | {done}/{total_mb} MB | {file}', hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  return {
    onEvent: (e) => {
      if (e.type === 'plan') bar.start(e.totalBytes, 0, { done: '0.0', total_mb: (e.totalBytes / MB).toFixed(1), file: '' });
      if (e.type === 'progress') bar.update(e.doneBytes, { done: (e.doneBytes / MB).toFixed(1), file: e.file });
    },
    stop: () => bar.stop(),
  };
}

async function pull(id: string, options: PullOptions): Promise<void> {
  // A zlm-* classifier pack is assembled from its backbone (pulled only when missing).
  if (isPackModel(id)) return pullPack(id, (backbone) => pullFiles(backbone, {}));
  printJson(await pullFiles(id, options));
  const config = loadConfig();
  const model = new Map(Object.entries(config.models)).get(id);
  if (model?.binding.backend === 'gguf') await offerGgufRuntime(config.runtimes.dir, id);
}

async function pullFiles(id: string, options: PullOptions) {
  const config = loadConfig();
  const reporter = progressReporter();
  try {
    return await pullModel(config, id, options, reporter.onEvent);
  } catch (err) {
    if (err instanceof HubError) throw new AppError('unavailable', err.message);
    throw err;
  } finally {
    reporter.stop();
  }
}

export function registerModelsCommands(program: Command): void {
  const models = program.command('models').description('list models and download their files');
  models
    .command('list')
    .description('every model: task, backend (its upstream protocol or runtime), price, whether it can run now and, if not, why; each upstream deployment with its region and state')
    .option('--json', 'print JSON instead of a table')
    .action(listModels);
  models
    .command('pull')
    .argument('<id>', 'model id')
    .description("download a model's files from the Hugging Face Hub (HF_ENDPOINT, HF_TOKEN) into its model directory")
    .option('--repo <owner/name>', 'Hub repository (default: the catalog entry)')
    .option('--revision <rev>', 'branch, tag or commit', 'main')
    .option('--include <glob...>', 'only files matching these globs (replaces the default selection)')
    .option('--all', 'every file of the repository')
    .action(pull);
}
