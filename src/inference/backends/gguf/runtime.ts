/**
 * The GGUF runtime (node-llama-cpp and one prebuilt llama.cpp binary) lives outside
 * Sluice's own dependencies: its builds for every GPU and platform weigh hundreds of MB
 * that a CPU box never loads. `sluice runtimes add gguf` installs the pinned version with
 * npm into `<runtimes.dir>/gguf`; the backend imports it from there by file URL.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { AppError } from '../../../domain/shared/errors.js';
import type { NodeLlamaCpp } from './llama-api.js';

/** The node-llama-cpp version ./llama-api.ts describes; its platform builds carry the same version. */
export const NODE_LLAMA_CPP_VERSION = '3.21.1';

export type GgufGpu = 'cuda' | 'vulkan';
export const GGUF_GPUS: readonly GgufGpu[] = ['cuda', 'vulkan'];

export const ADD_GGUF_COMMAND = 'sluice runtimes add gguf';

/** The npm prefix the runtime is installed into. */
export const ggufPrefix = (runtimesDir: string): string => path.join(runtimesDir, 'gguf');

/** What `runtimes add gguf` remembers beside the packages: which GPU build it added, if any. */
const MARKER = 'sluice-runtime.json';

export type GgufRuntimeState =
  | { installed: true; gpu: GgufGpu | null }
  | { installed: false; detail: string; publicDetail: string };

const NOT_INSTALLED = 'GGUF runtime not installed';

async function readJson(file: string): Promise<Record<string, unknown> | null> {
  try {
    const value: unknown = JSON.parse(await readFile(file, 'utf8'));
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

const packageDir = (runtimesDir: string) => path.join(ggufPrefix(runtimesDir), 'node_modules', 'node-llama-cpp');

/** Whether the pinned node-llama-cpp is installed under `runtimesDir`. */
export async function ggufRuntimeState(runtimesDir: string): Promise<GgufRuntimeState> {
  const pkg = await readJson(path.join(packageDir(runtimesDir), 'package.json'));
  if (!pkg) return { installed: false, detail: `${NOT_INSTALLED} in ${runtimesDir}`, publicDetail: NOT_INSTALLED };
  if (pkg.version !== NODE_LLAMA_CPP_VERSION) {
    const found = `GGUF runtime ${String(pkg.version)} installed; this Sluice needs ${NODE_LLAMA_CPP_VERSION}`;
    return { installed: false, detail: `${found} (in ${runtimesDir})`, publicDetail: found };
  }
  const marker = await readJson(path.join(ggufPrefix(runtimesDir), MARKER));
  const gpu = GGUF_GPUS.find((g) => g === marker?.gpu) ?? null;
  return { installed: true, gpu };
}

export async function writeGgufMarker(runtimesDir: string, gpu: GgufGpu | null): Promise<void> {
  await writeFile(path.join(ggufPrefix(runtimesDir), MARKER), `${JSON.stringify({ package: 'node-llama-cpp', version: NODE_LLAMA_CPP_VERSION, gpu })}\n`);
}

/** node-llama-cpp's prebuilt binary package for a platform: `@node-llama-cpp/linux-x64`, `…-cuda`, `…-vulkan`. */
export function ggufBinaryPackage(platform: NodeJS.Platform, arch: string, gpu: GgufGpu | null): string | null {
  const os = platform === 'linux' ? 'linux' : platform === 'darwin' ? 'mac' : platform === 'win32' ? 'win' : null;
  const cpu = arch === 'arm' ? 'armv7l' : arch;
  if (!os || !['x64', 'arm64', 'armv7l', 'riscv64'].includes(cpu)) return null;
  if (gpu) return (os === 'linux' || os === 'win') && cpu === 'x64' ? `@node-llama-cpp/${os}-${cpu}-${gpu}` : null;
  return os === 'mac' && cpu === 'arm64' ? '@node-llama-cpp/mac-arm64-metal' : `@node-llama-cpp/${os}-${cpu}`;
}

export interface GgufInstallPlan {
  prefix: string;
  packages: string[];
  /** npm's arguments: only the named packages (no other platform's optional builds), no install scripts. */
  npmArgs: string[];
}

/** How `runtimes add gguf` installs: node-llama-cpp and this platform's CPU build, plus a GPU build when asked. */
export function ggufInstallPlan(runtimesDir: string, gpu: GgufGpu | null, platform: NodeJS.Platform = process.platform, arch: string = process.arch): GgufInstallPlan {
  const cpu = ggufBinaryPackage(platform, arch, null);
  if (!cpu) throw new AppError('invalid_request', `node-llama-cpp has no prebuilt binary for ${platform}-${arch}`);
  const builds = [cpu];
  if (gpu) {
    const gpuBuild = ggufBinaryPackage(platform, arch, gpu);
    if (!gpuBuild) throw new AppError('invalid_request', `node-llama-cpp has no ${gpu} build for ${platform}-${arch}`);
    builds.push(gpuBuild);
  }
  const packages = ['node-llama-cpp', ...builds].map((name) => `${name}@${NODE_LLAMA_CPP_VERSION}`);
  const prefix = ggufPrefix(runtimesDir);
  const npmArgs = ['install', '--prefix', prefix, '--no-save', '--no-package-lock', '--ignore-scripts', '--omit=optional', '--omit=dev', '--no-audit', '--no-fund', ...packages];
  return { prefix, packages, npmArgs };
}

const loaded = new Map<string, Promise<NodeLlamaCpp>>();

/** Imports the installed node-llama-cpp (once per folder); null when it is not installed. */
export async function loadGgufRuntime(runtimesDir: string): Promise<{ module: NodeLlamaCpp; gpu: GgufGpu | null } | null> {
  const state = await ggufRuntimeState(runtimesDir);
  if (!state.installed) return null;
  let module = loaded.get(runtimesDir);
  if (!module) {
    module = importRuntime(runtimesDir);
    loaded.set(runtimesDir, module);
    module.catch(() => loaded.delete(runtimesDir));
  }
  return { module: await module, gpu: state.gpu };
}

async function importRuntime(runtimesDir: string): Promise<NodeLlamaCpp> {
  const dir = packageDir(runtimesDir);
  const pkg = await readJson(path.join(dir, 'package.json'));
  const root = (pkg?.exports as Record<string, Record<string, string> | undefined> | undefined)?.['.'];
  const entry = path.join(dir, root?.import ?? root?.default ?? 'dist/index.js');
  const module = (await import(pathToFileURL(entry).href)) as Partial<NodeLlamaCpp>;
  if (typeof module.getLlama !== 'function' || typeof module.LlamaCompletion !== 'function') {
    throw new Error(`${entry} is not node-llama-cpp ${NODE_LLAMA_CPP_VERSION}: it exports no getLlama or LlamaCompletion`);
  }
  return module as NodeLlamaCpp;
}
