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
import { isPackModel } from '../../inference/classifier/manifest.js';
import { pullPack } from './packs.js';
import { offerGgufRuntime } from './runtimes.js';

const MB = 1024 * 1024;

async function listModels(options: { json?: boolean }): Promise<void> {
  const config = loadConfig();
  const registry = new ModelRegistry(config, pino({ level: 'warn' }, pino.destination(2)));
  try {
    await registry.refreshUpstreams();
    const rows = [];
    for (const model of registry.list()) {
      const status = await registry.status(model);
      const detail = status.remedy ? `${status.detail}; ${status.remedy}` : status.detail;
      // An unreachable upstream is still called (it may be back), but it is not ready.
      const deployments = status.deployments && status.deployments.length > 1 ? status.deployments : undefined;
      rows.push({ id: model.id, task: model.entry.task, backend: status.backend, ready: status.ready && !status.unreachable, detail, ...(deployments && { deployments }) });
    }
    if (options.json) return printJson(rows);
    const table = [['MODEL', 'TASK', 'BACKEND', 'READY', 'DETAIL'], ...rows.map((r) => [r.id, r.task, r.backend, r.ready ? 'yes' : 'no', r.detail])];
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
    .description('every model: task, backend, whether it can run now and, if not, why')
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
