/**
 * `sluice models pull <id>`: fetches a model's files from the Hub into its model
 * directory (`models.<id>.path`, default `<models_dir>/<id>`), keeping the repository's
 * layout (`tokenizer.json`, `onnx/model.onnx`, …). Nothing downloads at request time.
 *
 * Default selection, to avoid fetching every variant of large repositories: GGUF repos
 * get every non-weight file plus one quantisation (Q4_K_M, else the smallest .gguf);
 * ONNX repos skip the fp16/int8/uint8/q4/bnb4 weight variants. `include` globs replace
 * the default; `all` takes everything.
 */
import path from 'node:path';
import type { Config } from '../../config/schema.js';
import type { ModelSpec } from '../../domain/models/model-spec.types.js';
import { HubClient, HubError, type HubFile } from './hub-client.js';

export interface PullOptions {
  repo?: string;
  revision?: string;
  include?: string[];
  all?: boolean;
}

export type PullEvent =
  | { type: 'plan'; repo: string; dir: string; files: HubFile[]; totalBytes: number }
  | { type: 'progress'; file: string; doneBytes: number; totalBytes: number }
  | { type: 'file'; file: string; outcome: 'downloaded' | 'present' };

export interface PullResult {
  model: string;
  repo: string;
  dir: string;
  downloaded: string[];
  present: string[];
  bytes: number;
}

const ONNX_VARIANT = /_(fp16|int8|uint8|q4|q4f16|bnb4)\.onnx(_data)?$/i;

/** `*` within a path segment, `**` across segments; a pattern without `/` matches the file name. */
export function globMatcher(pattern: string): (file: string) => boolean {
  const source = pattern
    .split(/(\*\*|\*|\?)/)
    .map((piece) => (piece === '**' ? '.*' : piece === '*' ? '[^/]*' : piece === '?' ? '[^/]' : piece.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
    .join('');
  const re = new RegExp(`^${source}$`);
  return pattern.includes('/') ? (file) => re.test(file) : (file) => re.test(path.posix.basename(file));
}

export function selectFiles(files: HubFile[], model: ModelSpec, options: PullOptions): HubFile[] {
  if (options.all) return files;
  if (options.include && options.include.length > 0) {
    const matchers = options.include.map(globMatcher);
    return files.filter((f) => matchers.some((m) => m(f.path)));
  }
  const ggufs = files.filter((f) => f.path.toLowerCase().endsWith('.gguf'));
  if (ggufs.length > 1) {
    const preferred = ggufs.find((f) => /q4_k_m/i.test(f.path)) ?? [...ggufs].sort((a, b) => a.size - b.size)[0]!;
    return files.filter((f) => !f.path.toLowerCase().endsWith('.gguf') || f === preferred);
  }
  if (model.binding.backend === 'onnx') return files.filter((f) => !ONNX_VARIANT.test(f.path));
  return files;
}

export function findModel(config: Readonly<Config>, id: string): ModelSpec {
  const model = Object.values(config.models).find((m) => m.id.toLowerCase() === id.toLowerCase());
  if (!model) throw new HubError(`Unknown model ${id}; \`sluice models list\` shows every id`);
  return model;
}

export async function pullModel(
  config: Readonly<Config>,
  id: string,
  options: PullOptions = {},
  onEvent: (event: PullEvent) => void = () => {},
): Promise<PullResult> {
  const model = findModel(config, id);
  const repo = options.repo ?? model.entry.hubRepo;
  if (!repo) throw new HubError(`No public Hub repository is known for ${model.id}; pass --repo <owner/name>`);
  const dir = model.binding.path;
  if (!dir) throw new HubError(`Model ${model.id} has no model directory`);
  const revision = options.revision ?? 'main';
  const hub = new HubClient(config.hub.endpoint, config.hub.token, config.hub);

  try {
    const files = selectFiles(await hub.listFiles(repo, revision), model, options);
    if (files.length === 0) throw new HubError(`No files of ${repo} match the selection`);
    const totalBytes = files.reduce((n, f) => n + f.size, 0);
    onEvent({ type: 'plan', repo, dir, files, totalBytes });

    const result: PullResult = { model: model.id, repo, dir, downloaded: [], present: [], bytes: totalBytes };
    let finishedBytes = 0;
    for (const file of files) {
      const dest = path.join(dir, ...file.path.split('/'));
      if (!dest.startsWith(path.resolve(dir) + path.sep)) throw new HubError(`Refusing a file outside the model directory: ${file.path}`);
      const outcome = await hub.download(repo, revision, file, dest, (bytes) =>
        onEvent({ type: 'progress', file: file.path, doneBytes: finishedBytes + bytes, totalBytes }),
      );
      finishedBytes += file.size;
      (outcome === 'downloaded' ? result.downloaded : result.present).push(file.path);
      onEvent({ type: 'file', file: file.path, outcome });
    }
    return result;
  } finally {
    await hub.close();
  }
}
