/**
 * `sluice runtimes add gguf [--gpu cuda|vulkan]`: installs the GGUF runtime (node-llama-cpp
 * and this platform's prebuilt llama.cpp binary) into `runtimes.dir` with npm, so that a
 * default install carries none of its builds for other GPUs and platforms.
 */
import { spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { createInterface } from 'node:readline/promises';
import { Option, type Command } from 'commander';
import { loadConfig } from '../../config/load.js';
import { AppError } from '../../domain/shared/errors.js';
import {
  ADD_GGUF_COMMAND,
  GGUF_GPUS,
  ggufInstallPlan,
  ggufRuntimeState,
  NODE_LLAMA_CPP_VERSION,
  writeGgufMarker,
  type GgufGpu,
} from '../../inference/backends/gguf/runtime.js';

/** npm's own output goes to stderr, as every progress line of the CLI does: stdout stays for results. */
function runNpm(args: readonly string[]): Promise<number> {
  // `npm run -s sluice -- …` silences the npm it runs and, through the environment, this one
  // too; npm's messages are what explains a failed install.
  const env = { ...process.env };
  delete env.npm_config_loglevel;
  return new Promise((resolve, reject) => {
    const npm = spawn(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, { stdio: ['ignore', 2, 2], env, shell: process.platform === 'win32' });
    npm.on('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'ENOENT' ? new AppError('unavailable', 'npm was not found on PATH: the GGUF runtime is installed with npm, which comes with Node.js') : err),
    );
    npm.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
}

export async function addGgufRuntime(runtimesDir: string, gpu: GgufGpu | null): Promise<void> {
  const plan = ggufInstallPlan(runtimesDir, gpu);
  console.error(`installing the GGUF runtime (${plan.packages.join(', ')}) into ${plan.prefix} with npm`);
  await mkdir(plan.prefix, { recursive: true });
  const code = await runNpm(plan.npmArgs);
  if (code !== 0) {
    throw new AppError(
      'unavailable',
      `installing the GGUF runtime failed: npm exited with code ${code} (its messages above say why). ` +
        `The packages come from the npm registry (\`npm config get registry\`): check that it is reachable, then run \`${ADD_GGUF_COMMAND}\` again`,
    );
  }
  const state = await ggufRuntimeState(runtimesDir);
  if (!state.installed) throw new AppError('internal', `npm finished, yet the GGUF runtime is not usable: ${state.detail}`);
  await writeGgufMarker(runtimesDir, gpu);
  console.error(`GGUF runtime installed: node-llama-cpp ${NODE_LLAMA_CPP_VERSION}${gpu ? ` with its ${gpu} build` : ''}`);
}

/**
 * After a GGUF model's files are pulled: the runtime it needs, if missing, is offered on a
 * terminal and named on anything else (a script must not wait on a question).
 */
export async function offerGgufRuntime(runtimesDir: string, modelId: string): Promise<void> {
  if ((await ggufRuntimeState(runtimesDir)).installed) return;
  if (!process.stdin.isTTY || !process.stderr.isTTY) {
    console.error(`${modelId} runs on the GGUF runtime, which is not installed: run \`${ADD_GGUF_COMMAND}\``);
    return;
  }
  const prompt = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await prompt.question(`${modelId} runs on the GGUF runtime, which is not installed. Install it now (node-llama-cpp ${NODE_LLAMA_CPP_VERSION}, with npm)? [Y/n] `);
    if (/^\s*(y(es)?)?\s*$/i.test(answer)) await addGgufRuntime(runtimesDir, null);
    else console.error(`not installed; \`${ADD_GGUF_COMMAND}\` installs it later`);
  } finally {
    prompt.close();
  }
}

export function registerRuntimesCommands(program: Command): void {
  const runtimes = program.command('runtimes').description('in-process runtimes installed on demand (runtimes.dir, SLUICE_RUNTIMES_DIR)');
  runtimes
    .command('add')
    .argument('<runtime>', 'the runtime to install: gguf (llama.cpp through node-llama-cpp)')
    .description(`install a runtime with npm into runtimes.dir (default: <data_dir>/runtimes); gguf installs node-llama-cpp ${NODE_LLAMA_CPP_VERSION} and this platform's CPU build`)
    .addOption(new Option('--gpu <kind>', 'also install that GPU build').choices([...GGUF_GPUS]))
    .action(async (runtime: string, options: { gpu?: GgufGpu }) => {
      if (runtime !== 'gguf') throw new AppError('invalid_request', `unknown runtime ${runtime}; the one runtime installed on demand is gguf`);
      await addGgufRuntime(loadConfig().runtimes.dir, options.gpu ?? null);
    });
}
